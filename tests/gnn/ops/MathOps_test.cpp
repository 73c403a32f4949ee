// Elementwise math and axis reductions: values, behaviour outside the domain, what the tape keeps.
// (Gradients against finite differences, float32 and threads: the op table.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "GradCheck.h"

namespace gnn {
namespace {
using testing::randomTensor;

TEST(MathOps, ValuesAreTheCLibrarys) {
  Tensor x = randomTensor({40}, 1);
  x.flat<double>() = x.flat<double>() * 2 + 2.5;  // (0.5, 4.5)
  const Variable v(x);
  for (int64_t i = 0; i < 40; ++i) {
    const double xi = x.at(i);
    EXPECT_EQ(gnn::exp(v).value().at(i), std::exp(xi));
    EXPECT_EQ(gnn::log(v).value().at(i), std::log(xi));
    EXPECT_EQ(gnn::sin(v).value().at(i), std::sin(xi));
    EXPECT_EQ(gnn::cos(v).value().at(i), std::cos(xi));
    EXPECT_EQ(gnn::sqrt(v).value().at(i), std::sqrt(xi));
    EXPECT_EQ(gnn::pow(v, 1.7).value().at(i), std::pow(xi, 1.7));
    EXPECT_EQ(neg(v).value().at(i), -xi);
    EXPECT_EQ(reciprocal(v).value().at(i), 1 / xi);
  }
}

// float32's shifted softplus has its own log1p (a series on (0, 1]): within 2 ulp (and 3 ulp of log 2, where
// the value crosses 0) of log(1 + e^x) - log 2 in long double, across the range, at the extremes and at
// every position of a row (the packet tail).
TEST(MathOps, ShiftedSoftplusFloat32IsWithinTwoUlp) {
  std::vector<float> xs;
  for (int i = -40000; i <= 40000; ++i) xs.push_back(static_cast<float>(i) * 1e-3f);  // [-40, 40]
  for (float x : {-1e30f, -100.0f, -88.0f, -1e-30f, 0.0f, 1e-30f, 88.0f, 100.0f, 1e30f}) xs.push_back(x);
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(-std::numeric_limits<float>::infinity());
  // Where the value crosses 0 it is the difference of two terms near log 2: their rounding, without fused
  // multiply-adds (a build without FMA), is a few ulp of log 2, not of the value.
  const double ulpOfLn2 = std::nextafter(static_cast<float>(M_LN2), 1.0f) - static_cast<float>(M_LN2);
  for (size_t n : {xs.size(), size_t{1}, size_t{7}, size_t{17}}) {
    const Variable y = shiftedSoftplus(Variable(Tensor::fromVector(std::vector<float>(xs.begin(), xs.begin() + n))));
    for (size_t i = 0; i < n; ++i) {
      const long double x = xs[i];
      const long double want = x > 40 ? x - std::log(2.0L) + std::log1p(std::exp(-x))
                                      : std::log1p(std::exp(x)) - std::log(2.0L);
      const float got = y.value().data<float>()[i];
      if (std::isinf(static_cast<double>(want))) {
        EXPECT_EQ(got, static_cast<float>(want)) << "x = " << xs[i];
        continue;
      }
      const double ulp = std::nextafter(std::fabs(static_cast<float>(want)), INFINITY) - std::fabs(static_cast<float>(want));
      EXPECT_LE(std::fabs(static_cast<double>(got - want)), std::max(2 * ulp, 3 * ulpOfLn2)) << "x = " << xs[i];
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(shiftedSoftplus(Variable(Tensor::fromVector(std::vector<float>{nan}))).value().data<float>()[0]));
}

// The backward takes sigmoid(x) from the output (1 - e^-y / 2): within a few 1e-8 of it, never negative, and
// NaN stays NaN (a non-finite gradient must reach the trainer's check).
TEST(MathOps, ShiftedSoftplusFloat32DerivativeFromItsOutput) {
  std::vector<float> xs;
  for (int i = -40000; i <= 40000; ++i) xs.push_back(static_cast<float>(i) * 1e-3f);  // [-40, 40]
  for (float x : {-1e30f, -100.0f, 100.0f, 1e30f}) xs.push_back(x);
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(-std::numeric_limits<float>::infinity());
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  for (size_t n : {xs.size(), size_t{1}, size_t{7}, size_t{17}}) {
    std::vector<float> part(xs.end() - static_cast<std::ptrdiff_t>(n), xs.end());
    Variable x(Tensor::fromVector(part), true);
    shiftedSoftplus(x).backward(Tensor::fromVector(std::vector<float>(n, 3.0f)));
    for (size_t i = 0; i < n; ++i) {
      const float got = x.grad().data<float>()[i];
      if (std::isnan(part[i])) {
        EXPECT_TRUE(std::isnan(got));
        continue;
      }
      const long double want = 3.0L / (1.0L + std::exp(-static_cast<long double>(part[i])));
      EXPECT_GE(got, 0.0f) << "x = " << part[i];
      EXPECT_LE(std::fabs(static_cast<double>(got - want)), 3 * 1.2e-7) << "x = " << part[i];
    }
  }
}

TEST(MathOps, OutsideTheDomainGiveNaNOrInfinityAsPyTorch) {
  Variable x(Tensor::fromVector<double>({-1.0, 0.0, 4.0}), true);
  Tensor l = gnn::log(x).value(), s = gnn::sqrt(x).value();
  EXPECT_TRUE(std::isnan(l.at(0)));
  EXPECT_EQ(l.at(1), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(s.at(0)));
  EXPECT_EQ(s.at(1), 0.0);
  EXPECT_EQ(s.at(2), 2.0);
  // sqrt'(0) = inf, as torch.sqrt's backward.
  gnn::sqrt(x).backward(Tensor::fromVector<double>({1.0, 1.0, 1.0}));
  EXPECT_TRUE(std::isnan(x.grad().at(0)));
  EXPECT_EQ(x.grad().at(1), std::numeric_limits<double>::infinity());
  EXPECT_EQ(x.grad().at(2), 0.25);
  // Negative base, non-integer exponent: NaN; integer exponent: fine.
  EXPECT_TRUE(std::isnan(gnn::pow(x, 0.5).value().at(0)));
  EXPECT_EQ(gnn::pow(x, 3).value().at(0), -1.0);
}

TEST(MathOps, PowZeroHasGradientZeroEverywhere) {
  Variable x(Tensor::fromVector<double>({-2.0, 0.0, 3.0}), true);
  Variable y = gnn::pow(x, 0);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(y.value().at(i), 1.0);
  y.backward(Tensor::fromVector<double>({1.0, 1.0, 1.0}));
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(x.grad().at(i), 0.0);
}

TEST(MathOps, SaveOneTensorOrNone) {
  Variable x(randomTensor({5, 4}, 2), true);
  const int64_t bytes = static_cast<int64_t>(x.value().nbytes());
  for (auto f : {+[](const Variable& v) { return gnn::exp(v); }, +[](const Variable& v) { return gnn::log(v); },
                 +[](const Variable& v) { return gnn::sqrt(v); }, +[](const Variable& v) { return gnn::pow(v, 2.0); },
                 +[](const Variable& v) { return reciprocal(v); }, +[](const Variable& v) { return gnn::sin(v); }}) {
    TapeStats st = tapeStats(f(x));
    EXPECT_EQ(st.savedTensors, 1);
    EXPECT_EQ(st.savedBytes, bytes);
  }
  EXPECT_EQ(tapeStats(neg(x)).savedBytes, 0);
  EXPECT_EQ(tapeStats(sumAxis(x, 0)).savedBytes, 0);
  EXPECT_EQ(tapeStats(meanAxis(x, 1)).savedBytes, 0);
}

TEST(SumAxis, MatchesNaiveSumsForEveryAxisWithAndWithoutKeepDim) {
  const Shape s{3, 4, 5, 6};
  Tensor x = randomTensor(s, 3);
  for (int axis = -4; axis < 4; ++axis) {
    const int ax = axis < 0 ? axis + 4 : axis;
    Tensor y = sumAxis(Variable(x), axis).value();
    Tensor yk = sumAxis(Variable(x), axis, true).value();
    Tensor ym = meanAxis(Variable(x), axis).value();
    Shape want = s;
    want[ax] = 1;
    EXPECT_EQ(yk.shape(), want);
    want.erase(want.begin() + ax);
    EXPECT_EQ(y.shape(), want);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < ax; ++k) outer *= s[k];
    for (int k = ax + 1; k < 4; ++k) inner *= s[k];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double acc = 0;
        for (int64_t a = 0; a < s[ax]; ++a) acc += x.at((o * s[ax] + a) * inner + i);
        EXPECT_EQ(y.at(o * inner + i), acc);  // the same order: the same bits
        EXPECT_EQ(yk.at(o * inner + i), acc);
        EXPECT_EQ(ym.at(o * inner + i), acc / static_cast<double>(s[ax]));
      }
  }
}

TEST(SumAxis, RejectsBadAxesAndEmptyMeans) {
  Variable x(Tensor({2, 3}));
  EXPECT_THROW(sumAxis(x, 2), std::invalid_argument);
  EXPECT_THROW(sumAxis(x, -3), std::invalid_argument);
  EXPECT_THROW(sumAxis(Variable(Tensor::scalar(1)), 0), std::invalid_argument);
  EXPECT_THROW(meanAxis(Variable(Tensor({2, 0})), 1), std::invalid_argument);
  EXPECT_EQ(sumAxis(Variable(Tensor({2, 0})), 1).value().at(1), 0.0);
}

}  // namespace
}  // namespace gnn
