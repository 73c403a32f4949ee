// Optimizers and schedules against hand-computed updates (PyTorch's formulas).
#include <gtest/gtest.h>

#include <cmath>

#include "gnn/LrSchedule.h"
#include "gnn/Optimizer.h"

namespace gnn {
namespace {

Variable param(std::vector<double> v) { return Variable(Tensor::fromVector(v), true); }
void setGrad(Variable& p, std::vector<double> g) {
  p.zeroGrad();
  p.addGrad(Tensor::fromVector(g));
}

TEST(Adam, MatchesReferenceWithL2) {
  Variable p = param({1.0, -2.0});
  Adam opt({{{p}, 0.1}}, 0.01);
  double m[2] = {0, 0}, v[2] = {0, 0}, w[2] = {1.0, -2.0};
  double grads[3][2] = {{0.5, -1.0}, {0.2, 0.3}, {-0.7, 0.1}};
  for (int t = 1; t <= 3; ++t) {
    setGrad(p, {grads[t - 1][0], grads[t - 1][1]});
    opt.step();
    for (int i = 0; i < 2; ++i) {
      double g = grads[t - 1][i] + 0.1 * w[i];
      m[i] = 0.9 * m[i] + 0.1 * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.999, t));
      w[i] -= 0.01 * mh / (std::sqrt(vh) + 1e-8);
    }
  }
  EXPECT_NEAR(p.value().at(0), w[0], 1e-12);
  EXPECT_NEAR(p.value().at(1), w[1], 1e-12);
}

TEST(AdamW, DecouplesWeightDecay) {
  Variable p = param({1.0}), q = param({1.0});
  AdamW decoupled({{{p}, 0.5}}, 0.1);
  Adam coupled({{{q}, 0.5}}, 0.1);
  setGrad(p, {0.0});
  setGrad(q, {0.0});
  decoupled.step();
  coupled.step();
  // AdamW: w *= (1 - lr wd) and a zero gradient leaves the Adam part at 0.
  EXPECT_NEAR(p.value().at(0), 1.0 - 0.1 * 0.5, 1e-12);
  // Adam: the decay enters as gradient 0.5, whose normalised first step is ~lr.
  EXPECT_NEAR(q.value().at(0), 1.0 - 0.1, 1e-6);
}

TEST(SGD, MomentumAndWeightDecay) {
  Variable p = param({1.0});
  SGD opt({{{p}, 0.1}}, 0.5, 0.9);
  setGrad(p, {1.0});
  opt.step();  // d = 1 + 0.1 = 1.1, buf = 1.1, w = 1 - 0.55
  EXPECT_NEAR(p.value().at(0), 0.45, 1e-12);
  setGrad(p, {1.0});
  opt.step();  // d = 1 + 0.045, buf = 0.99 + 1.045 = 2.035, w = 0.45 - 1.0175
  EXPECT_NEAR(p.value().at(0), 0.45 - 0.5 * 2.035, 1e-12);
}

TEST(Optimizer, ParametersWithoutGradientsAreLeftAlone) {
  Variable p = param({3.0});
  Adam opt({{{p}, 0.1}}, 0.1);
  opt.step();
  EXPECT_EQ(p.value().at(0), 3.0);
}

TEST(Optimizer, StateRoundTrip) {
  Variable p = param({1.0, 2.0}), q = param({1.0, 2.0});
  Adam a({{{p}, 0.0}}, 0.01), b({{{q}, 0.0}}, 0.01);
  setGrad(p, {0.3, -0.1});
  a.step();
  b.loadState(a.state());
  q.value() = p.value().clone();
  setGrad(p, {0.2, 0.2});
  setGrad(q, {0.2, 0.2});
  a.step();
  b.step();
  EXPECT_TRUE(p.value().bitEqual(q.value()));
  EXPECT_EQ(b.stepCount(), 2);
}

TEST(LrSchedule, Shapes) {
  StepLr step(10, 0.5);
  EXPECT_DOUBLE_EQ(step.factor(9), 1.0);
  EXPECT_DOUBLE_EQ(step.factor(10), 0.5);
  EXPECT_DOUBLE_EQ(step.factor(25), 0.25);
  CosineLr cos(100, 0.1);
  EXPECT_DOUBLE_EQ(cos.factor(0), 1.0);
  EXPECT_NEAR(cos.factor(50), 0.55, 1e-12);
  EXPECT_NEAR(cos.factor(100), 0.1, 1e-12);
  WarmupLinearLr wl(10, 110, 0.0);
  EXPECT_DOUBLE_EQ(wl.factor(0), 0.1);
  EXPECT_DOUBLE_EQ(wl.factor(9), 1.0);
  EXPECT_DOUBLE_EQ(wl.factor(60), 0.5);
  EXPECT_DOUBLE_EQ(wl.factor(200), 0.0);
  Variable p = param({1.0});
  SGD opt({{{p}, 0.0}}, 1.0);
  step.apply(opt, 0.2, 10);
  EXPECT_DOUBLE_EQ(opt.lr(), 0.1);
}

}  // namespace
}  // namespace gnn
