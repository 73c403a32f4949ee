// BatchNorm over a batch's real rows: the op's gradients against finite differences (training: through the
// statistics; evaluation: fixed statistics), PyTorch's BatchNorm1d numbers computed by hand, padding that never
// changes a real row (values and gradients, bit for bit), the same bits for 1 and 2 threads, and the running
// statistics: updated in training, used in evaluation, cloned, kept in checkpoints and left alone by optimizers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "GradCheck.h"
#include "gnn/io/Checkpoint.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/norm/BatchNorm.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using testing::expectGradientsMatch;
using testing::randomTensor;

Tensor maskOf(const std::vector<uint8_t>& m) { return Tensor::fromVector<uint8_t>(m, {static_cast<int64_t>(m.size())}); }

TEST(MaskedBatchNorm, GradientsThroughTheStatistics) {
  // Rows 2 and 5 are padding: normalised with the real rows' statistics, which they do not enter; their outputs
  // still depend on the real rows (the projection weighs every row, so that path is checked too).
  const Tensor mask = maskOf({1, 1, 0, 1, 1, 0, 1});
  Tensor x = randomTensor({7, 4}, 1), gamma = randomTensor({4}, 2), beta = randomTensor({4}, 3);
  double worst = expectGradientsMatch(
      [&](const std::vector<Variable>& in) { return maskedBatchNorm(in[0], mask, in[1], in[2], 1e-5); },
      {x, gamma, beta});
  EXPECT_LE(worst, 1e-6);
  // Every row real (no mask), and a fused ReLU after it.
  worst = expectGradientsMatch(
      [&](const std::vector<Variable>& in) { return relu(maskedBatchNorm(in[0], Tensor(), in[1], in[2], 1e-5)); },
      {x, gamma, beta});
  EXPECT_LE(worst, 1e-6);
}

TEST(MaskedBatchNorm, InferenceGradients) {
  Tensor mean = randomTensor({4}, 4), var = Tensor::full({4}, 0.7, DType::F64);
  Tensor x = randomTensor({5, 4}, 5), gamma = randomTensor({4}, 6), beta = randomTensor({4}, 7);
  double worst = expectGradientsMatch(
      [&](const std::vector<Variable>& in) { return batchNormInference(in[0], mean, var, in[1], in[2], 1e-5); },
      {x, gamma, beta});
  EXPECT_LE(worst, 1e-6);
}

TEST(MaskedBatchNorm, MatchesBatchNorm1dByHand) {
  // torch.nn.BatchNorm1d in training: (x - mean) / sqrt(biased var + eps) * gamma + beta over the real rows.
  Tensor x = Tensor::fromVector<double>({1, 10, 2, -4, 100, 7, 5, 2}, {4, 2});
  Tensor mask = maskOf({1, 1, 0, 1});
  Variable gamma(Tensor::fromVector<double>({2, 0.5}, {2})), beta(Tensor::fromVector<double>({0.25, -1}, {2}));
  Tensor mean, var;
  Tensor y = maskedBatchNorm(Variable(x), mask, gamma, beta, 1e-5, &mean, &var).value();
  const double m0 = (1 + 2 + 5) / 3.0, m1 = (10 - 4 + 2) / 3.0;
  const double v0 = ((1 - m0) * (1 - m0) + (2 - m0) * (2 - m0) + (5 - m0) * (5 - m0)) / 3;
  const double v1 = ((10 - m1) * (10 - m1) + (-4 - m1) * (-4 - m1) + (2 - m1) * (2 - m1)) / 3;
  EXPECT_NEAR(mean.at(0), m0, 1e-12);
  EXPECT_NEAR(var.at(1), v1, 1e-12);
  const double xs[4][2] = {{1, 10}, {2, -4}, {100, 7}, {5, 2}};
  for (int i = 0; i < 4; ++i) {  // the padding row (2) too, with the real rows' statistics
    EXPECT_NEAR(y.at(2 * i), (xs[i][0] - m0) / std::sqrt(v0 + 1e-5) * 2 + 0.25, 1e-12) << i;
    EXPECT_NEAR(y.at(2 * i + 1), (xs[i][1] - m1) / std::sqrt(v1 + 1e-5) * 0.5 - 1, 1e-12) << i;
  }
}

