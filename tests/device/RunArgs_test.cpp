// Data one way between a training loop and the device: RunArgs in (seed, learning rates, clipping, checks),
// RunResult::updateResults out, typed exceptions for a request a check stops; and the engine's parts that can be
// tested alone (StageSplit, LossScaler, the options grouped by concern).
#include <gtest/gtest.h>

#include <cmath>

#include "../models/GraphormerMolecules.h"
#include "BitEqual.h"
#include "device/LossScaler.h"
#include "device/SimulatedIpu.h"
#include "device/StageSplit.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/GradNorm.h"
#include "gnn/optim/LrSchedule.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

using test::bitEqual;

// `count` requests of `micro` micro-batches of 3 real graphs (4 slots) each.
std::vector<Batch> requests(int64_t count, int64_t micro) {
  static const std::vector<Graph> graphs = test::pcqmStyle(64, 30);
  std::vector<Batch> out;
  size_t next = 0;
  for (int64_t r = 0; r < count; ++r) {
    std::vector<Batch> parts;
    for (int64_t m = 0; m < micro; ++m, next += 3) {
      FixedSizeOptions o;
      o.numGraphs = 4;
      o.numNodes = 98;
      o.numEdges = 196;
      o.maxNodesPerGraph = 30;
      parts.push_back(FixedSizeCollator(o).collate(
          std::vector<Graph>(graphs.begin() + static_cast<long>(next), graphs.begin() + static_cast<long>(next + 3))));
    }
    out.push_back(micro == 1 ? parts.front() : stackMicroBatches(parts));
  }
  return out;
}

std::unique_ptr<BlockModel> gin() {
  Generator gen(11);
  GraphModelOptions o;
  o.layers = 2;
  o.hidden = 16;
  return std::make_unique<OgbMolGIN>(o, gen);
}

// A model, its SGD and a program of 2 device iterations per request on the simulated IPU.
struct Rig {
  std::unique_ptr<BlockModel> model = gin();
  SGD opt{{{model->parameters(), 0.0}}, 0.05};
  std::unique_ptr<DeviceProgram> program;
  explicit Rig(LossFn loss = {}, int64_t iterations = 2) {
    if (!loss.loss) loss.loss = [](const Variable& out, const Batch& b) { return l1Loss(out, b.y, b.yMask); };
    IpuOptions o;
    o.deviceIterations = iterations;
    program = SimulatedIpu().compile(*model, loss, &opt, microBatch(requests(1, iterations).front(), 0, iterations), o);
  }
  std::vector<Tensor> weights() const {
    std::vector<Tensor> w;
    for (const Variable& p : model->parameters()) w.push_back(p.value().clone());
    return w;
  }
};

TEST(RunArgs, EachUpdateTakesItsScheduledLearningRate) {
  const Batch req = requests(1, 2).front();
  StepLr schedule(1, 0.5);  // step t: 0.1 * 0.5^t
  RunArgs args;
  args.baseLr = 0.1;
  args.schedule = &schedule;
  Rig scheduled;
  const RunResult r = scheduled.program->run(req, args);
  EXPECT_EQ(r.updates, 2);
  EXPECT_DOUBLE_EQ(scheduled.opt.lr(), 0.05);  // the second update's (step 1)
  // The same as setting each update's rate by hand: one update per request at 0.1, then at 0.05.
  Rig byHand(LossFn{}, 1);
  const Batch first = microBatch(req, 0, 2), second = microBatch(req, 1, 2);
  byHand.opt.setLr(0.1);
  byHand.program->run(first);
  byHand.opt.setLr(0.05);
  byHand.program->run(second);
  EXPECT_TRUE(bitEqual(scheduled.weights(), byHand.weights()));
  // Without a base rate the optimizer's own rate is left as it is.
  Rig unset;
  unset.opt.setLr(0.02);
  unset.program->run(req);
  EXPECT_DOUBLE_EQ(unset.opt.lr(), 0.02);
}

TEST(RunArgs, UpdateResultsReportLossSamplesAndGradientNorm) {
  const Batch req = requests(1, 2).front();
  Rig plain, clipped;
  RunArgs check;
  check.checkFinite = true;
  const RunResult a = plain.program->run(req, check);
  ASSERT_EQ(a.updateResults.size(), 2u);
  for (const UpdateResult& u : a.updateResults) {
    EXPECT_EQ(u.samples, 3);
    EXPECT_TRUE(std::isfinite(u.loss));
    EXPECT_GT(u.gradNorm, 0);
    EXPECT_FALSE(u.skipped);
  }
  EXPECT_EQ(a.samples, 6);
  // Clipping to a tenth of the first norm: the same norm is reported (before clipping), the weights differ.
  RunArgs clip = check;
  clip.clipNorm = a.updateResults[0].gradNorm / 10;
  const RunResult b = clipped.program->run(req, clip);
  EXPECT_EQ(b.updateResults[0].gradNorm, a.updateResults[0].gradNorm);
  EXPECT_EQ(b.updateResults[0].loss, a.updateResults[0].loss);
  EXPECT_FALSE(bitEqual(plain.weights(), clipped.weights()));
  // Without clipping or checks the norm is not computed.
  Rig quiet;
  EXPECT_TRUE(std::isnan(quiet.program->run(req).updateResults[0].gradNorm));
}

