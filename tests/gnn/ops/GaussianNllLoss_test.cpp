// The mean-variance head's Gaussian NLL: values by hand, masks, and gradients against finite differences.
#include "gnn/ops/GaussianNllLoss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "GradCheck.h"

namespace gnn {
namespace {
using testing::expectGradientsMatch;
using testing::randomTensor;
using V = std::vector<Variable>;

constexpr double kPi = 3.14159265358979323846;

TEST(GaussianNllLoss, VarianceIsSoftplusPlusFloor) {
  EXPECT_NEAR(mveVariance(0), std::log(2.0) + kMveVarianceFloor, 1e-15);
  EXPECT_NEAR(mveVariance(3), 3 + std::log1p(std::exp(-3.0)) + kMveVarianceFloor, 1e-15);
  EXPECT_NEAR(mveVariance(-40), std::exp(-40.0) + kMveVarianceFloor, 1e-20);
  EXPECT_EQ(mveVariance(-1000), kMveVarianceFloor);  // softplus underflows; the floor keeps log(v) finite
}

TEST(GaussianNllLoss, ValuesByHandWithMask) {
  // Two molecules, two targets: [mu_0, mu_1, raw_0, raw_1]. The raw variances are chosen so that softplus gives
  // v = 1 and v = 4 exactly up to the floor: raw = log(e^v - 1).
  const double r1 = std::log(std::exp(1.0) - 1), r4 = std::log(std::exp(4.0) - 1);
  Tensor out = Tensor::fromVector<double>({0.5, 2.0, r1, r4, -1.0, 0.0, r4, r1}, {2, 4});
  Tensor y = Tensor::fromVector<double>({1.5, 0.0, 1.0, 7.0}, {2, 2});
  auto term = [](double r, double v) {
    v += kMveVarianceFloor;
    return r * r / (2 * v) + std::log(2 * kPi * v) / 2;
  };
  NoGradGuard ng;
  const double all = (term(1, 1) + term(2, 4) + term(2, 4) + term(7, 1)) / 4;
  EXPECT_NEAR(gaussianNllLoss(Variable(out), y).value().item(), all, 1e-12);
  // Element mask: the second molecule's second target unlabelled.
  Tensor mask = Tensor::fromVector<uint8_t>({1, 1, 1, 0}, {2, 2});
  EXPECT_NEAR(gaussianNllLoss(Variable(out), y, mask).value().item(), (term(1, 1) + term(2, 4) + term(2, 4)) / 3,
              1e-12);
  // Row mask: the padding molecule counts for nothing; nothing counted: 0.
  EXPECT_NEAR(gaussianNllLoss(Variable(out), y, Tensor::fromVector<uint8_t>({1, 0})).value().item(),
              (term(1, 1) + term(2, 4)) / 2, 1e-12);
  EXPECT_EQ(gaussianNllLoss(Variable(out), y, Tensor::fromVector<uint8_t>({0, 0})).value().item(), 0.0);
}

TEST(GaussianNllLoss, RefusesAnOutputThatIsNotTwoPerTarget) {
  Tensor y = Tensor::zeros({3, 2}, DType::F64);
  EXPECT_THROW(gaussianNllLoss(Variable(Tensor::zeros({3, 2}, DType::F64)), y), std::invalid_argument);
  EXPECT_THROW(gaussianNllLoss(Variable(Tensor::zeros({2, 4}, DType::F64)), y), std::invalid_argument);
  EXPECT_THROW(gaussianNllLoss(Variable(Tensor::zeros({3, 4}, DType::F64)), y, Tensor::zeros({5}, DType::U8)),
               std::invalid_argument);
}

TEST(GradCheck, GaussianNllLoss) {
  Tensor y = randomTensor({5, 3}, 31);
  Tensor mask = Tensor::fromVector<uint8_t>({1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1}, {5, 3});
  expectGradientsMatch([&](const V& v) { return gaussianNllLoss(v[0], y); }, {randomTensor({5, 6}, 32)});
  expectGradientsMatch([&](const V& v) { return gaussianNllLoss(v[0], y, mask); }, {randomTensor({5, 6}, 33)});
  // Large raw variances (softplus ~ identity) and very negative ones (the sigmoid factor tiny).
  Tensor wide = randomTensor({5, 6}, 34);
  for (int64_t i = 0; i < 5; ++i) wide.matrix<double>()(i, 3 + i % 3) = i % 2 ? 6.0 : -6.0;
  expectGradientsMatch([&](const V& v) { return gaussianNllLoss(v[0], y); }, {wide});
}

TEST(GaussianNllLoss, Float32MatchesFloat64) {
  Tensor out = randomTensor({7, 4}, 41), y = randomTensor({7, 2}, 42);
  NoGradGuard ng;
  const double f64 = gaussianNllLoss(Variable(out), y).value().item();
  const double f32 = gaussianNllLoss(Variable(out.to(DType::F32)), y.to(DType::F32)).value().item();
  EXPECT_NEAR(f32, f64, 1e-5);
}

}  // namespace
}  // namespace gnn