TEST(MaskedBatchNorm, PaddingChangesNoRealRowBitForBit) {
  // 300 real rows (several row chunks), then 0, 7 or 700 padding rows of huge values: the real rows' outputs
  // and the gradients (padding rows get none, as in a model) are the same bits.
  for (DType dt : {DType::F32, DType::F64}) {
    Generator g(9);
    Tensor real = init::uniform({300, 24}, -3, 3, g, dt);
    Tensor gamma = init::uniform({24}, 0.5, 1.5, g, dt), beta = init::uniform({24}, -1, 1, g, dt);
    Tensor r = init::uniform({300, 24}, -1, 1, g, dt);
    std::vector<Tensor> ref;
    for (int64_t pad : {0, 7, 700}) {
      Tensor x = Tensor::full({300 + pad, 24}, 1e6, dt), proj({300 + pad, 24}, dt);
      std::vector<uint8_t> m(static_cast<size_t>(300 + pad), 0);
      std::fill(m.begin(), m.begin() + 300, 1);
      std::memcpy(x.raw(), real.raw(), real.nbytes());
      std::memcpy(proj.raw(), r.raw(), r.nbytes());
      Variable xv(x, true), gv(gamma.clone(), true), bv(beta.clone(), true);
      Variable y = maskedBatchNorm(xv, maskOf(m), gv, bv);
      sum(mul(y, Variable(proj))).backward();
      std::vector<Tensor> got = {y.value(), xv.grad(), gv.grad(), bv.grad()};
      if (ref.empty()) {
        ref = got;
        continue;
      }
      for (size_t k = 0; k < got.size(); ++k) {
        const Tensor& a = got[k];
        const Tensor& b = ref[k];
        const int64_t n = b.numel();  // the real rows (or the whole parameter gradient)
        EXPECT_EQ(std::memcmp(a.raw(), b.raw(), static_cast<size_t>(n) * dtypeSize(dt)), 0)
            << dtypeName(dt) << " padding " << pad << " output " << k;
      }
    }
  }
}

TEST(MaskedBatchNorm, OneAndTwoThreadsGiveTheSameBits) {
  auto run = [] {
    Generator g(3);
    Variable x(init::uniform({3000, 64}, -2, 2, g), true), gamma(init::uniform({64}, 0.5, 1.5, g), true),
        beta(init::uniform({64}, -1, 1, g), true);
    std::vector<uint8_t> m(3000, 1);
    for (size_t i = 2500; i < m.size(); ++i) m[i] = 0;
    Variable y = maskedBatchNorm(x, maskOf(m), gamma, beta);
    mean(mul(y, y)).backward();
    return std::vector<Tensor>{y.value(), x.grad(), gamma.grad(), beta.grad()};
  };
  setNumThreads(1);
  auto one = run();
  setNumThreads(2);
  auto two = run();
  setNumThreads(0);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(one[i].bitEqual(two[i])) << "output " << i;
}

TEST(MaskedBatchNorm, RefusesBadInputs) {
  Variable x(Tensor({4, 3})), g(Tensor::full({3}, 1.0)), b(Tensor({3}));
  EXPECT_THROW(maskedBatchNorm(x, maskOf({1, 1, 1}), g, b), std::invalid_argument);     // mask of 3 rows
  EXPECT_THROW(maskedBatchNorm(x, Tensor({4}), g, b), std::invalid_argument);           // float mask
  EXPECT_THROW(maskedBatchNorm(x, Tensor(), Variable(Tensor({2})), b), std::invalid_argument);
  EXPECT_THROW(batchNormInference(x, Tensor({2}), Tensor({3}), g, b), std::invalid_argument);
}

// PyTorch's running averages: momentum 0.1, the unbiased variance (n / (n - 1)) of the real rows.
TEST(BatchNorm, RunningStatisticsAsPyTorch) {
  BatchNorm bn(2, 1e-5, 0.1, DType::F64);
  Tensor x = Tensor::fromVector<double>({1, 10, 2, -4, 100, 7, 5, 2}, {4, 2});
  Tensor mask = maskOf({1, 1, 0, 1});
  bn.forward(Variable(x), mask);
  const double m0 = 8.0 / 3, v0 = ((1 - m0) * (1 - m0) + (2 - m0) * (2 - m0) + (5 - m0) * (5 - m0)) / 2;
  EXPECT_NEAR(bn.runningMean().at(0), 0.1 * m0, 1e-12);
  EXPECT_NEAR(bn.runningVar().at(0), 0.9 + 0.1 * v0, 1e-12);
  bn.forward(Variable(x), mask);
  EXPECT_NEAR(bn.runningMean().at(0), 0.9 * 0.1 * m0 + 0.1 * m0, 1e-12);
  // Evaluation: the running statistics, whatever the batch.
  bn.eval();
  const Tensor rm = bn.runningMean().clone(), rv = bn.runningVar().clone();
  Tensor y = bn.forward(Variable(x), mask).value();
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(y.at(2 * i), (x.at(2 * i) - rm.at(0)) / std::sqrt(rv.at(0) + 1e-5), 1e-12);
  EXPECT_TRUE(bn.runningMean().bitEqual(rm)) << "evaluation must not update the running mean";
  // No real row: the running statistics stay.
  bn.train();
  bn.forward(Variable(x), maskOf({0, 0, 0, 0}));
  EXPECT_TRUE(bn.runningMean().bitEqual(rm));
}

