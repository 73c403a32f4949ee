// Isotonic regression (pool-adjacent-violators) against fits computed by hand, and its interpolation as
// sklearn's IsotonicRegression(out_of_bounds="clip") predicts.
#include <gtest/gtest.h>

#include <stdexcept>

#include "gnn/metrics/Calibration.h"

namespace gnn {
namespace {

TEST(IsotonicRegression, PoolsAdjacentViolatorsByHand) {
  // Labels 0 1 0 1 1 at 0.1 .. 0.5: the violating pair (1, 0) pools to 0.5 each.
  const IsotonicFit f = isotonicRegression({0.3, 0.1, 0.5, 0.2, 0.4}, {0, 0, 1, 1, 1});
  EXPECT_EQ(f.x, (std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5}));
  EXPECT_EQ(f.y, (std::vector<double>{0, 0.5, 0.5, 1, 1}));
  EXPECT_DOUBLE_EQ(f(0.15), 0.25);  // halfway between 0 and 0.5
  EXPECT_DOUBLE_EQ(f(0.25), 0.5);
  EXPECT_DOUBLE_EQ(f(0.35), 0.75);
  EXPECT_DOUBLE_EQ(f(0.2), 0.5);
  EXPECT_EQ(f(0.0), 0.0);  // clipped to the first threshold
  EXPECT_EQ(f(0.9), 1.0);  // and to the last
}

TEST(IsotonicRegression, PoolsBackwardsAcrossBlocksAndTrimsFlatPoints) {
  // Labels 1 1 0 0 0 1: the non-increasing run of the first five pools to 2/5; the flat interior points are
  // dropped.
  const IsotonicFit f = isotonicRegression({1, 2, 3, 4, 5, 6}, {1, 1, 0, 0, 0, 1});
  EXPECT_EQ(f.x, (std::vector<double>{1, 5, 6}));
  EXPECT_EQ(f.y, (std::vector<double>{0.4, 0.4, 1}));
  EXPECT_DOUBLE_EQ(f(3), 0.4);
  EXPECT_DOUBLE_EQ(f(5.5), 0.7);
  // Labels 0 1 1 0: the last three pool to 2/3, then the scan steps back to the block before (0 < 2/3: kept).
  const IsotonicFit g = isotonicRegression({1, 2, 3, 4}, {0, 1, 1, 0});
  EXPECT_EQ(g.x, (std::vector<double>{1, 2, 4}));
  ASSERT_EQ(g.y.size(), 3u);
  EXPECT_EQ(g.y[0], 0.0);
  EXPECT_DOUBLE_EQ(g.y[1], 2.0 / 3);
  EXPECT_DOUBLE_EQ(g.y[2], 2.0 / 3);
}

TEST(IsotonicRegression, TiedValuesBecomeOneWeightedPoint) {
  // Three rows at 0.5 (labels 1, 0, 0) are one point of weight 3 and mean 1/3; with 0.2 -> 1 before it, the
  // fit pools both: (1 + 1) / 4.
  const IsotonicFit f = isotonicRegression({0.5, 0.2, 0.5, 0.5, 0.9}, {1, 1, 0, 0, 1});
  EXPECT_EQ(f.x, (std::vector<double>{0.2, 0.5, 0.9}));
  EXPECT_EQ(f.y, (std::vector<double>{0.5, 0.5, 1}));
}

TEST(IsotonicRegression, DegenerateInputs) {
  const IsotonicFit none = isotonicRegression({}, {});
  EXPECT_EQ(none(0.3), 0.3);  // no labelled row: the identity
  const IsotonicFit one = isotonicRegression({0.4, 0.4}, {1, 0});
  EXPECT_EQ(one(0.1), 0.5);  // one distinct value: a constant
  EXPECT_EQ(one(0.9), 0.5);
  EXPECT_THROW(isotonicRegression({0.1}, {1, 0}), std::invalid_argument);
  // Already increasing: every point kept, predictions at the thresholds are the labels.
  const IsotonicFit inc = isotonicRegression({0.1, 0.6, 0.8}, {0, 0.5, 1});
  EXPECT_EQ(inc(0.6), 0.5);
}

}  // namespace
}  // namespace gnn
