// The uncertainty scores and z-scaling against values computed by hand (and Chemprop's own test cases).
#include "gnn/metrics/Calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace gnn {
namespace {

TEST(Calibration, GaussianNllByHand) {
  // Row 1: error 1, variance 1: 1/2 log(2 pi) + 1/2; row 2: error 0, variance 4: 1/2 log(8 pi).
  EXPECT_NEAR(gaussianNll({0, 1}, {1, 1}, {1, 4}), 1.5155121234846454, 1e-12);
  EXPECT_TRUE(std::isnan(gaussianNll({}, {}, {})));
  EXPECT_THROW(gaussianNll({0}, {1, 2}, {1}), std::invalid_argument);
}

TEST(Calibration, SpearmanByHandWithTies) {
  // No ties: 1 - 6 sum d^2 / (n (n^2 - 1)) = 1 - 12 / 60.
  EXPECT_NEAR(spearman({1, 2, 3, 4}, {1, 3, 2, 4}), 0.8, 1e-12);
  // Ties share their average rank: ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4): 4.5 / sqrt(4.5 * 5).
  EXPECT_NEAR(spearman({1, 2, 2, 3}, {10, 20, 30, 40}), 4.5 / std::sqrt(22.5), 1e-12);
  EXPECT_NEAR(spearman({3, 2, 1}, {1, 2, 3}), -1.0, 1e-12);
  EXPECT_TRUE(std::isnan(spearman({1, 1, 1}, {1, 2, 3})));
  // Variance against |error|: errors (1, 3, 2) ranked as the variances (0.1, 0.9, 0.5).
  EXPECT_NEAR(errorUncertaintySpearman({0, 0, 0}, {1, -3, 2}, {0.1, 0.9, 0.5}), 1.0, 1e-12);
}

TEST(Calibration, IntervalHalfWidthsAreNormalQuantiles) {
  // Phi^-1(0.5 + p / 2) from Python's statistics.NormalDist.
  EXPECT_EQ(centralIntervalHalfWidth(0), 0.0);
  EXPECT_NEAR(centralIntervalHalfWidth(0.25), 0.31863936396437514, 1e-12);
  EXPECT_NEAR(centralIntervalHalfWidth(0.5), 0.6744897501960817, 1e-12);
  EXPECT_NEAR(centralIntervalHalfWidth(0.95), 1.9599639845400536, 1e-12);
  EXPECT_NEAR(centralIntervalHalfWidth(0.99), 2.5758293035489, 1e-11);
  EXPECT_TRUE(std::isinf(centralIntervalHalfWidth(1)));
  EXPECT_THROW(centralIntervalHalfWidth(1.5), std::invalid_argument);
}

TEST(Calibration, MiscalibrationAreaByHand) {
  // Two rows, variance 1, errors 0.5 and 2, four bins: p = 1/4 (half-width 0.319) holds neither row: |0 -
  // 1/4|; p = 1/2 (0.674) holds the first: |1/2 - 1/2|; p = 3/4 (1.150) the first only: |1/2 - 3/4|. (1/4 + 0
  // + 1/4) / 4.
  EXPECT_NEAR(miscalibrationArea({0, 0}, {0.5, -2}, {1, 1}, 4), 0.125, 1e-12);
  // Chemprop's tests (tests/unit/uncertainty/test_evaluators.py): 100 exact predictions of variance 1, and
  // 100 errors of 99 at variance 1, both score 0.495 with 100 bins.
  const std::vector<double> zeros(100, 0.0), ones(100, 1.0), hundreds(100, 100.0);
  EXPECT_NEAR(miscalibrationArea(zeros, zeros, ones), 0.495, 1e-12);
  EXPECT_NEAR(miscalibrationArea(ones, hundreds, ones), 0.495, 1e-12);
}

TEST(Calibration, ZScalingIsTheClosedFormNllMinimum) {
  // Residuals 1 and 2 at variances 1 and 2: s^2 = (1 / 1 + 4 / 2) / 2.
  const std::vector<double> pred = {0, 0}, target = {1, 2}, var = {1, 2};
  const double s2 = zScalingFactor(pred, target, var);
  EXPECT_NEAR(s2, 1.5, 1e-15);
  const double best = gaussianNll(pred, target, scaleVariances(var, s2));
  EXPECT_LT(best, gaussianNll(pred, target, scaleVariances(var, s2 * 0.95)));
  EXPECT_LT(best, gaussianNll(pred, target, scaleVariances(var, s2 * 1.05)));
  // Rows of zero variance have no finite likelihood at any scale: left out of the fit.
  EXPECT_NEAR(zScalingFactor({0, 0, 0}, {1, 2, 5}, {1, 2, 0}), 1.5, 1e-15);
  EXPECT_TRUE(std::isnan(zScalingFactor({0}, {1}, {0})));
}

TEST(Calibration, ZScalingLowersTheAreaOfUnderstatedVariances) {
  // Errors spread as N(0, 2^2) (the normal quantiles of 200 evenly spaced levels) but predicted with variance
  // 1: the intervals are too narrow. z-scaling finds s^2 near 4, after which the area is small.
  std::vector<double> pred, target, var;
  for (int i = 0; i < 200; ++i) {
    const double q = (i + 0.5) / 200;  // the level; its quantile from the central half-width
    const double z = q < 0.5 ? -centralIntervalHalfWidth(1 - 2 * q) : centralIntervalHalfWidth(2 * q - 1);
    pred.push_back(0);
    target.push_back(2 * z);
    var.push_back(1);
  }
  const double s2 = zScalingFactor(pred, target, var);
  EXPECT_NEAR(s2, 4.0, 0.1);
  const double before = miscalibrationArea(pred, target, var),
               after = miscalibrationArea(pred, target, scaleVariances(var, s2));
  EXPECT_GT(before, 0.15);
  EXPECT_LT(after, 0.02);
  EXPECT_LT(gaussianNll(pred, target, scaleVariances(var, s2)), gaussianNll(pred, target, var));
}

TEST(Calibration, PlattScalingByHand) {
  // One positive at logit 1, one negative at -1: Platt's targets are 2/3 and 1/3, so by symmetry b = 0 and
  // sigmoid(a) = 2/3: a = log 2.
  const PlattParameters p = plattScaling({1, -1}, {1, 0});
  EXPECT_NEAR(p.a, std::log(2.0), 1e-9);
  EXPECT_NEAR(p.b, 0.0, 1e-9);
  // Overconfident logits (10x what the labels support) are shrunk: a well below 1; and the fitted point has a
  // zero gradient of the smoothed cross-entropy.
  std::vector<double> z, y;
  for (int i = 0; i < 40; ++i) {
    z.push_back((i % 8 - 3.5) * 4);
    y.push_back(i % 8 >= 4 ? (i % 5 != 0) : (i % 5 == 0));  // 80% of the high logits positive, 20% of the low
  }
  const PlattParameters q = plattScaling(z, y);
  EXPECT_GT(q.a, 0.0);
  EXPECT_LT(q.a, 0.5);
  double pos = 0;
  for (double v : y) pos += v;
  double ga = 0, gb = 0;
  for (size_t i = 0; i < z.size(); ++i) {
    const double t = y[i] > 0.5 ? (pos + 1) / (pos + 2) : 1 / (z.size() - pos + 2);
    const double s = 1 / (1 + std::exp(-(q.a * z[i] + q.b)));
    ga += (s - t) * z[i];
    gb += s - t;
  }
  EXPECT_NEAR(ga, 0.0, 1e-8);
  EXPECT_NEAR(gb, 0.0, 1e-8);
  EXPECT_EQ(plattScaling({}, {}).a, 1.0);
}

TEST(Calibration, BinaryNllByHand) {
  // -(log 0.8 + log(1 - 0.4)) / 2.
  EXPECT_NEAR(binaryNll({0.8, 0.4}, {1, 0}), -(std::log(0.8) + std::log(0.6)) / 2, 1e-15);
  EXPECT_TRUE(std::isnan(binaryNll({}, {})));
}

}  // namespace
}  // namespace gnn