// A recomputed forward (device/StageTask.cpp, --recompute) normalises with the batch's statistics, as the
// first run did, but leaves the running averages as that run left them.
TEST(BatchNorm, ARecomputedForwardLeavesTheRunningStatistics) {
  BatchNorm bn(2, 1e-5, 0.1, DType::F64);
  Tensor x = Tensor::fromVector<double>({1, 10, 2, -4, 100, 7, 5, 2}, {4, 2});
  Tensor mask = maskOf({1, 1, 0, 1});
  const Tensor first = bn.forward(Variable(x), mask).value();
  const Tensor rm = bn.runningMean().clone(), rv = bn.runningVar().clone();
  ExecutionContext ctx;
  ctx.setRecomputing(true);
  {
    ContextScope use(ctx);
    EXPECT_TRUE(bn.forward(Variable(x), mask).value().bitEqual(first));
  }
  EXPECT_TRUE(bn.runningMean().bitEqual(rm));
  EXPECT_TRUE(bn.runningVar().bitEqual(rv));
  bn.forward(Variable(x), mask);  // not recomputing: updated again
  EXPECT_FALSE(bn.runningMean().bitEqual(rm));
}

// A batch with a non-finite value (a diverged step, which the trainer stops on) leaves the running averages.
TEST(BatchNorm, ANonFiniteBatchLeavesTheRunningStatistics) {
  BatchNorm bn(2, 1e-5, 0.1, DType::F64);
  Tensor x = Tensor::fromVector<double>({1, 10, 2, -4, 100, 7, 5, 2}, {4, 2});
  bn.forward(Variable(x), Tensor());
  const Tensor rm = bn.runningMean().clone(), rv = bn.runningVar().clone();
  x.data<double>()[3] = std::nan("");
  bn.forward(Variable(x), Tensor());
  EXPECT_TRUE(bn.runningMean().bitEqual(rm));
  EXPECT_TRUE(bn.runningVar().bitEqual(rv));
}

// Frozen (a frozen encoder's: its weight takes no gradient), training normalises with the running statistics and
// keeps them, as evaluation does.
TEST(BatchNorm, AFrozenLayerIsItsEvaluationFunction) {
  BatchNorm bn(2, 1e-5, 0.1, DType::F64);
  Tensor x = Tensor::fromVector<double>({1, 10, 2, -4, 100, 7, 5, 2}, {4, 2});
  Tensor mask = maskOf({1, 1, 0, 1});
  bn.forward(Variable(x), mask);
  const Tensor rm = bn.runningMean().clone();
  bn.eval();
  const Tensor evaluated = bn.forward(Variable(x), mask).value();
  bn.train();
  for (auto& [name, v] : bn.namedParameters()) v.setRequiresGrad(false);
  EXPECT_TRUE(bn.forward(Variable(x), mask).value().bitEqual(evaluated));
  EXPECT_TRUE(bn.runningMean().bitEqual(rm));
}

TEST(BatchNorm, BuffersAreClonedCheckpointedAndNotTrained) {
  BatchNorm bn(3);
  Generator g(4);
  Variable x(init::uniform({6, 3}, -1, 1, g));
  Adam opt({{bn.parameters(), 0.01}}, 0.1);
  for (int step = 0; step < 3; ++step) {
    opt.zeroGrad();
    sum(bn.forward(x, Tensor())).backward();
    const Tensor before = bn.runningMean().clone();
    opt.step();  // weight decay and Adam leave the buffers alone: they have no gradient
    EXPECT_TRUE(bn.runningMean().bitEqual(before));
  }
  auto names = bn.namedParameters();
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[2].first, "running_mean");
  EXPECT_FALSE(names[2].second.requiresGrad());
  std::unique_ptr<BatchNorm> copy = cloneModule(bn);
  EXPECT_TRUE(copy->runningVar().bitEqual(bn.runningVar()));
  const std::string path = (std::filesystem::temp_directory_path() / "gnn_batchnorm_test.ckpt").string();
  Checkpoint ck;
  ck.addModule("bn", bn);
  ck.save(path);
  BatchNorm fresh(3);
  Checkpoint::load(path).loadModule("bn", fresh);
  std::filesystem::remove(path);
  EXPECT_TRUE(fresh.runningMean().bitEqual(bn.runningMean()));
  EXPECT_TRUE(fresh.runningVar().bitEqual(bn.runningVar()));
  bn.eval();
  fresh.eval();
  EXPECT_TRUE(fresh.forward(x, Tensor()).value().bitEqual(bn.forward(x, Tensor()).value()));
}

}  // namespace
}  // namespace gnn
