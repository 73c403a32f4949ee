// gradNorm / clipGradNorm: the norm against a long-double sum by hand, clipping to the maximum, the first
// non-finite gradient named, a gradient shared by two parameters scaled once, and the same bits for 1 and 2
// threads on tensors of several pieces with odd lengths.
#include "gnn/optim/GradNorm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gnn/nn/Init.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

std::vector<Tensor> someGradients(uint64_t seed) {
  Generator g(seed);
  // 70,001 elements: several of the sum's pieces and a ragged end; the others one piece or less.
  return {init::uniform({70001}, -1, 1, g), Tensor(), init::uniform({37, 5}, -2, 2, g),
          init::uniform({3}, -1, 1, g).to(DType::F64)};
}

long double byHand(const std::vector<Tensor>& grads) {
  long double s = 0;
  for (const Tensor& t : grads) {
    if (!t.defined()) continue;
    const Tensor d = t.to(DType::F64);
    for (int64_t i = 0; i < d.numel(); ++i) s += static_cast<long double>(d.data<double>()[i]) * d.data<double>()[i];
  }
  return std::sqrt(s);
}

TEST(GradNorm, IsTheL2NormOfAllGradients) {
  const std::vector<Tensor> grads = someGradients(3);
  GradNormResult r = gradNorm(grads);
  EXPECT_NEAR(r.norm, static_cast<double>(byHand(grads)), 1e-12 * r.norm);
  EXPECT_FALSE(r.clipped);
  EXPECT_EQ(r.firstNonFinite, -1);
}

TEST(GradNorm, ClippingScalesToTheMaximum) {
  std::vector<Tensor> grads = someGradients(4);
  const double before = gradNorm(grads).norm;
  GradNormResult r = clipGradNorm(grads, 2.5);
  EXPECT_TRUE(r.clipped);
  EXPECT_DOUBLE_EQ(r.norm, before);
  EXPECT_NEAR(gradNorm(grads).norm, 2.5, 1e-5);
  GradNormResult again = clipGradNorm(grads, 100.0);  // under the maximum: unchanged
  EXPECT_FALSE(again.clipped);
}

TEST(GradNorm, ASharedGradientIsScaledOnce) {
  Generator g(5);
  Tensor shared = init::uniform({100}, -1, 1, g);
  std::vector<Tensor> grads{shared, shared};
  const float first = shared.data<float>()[0];
  GradNormResult r = clipGradNorm(grads, 0.1);
  ASSERT_TRUE(r.clipped);
  const double scale = 0.1 / (r.norm + 1e-6);
  EXPECT_FLOAT_EQ(grads[0].data<float>()[0], static_cast<float>(first * scale));
  EXPECT_FLOAT_EQ(grads[1].data<float>()[0], static_cast<float>(first * scale));
}

TEST(GradNorm, NamesTheFirstNonFiniteGradient) {
  std::vector<Tensor> grads = someGradients(6);
  grads[2].data<float>()[17] = std::numeric_limits<float>::quiet_NaN();
  grads[3].data<double>()[1] = std::numeric_limits<double>::infinity();
  GradNormResult r = clipGradNorm(grads, 1.0);
  EXPECT_EQ(r.firstNonFinite, 2);
  EXPECT_FALSE(std::isfinite(r.norm));
  EXPECT_FALSE(r.clipped);
  EXPECT_EQ(grads[0].data<float>()[0], someGradients(6)[0].data<float>()[0]) << "a non-finite norm scales nothing";
}

TEST(GradNorm, OneAndTwoThreadsGiveTheSameBits) {
  const std::vector<Tensor> grads = someGradients(7);
  setNumThreads(1);
  const double one = gradNorm(grads).norm;
  setNumThreads(2);
  const double two = gradNorm(grads).norm;
  setNumThreads(0);
  EXPECT_EQ(one, two);
}

}  // namespace
}  // namespace gnn
