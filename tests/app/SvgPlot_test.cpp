// app/SvgPlot.h and app/HtmlEscape.h: round ticks, the points a plot promises (non-finite ones left out),
// escaped text, and the refusal of mismatched series.
#include "app/SvgPlot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "app/HtmlEscape.h"

namespace {
using gnn::app::htmlEscape;
using gnn::app::niceTicks;
using gnn::app::SvgPlot;

int64_t count(const std::string& text, const std::string& needle) {
  int64_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(SvgPlot, TicksAreRoundValuesInsideTheRange) {
  const std::vector<double> t = niceTicks(-0.05, 1.05);
  ASSERT_EQ(t.size(), 6u);
  for (size_t k = 0; k < t.size(); ++k) EXPECT_NEAR(t[k], 0.2 * static_cast<double>(k), 1e-12);
  EXPECT_EQ(niceTicks(0.9, 3.1, 6, /*integer=*/true), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(niceTicks(-8.7, -1.2), (std::vector<double>{-8, -6, -4, -2}));
  EXPECT_TRUE(niceTicks(1, 1).empty());
  EXPECT_TRUE(niceTicks(0, NAN).empty());
}

TEST(SvgPlot, CountsTheFinitePointsItDraws) {
  SvgPlot p("Parity <a&b>", "true", "predicted");
  p.addPoints("molecules", {1, 2, NAN, 4}, {1, INFINITY, 3, 4});
  p.addLine("curve", {0, 1, 2}, {0, 1, 4}, /*dashed=*/true);
  p.setEqualAxes();
  p.addDiagonal();
  EXPECT_EQ(p.points(), 2 + 3);
  const std::string svg = p.svg();
  EXPECT_NE(svg.find("data-points=\"5\""), std::string::npos);
  EXPECT_EQ(count(svg, "<circle class=\"pt\""), 2);
  EXPECT_EQ(count(svg, "<polyline class=\"series\""), 1);
  EXPECT_EQ(count(svg, "<line class=\"reference\""), 1);
  EXPECT_NE(svg.find("Parity &lt;a&amp;b&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<a&b>"), std::string::npos);
  EXPECT_THROW(p.addLine("bad", {1, 2}, {1}), std::invalid_argument);
  EXPECT_THROW(p.addPoints("bad", {1}, {}), std::invalid_argument);
}

TEST(HtmlEscape, EscapesMarkupAndControlBytes) {
  EXPECT_EQ(htmlEscape("C(=O)O"), "C(=O)O");
  EXPECT_EQ(htmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(htmlEscape(std::string("x\x01y")), "x&#xFFFD;y");
  EXPECT_EQ(htmlEscape("µ\tm\n"), "µ\tm\n");
}

}  // namespace
