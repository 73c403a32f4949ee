// Lanes' math against the C library in double (exp, tanh), at the edges of float's range, and lanesLoop's tail.
#include "gnn/ops/Lanes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gnn/ops/OpLoops.h"

namespace gnn::ops {
namespace {

// Distance in units in the last place of float at the exact value.
double ulps(float got, double exact) {
  const double ulp = std::max(std::numeric_limits<float>::denorm_min(),
                              std::nextafter(static_cast<float>(std::fabs(exact)), INFINITY) -
                                  static_cast<float>(std::fabs(exact)));
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

std::vector<float> sweep(float lo, float hi, int n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    x[static_cast<size_t>(i)] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n - 1);
  return x;
}

template <class F>
std::vector<float> applyLanes(const std::vector<float>& x, F f) {
  std::vector<float> y(x.size());
  lanesLoop(static_cast<int64_t>(x.size()), f, y.data(), x.data());
  return y;
}

TEST(Lanes, ExpWithinTwoUlpOverFloatsRange) {
  // Normal results from -87.3 to 88.7; below -88.723, e^-88.723 (about 2.9e-39) as Eigen's exp (a softmax's
  // masked or far entries: zero to within float's smallest normal).
  const std::vector<float> x = sweep(-87.3f, 88.7f, 200003);
  const std::vector<float> y = applyLanes(x, [](Lanes v) { return v.exp(); });
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, ulps(y[i], std::exp(static_cast<double>(x[i]))));
  EXPECT_LE(worst, 2.0);
  const std::vector<float> sub = sweep(-103.0f, -88.73f, 1001);
  const std::vector<float> ys = applyLanes(sub, [](Lanes v) { return v.exp(); });
  for (size_t i = 0; i < sub.size(); ++i) {
    EXPECT_GE(ys[i], std::exp(static_cast<double>(sub[i])) * (1 - 1e-6)) << sub[i];
    EXPECT_LE(ys[i], 2.94e-39f) << sub[i];
  }
}

TEST(Lanes, ExpAtTheEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.0f, -0.0f, 1.0f, -inf, inf, std::nanf(""), 100.0f, -200.0f, 88.72f};
  const std::vector<float> y = applyLanes(x, [](Lanes v) { return v.exp(); });
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_NEAR(y[2], std::exp(1.0), 3e-7);
  EXPECT_LT(y[3], 1e-37f);  // as Eigen's: e^-88.7 at most, never negative
  EXPECT_GE(y[3], 0.0f);
  EXPECT_EQ(y[4], inf);
  EXPECT_TRUE(std::isnan(y[5]));
  EXPECT_TRUE(std::isinf(y[6]) || y[6] > 3e38f);
  EXPECT_LT(y[7], 1e-37f);
  EXPECT_NEAR(y[8] / std::exp(static_cast<double>(88.72f)), 1.0, 3e-7);
}

TEST(Lanes, TanhCloseToTheCLibrary) {
  const std::vector<float> x = sweep(-12.0f, 12.0f, 100001);
  const std::vector<float> y = applyLanes(x, [](Lanes v) { return v.tanh(); });
  for (size_t i = 0; i < x.size(); ++i) {
    const double exact = std::tanh(static_cast<double>(x[i]));
    ASSERT_NEAR(y[i], exact, 4e-7 * std::max(1e-3, std::fabs(exact))) << x[i];
  }
  const std::vector<float> odd = applyLanes({std::nanf(""), 1e-5f, -3e-4f}, [](Lanes v) { return v.tanh(); });
  EXPECT_TRUE(std::isnan(odd[0]));
  EXPECT_EQ(odd[1], 1e-5f);
  EXPECT_EQ(odd[2], -3e-4f);
}

TEST(Lanes, ArithmeticWithScalarsOnEitherSide) {
  const std::vector<float> x = {-2.0f, -0.5f, 0.0f, 3.0f};
  const std::vector<float> y =
      applyLanes(x, [](Lanes v) { return (1 - v) * 2 + 1.0 / (3 + v.square()) - v.abs().max(1.0f); });
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = x[i];
    EXPECT_FLOAT_EQ(y[i], (1 - v) * 2 + 1.0f / (3 + v * v) - std::max(std::fabs(v), 1.0f)) << v;
  }
}

TEST(Lanes, EveryElementTakesTheSameCodeWhateverItsPosition) {
  // The tail (n not a multiple of 16) goes through zero-padded Lanes: an element's bits do not depend on where it
  // sits, and the output may be the input.
  std::vector<float> x = sweep(-30.0f, 30.0f, 16 * 7 + 5);
  const std::vector<float> whole = applyLanes(x, [](Lanes v) { return v.exp() * v.tanh(); });
  for (int64_t shift = 1; shift < 16; ++shift) {
    std::vector<float> part(x.begin() + shift, x.end());
    lanesLoop(static_cast<int64_t>(part.size()), [](Lanes v) { return v.exp() * v.tanh(); }, part.data(), part.data());
    for (size_t i = 0; i < part.size(); ++i) ASSERT_EQ(part[i], whole[i + static_cast<size_t>(shift)]) << shift;
  }
}

}  // namespace
}  // namespace gnn::ops
