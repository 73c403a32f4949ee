// Optimizers and schedules against hand-computed updates (PyTorch's formulas).
#include <gtest/gtest.h>

#include <cmath>

#include "gnn/autograd/GradientSink.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/Linear.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/LrSchedule.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/ExecutionContext.h"

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

// Two layers big enough for Adam's parallel pieces (16384 elements), plus a parameter no loss reaches.
struct TwoLayers {
  explicit TwoLayers(Generator& g) : a(200, 100, g), b(100, 3, g), unused(4, 4, g) {}
  std::vector<Variable> parameters() const {
    std::vector<Variable> p = a.parameters();
    for (const auto& v : b.parameters()) p.push_back(v);
    for (const auto& v : unused.parameters()) p.push_back(v);
    return p;
  }
  Variable loss(const Tensor& x) const { return mean(tanh(b.forward(relu(a.forward(Variable(x)))))); }
  Linear a, b, unused;
};

template <class Opt, class... Args>
void expectSinkStepEqualsPlainStep(Args... args) {
  Generator g1(7), g2(7), gx(8);
  TwoLayers plain(g1), sunk(g2);
  Opt optPlain({{plain.parameters(), 0.01}}, args...), optSunk({{sunk.parameters(), 0.01}}, args...);
  for (int s = 0; s < 3; ++s) {
    Tensor x = init::uniform({64, 200}, -1, 1, gx);
    optPlain.zeroGrad();
    plain.loss(x).backward();
    optPlain.step();

    GradientSink sink;
    ExecutionContext ctx;
    ctx.setGradientSink(&sink);
    {
      ContextScope use(ctx);
      sunk.loss(x).backward();
    }
    std::vector<Tensor> grads = sink.grads(optSunk.parameters());
    EXPECT_FALSE(grads.back().defined());  // the unused layer got no gradient
    optSunk.step(grads);
  }
  auto a = plain.parameters(), b = sunk.parameters();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(a[i].value().bitEqual(b[i].value())) << "parameter " << i;
    EXPECT_FALSE(b[i].hasGrad()) << "parameter " << i;  // the sink took every gradient
  }
  EXPECT_EQ(optPlain.stepCount(), optSunk.stepCount());
}

TEST(Optimizer, StepWithSinkGradientsEqualsStepAfterAPlainBackward) {
  expectSinkStepEqualsPlainStep<Adam>(1e-2);
  expectSinkStepEqualsPlainStep<AdamW>(1e-2);
  expectSinkStepEqualsPlainStep<SGD>(0.1, 0.9);
}

TEST(Optimizer, StepWithGradientsChecksThem) {
  Variable p = param({1.0, 2.0}), q = param({3.0});
  SGD opt({{{p}, 0.0}, {{q}, 0.0}}, 0.5);
  EXPECT_THROW(opt.step({Tensor::fromVector<double>({1.0, 1.0})}), std::invalid_argument);  // one missing
  EXPECT_THROW(opt.step({Tensor::fromVector<double>({1.0}), Tensor()}), std::invalid_argument);  // wrong shape
  EXPECT_THROW(opt.step({Tensor::fromVector<float>({1.0f, 1.0f}), Tensor()}), std::invalid_argument);  // dtype
  EXPECT_EQ(opt.stepCount(), 0);
  opt.step({Tensor::fromVector<double>({1.0, -1.0}), Tensor()});
  EXPECT_EQ(p.value().at(0), 0.5);
  EXPECT_EQ(p.value().at(1), 2.5);
  EXPECT_EQ(q.value().at(0), 3.0);  // undefined: no gradient, left alone
  EXPECT_EQ(opt.stepCount(), 1);
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
  // Chemprop's NoamLR with its defaults (1e-4 -> 1e-3 over the warmup, exponentially to 1e-4 at the end).
  NoamLr noam(20, 120);
  EXPECT_DOUBLE_EQ(noam.factor(0), 0.1);
  EXPECT_DOUBLE_EQ(noam.factor(10), 0.55);
  EXPECT_DOUBLE_EQ(noam.factor(20), 1.0);
  EXPECT_NEAR(noam.factor(70), std::sqrt(0.1), 1e-15);
  EXPECT_NEAR(noam.factor(120), 0.1, 1e-15);
  EXPECT_NEAR(noam.factor(400), 0.1, 1e-15);
  Variable p = param({1.0});
  SGD opt({{{p}, 0.0}}, 1.0);
  step.apply(opt, 0.2, 10);
  EXPECT_DOUBLE_EQ(opt.lr(), 0.1);
}

// torch.optim.lr_scheduler.ReduceLROnPlateau(factor=0.5, patience=2, min_lr=0.125) from lr 1 on these metrics
// (torch 1.13, Debian's python3-torch) gave these rates, epoch by epoch: its relative threshold of 1e-4 (0.60005
// is no better than 0.6, 0.89995 than 0.9), more than `patience` bad epochs, the floor.
TEST(LrSchedule, PlateauFollowsTorchsReduceLROnPlateau) {
  struct Case {
    bool higher;
    std::vector<double> metrics, rates;
  };
  const std::vector<Case> cases = {
      {true,
       {0.5, 0.6, 0.6, 0.59, 0.60005, 0.61, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.7, 0.7},
       {1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125}},
      {false,
       {1.0, 0.9, 0.89995, 0.95, 0.9, 0.9, 0.8, -0.1, -0.1, -0.10001, -0.2, -0.2, -0.2, -0.2},
       {1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}}};
  for (const Case& c : cases) {
    PlateauLr::State state;
    PlateauLr plateau(state, 0.5, 2, 0.125, c.higher);
    for (size_t i = 0; i < c.metrics.size(); ++i) {
      plateau.observe(c.metrics[i]);
      EXPECT_DOUBLE_EQ(plateau.factor(0), c.rates[i]) << (c.higher ? "max" : "min") << ", epoch " << i;
    }
  }
  // A NaN metric is no improvement; the state is the caller's, so a second schedule on it continues.
  PlateauLr::State state;
  PlateauLr first(state, 0.1, 0, 0.0, true);
  first.observe(0.5);
  first.observe(NAN);
  EXPECT_DOUBLE_EQ(first.factor(7), 0.1);
  PlateauLr second(state, 0.1, 0, 0.0, true);
  second.observe(0.4);
  EXPECT_NEAR(second.factor(0), 0.01, 1e-15);
  EXPECT_THROW(PlateauLr(state, 1.0, 2, 0.0, true), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