TEST(RunArgs, ANonFiniteGradientStopsTheRequestBeforeItsUpdate) {
  // sqrt(l - l) is 0 with a NaN gradient: a finite loss whose gradients are not, from the second update on.
  int64_t calls = 0;
  LossFn loss{[&calls](const Variable& out, const Batch& b) {
                Variable l = l1Loss(out, b.y, b.yMask);
                return ++calls > 1 ? add(l, sqrt(sub(l, l))) : l;
              },
              {}};
  Rig run(loss);
  calls = 0;
  RunArgs args;
  args.checkFinite = true;
  try {
    run.program->run(requests(1, 2).front(), args);
    FAIL() << "a NaN gradient was applied";
  } catch (const NonFiniteGradient& e) {
    EXPECT_EQ(e.update(), 1);
    EXPECT_GE(e.parameter(), 0);
    ASSERT_EQ(e.completedUpdates().size(), 1u);  // the first update was applied and is reported
    EXPECT_EQ(e.completedUpdates()[0].samples, 3);
  }
  EXPECT_EQ(run.opt.stepCount(), 1);  // the second was not
}

TEST(RunArgs, AnUpdateThatMakesAWeightNonFiniteStopsTheRequest) {
  Rig run;
  RunArgs args;
  args.baseLr = HUGE_VAL;  // every weight with a gradient becomes infinite or NaN
  args.checkFinite = true;
  try {
    run.program->run(requests(1, 2).front(), args);
    FAIL() << "non-finite weights went unnoticed";
  } catch (const NonFiniteWeights& e) {
    EXPECT_EQ(e.update(), 0);
    EXPECT_EQ(e.parameter(), firstNonFiniteValue(run.model->parameters()));
    EXPECT_TRUE(e.completedUpdates().empty());
  }
  EXPECT_EQ(run.opt.stepCount(), 1);  // the update stays applied
}

TEST(StageSplit, BlocksIntoStageRangesAndLabels) {
  const std::vector<std::string> names{"input", "layers/0", "layers/1", "head"};
  EXPECT_EQ(stageRanges(names, {}), (StageBlocks{{0, 4}}));
  EXPECT_EQ(stageRanges(names, {"layers/1"}), (StageBlocks{{0, 2}, {2, 4}}));
  EXPECT_EQ(stageLabel(names, 0, 2), "input..layers/0");
  EXPECT_EQ(stageLabel(names, 3, 4), "head");
  auto message = [&](const std::vector<std::string>& splits) {
    try {
      stageRanges(names, splits);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"nope"}).find("the model has no block 'nope' (blocks: input, layers/0, layers/1, head)"),
            std::string::npos);
  EXPECT_NE(message({"input"}).find("is the model's first block"), std::string::npos);
  EXPECT_NE(message({"head", "layers/1"}).find("'layers/1' is out of order or repeated"), std::string::npos);
}

TEST(LossScaler, DynamicHalvesOnOverflowAndDoublesAfterGrowthInterval) {
  PrecisionOptions p;  // the scaler takes only the precision options
  p.precision = Precision::FP16;
  p.lossScaling = LossScaling::parse("dynamic:1024");
  p.lossScaling.growthInterval = 2;
  LossScaler s(p, /*training=*/true);
  EXPECT_EQ(s.scale(), 1024);
  EXPECT_TRUE(s.skipUpdate(3));
  EXPECT_EQ(s.scale(), 512);
  EXPECT_FALSE(s.skipUpdate(0));
  s.afterApplied();
  EXPECT_EQ(s.scale(), 512);
  EXPECT_FALSE(s.skipUpdate(0));
  s.afterApplied();
  EXPECT_EQ(s.scale(), 1024);  // two clean updates in a row
  EXPECT_EQ(s.skipped(), 1);
  EXPECT_EQ(s.overflows(), 1);
  std::vector<Tensor> g{Tensor::full({2}, 1024.0, DType::F32), Tensor()};
  s.unscale(g);
  EXPECT_EQ(g[0].data<float>()[0], 1.0f);
  // Static: overflows are counted, never skipped; fp32 and inference programs have no scaling.
  p.lossScaling = LossScaling::parse("static:8");
  LossScaler st(p, true);
  EXPECT_FALSE(st.skipUpdate(1));
  EXPECT_EQ(st.overflows(), 1);
  EXPECT_EQ(st.scale(), 8);
  EXPECT_FALSE(LossScaler(p, /*training=*/false).active());
  EXPECT_THROW(st.setState({-1, 0, 0, 0}), std::invalid_argument);
}

TEST(IpuOptions, GroupedByConcernWithEveryFieldWhereItWas) {
  IpuOptions o;
  o.gradientAccumulation = 4;
  o.recompute = true;
  o.precision = Precision::FP16;
  const TrainingOptions& training = o;
  const MemoryOptions& memory = o;
  const PrecisionOptions& precision = o;
  EXPECT_EQ(training.gradientAccumulation, 4);
  EXPECT_EQ(training.microBatchesPerRequest(), 4);
  EXPECT_TRUE(memory.recompute);
  EXPECT_EQ(precision.resolvedLossScaling().mode, LossScaling::Mode::Dynamic);
  EXPECT_EQ(o.resolvedLossScaling().mode, LossScaling::Mode::Dynamic);
}

}  // namespace
}  // namespace gnn
