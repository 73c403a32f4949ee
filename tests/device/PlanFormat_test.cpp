// The plan's one number formatter (device/PlanFormat.h), which every part of the report uses: thousands with
// commas, negative figures included, milliseconds and percentages.
#include "device/PlanFormat.h"

#include <gtest/gtest.h>

namespace gnn::planfmt {
namespace {

TEST(PlanFormat, ThousandsGroupDigitsAndKeepTheSignApart) {
  EXPECT_EQ(thousands(0), "0");
  EXPECT_EQ(thousands(999), "999");
  EXPECT_EQ(thousands(1000), "1,000");
  EXPECT_EQ(thousands(24758.4), "24,758");
  EXPECT_EQ(thousands(1234567), "1,234,567");
  EXPECT_EQ(thousands(-123), "-123");
  EXPECT_EQ(thousands(-1234), "-1,234");
  EXPECT_EQ(thousands(-123456), "-123,456");
}

TEST(PlanFormat, MillisecondsAndPercentages) {
  EXPECT_EQ(ms(0.0012345), "1.234 ms");
  EXPECT_EQ(pct(0.976), "98%");
  EXPECT_EQ(fmt("%.1f", 2.25), "2.2");
}

}  // namespace
}  // namespace gnn::planfmt
