// The memory and cost models against hand-computed cases (a single matmul, a two-stage pipeline with one
// micro-batch, a ring all-reduce), their monotonicity, what each memory-saving option saves, the automatic
// splits, and an out-of-memory compile whose report proposes a change that then compiles.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "../models/GraphormerMolecules.h"
#include "device/Collectives.h"
#include "device/Plan.h"
#include "device/SimulatedIpu.h"
#include "gnn/ops/Ops.h"
#include "loaders/FixedSizeCollator.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

// A model of `blocks` identical blocks: each one matmul (forward `flops`, `bytes`; backward twice the FLOPs),
// `params` parameters, `saved` bytes kept for the backward, `out` bytes handed on.
ModelProfile uniform(int64_t blocks, int64_t flops, int64_t bytes, int64_t params, int64_t saved, int64_t out,
                     bool training = true) {
  ModelProfile m;
  m.training = training;
  m.optimizerStateTensors = 2;
  m.inputBytes = 1000;
  m.graphSlots = 9;
  for (int64_t b = 0; b < blocks; ++b) {
    BlockProfile p;
    p.name = "layers/" + std::to_string(b);
    p.parameters = params;
    p.parameterTensors = 1;
    p.inputBytes = b == 0 ? 0 : out;
    p.outputBytes = out;
    p.savedBytes = saved;
    p.forwardFlops = flops;
    p.backwardFlops = training ? 2 * flops : 0;
    p.forward.push_back({"linear", OpClass::Matmul, flops, bytes, saved, true});
    if (training) p.backward.push_back({"linear", OpClass::Matmul, 2 * flops, 2 * bytes, 0, true});
    m.blocks.push_back(p);
  }
  m.outputBytes = out;
  return m;
}

IpuOptions opts(int64_t R = 1, int64_t G = 1) {
  IpuOptions o;
  o.replicationFactor = R;
  o.gradientAccumulation = G;
  return o;
}

TEST(CostModel, SingleMatmulByHand) {
  const IpuSpec s = IpuSpec::mk2();
  // 1 GFLOP from 4 MB (fp32): h = 2 x FLOPs / bytes = 500, about the smallest dimension; the fitted terms
  // (device/CostFit.h): efficiency share x h / (h + halfDim), a fixed cost per op, element-wise bytes per cycle.
  const double eff = s.matmulPeakShare * 500 / (500 + s.matmulHalfDim);
  const double compute = 1e9 / (1472.0 * 32 * eff);  // cycles
  const double memory = 4e6 / s.elementwiseBytesPerCycle;
  const OpCost op{"linear", OpClass::Matmul, 1000000000, 4000000, 0, true};
  EXPECT_NEAR(opSeconds(op, Precision::FP32, s, 1e12), (std::max(compute, memory) + s.opCycles) / 1.33e9, 1e-12);
  // fp16: four times the peak, half the bytes.
  const double compute16 = 1e9 / (1472.0 * 128 * eff);
  EXPECT_NEAR(opSeconds(op, Precision::FP16, s, 1e12), (std::max(compute16, memory / 2) + s.opCycles) / 1.33e9, 1e-12);
  // A working set beyond availableMemoryProportion's share runs in serial passes: slower by that ratio.
  EXPECT_NEAR(opSeconds(op, Precision::FP32, s, 2e6), (std::max(compute * 2, memory) + s.opCycles) / 1.33e9, 1e-12);
  // Bow: the same cycles at 1.85 GHz.
  EXPECT_NEAR(opSeconds(op, Precision::FP32, IpuSpec::bow(), 1e12), (std::max(compute, memory) + s.opCycles) / 1.85e9,
              1e-12);

  // The whole step of an inference program of that one op: the op, plus the host transfer and round trip.
  ModelProfile m = uniform(1, 1000000000, 4000000, 10, 0, 4, false);
  IpuOptions o = opts();
  const CostPlan c = planCost(m, {{0, 1}}, o, s, 8);
  const double op1 = opSeconds(m.blocks[0].forward[0], Precision::FP32, s,
                               0.6 * static_cast<double>(s.memoryBytes()));
  EXPECT_NEAR(c.pipelineSeconds, op1, 1e-12);
  EXPECT_NEAR(c.hostSeconds, 1000 / (25e9 / 4) + s.hostCallSeconds, 1e-12);
  // Synthetic data (PopTorch's enableSyntheticData): no transfers, the request's call only.
  o.syntheticData = true;
  EXPECT_NEAR(planCost(m, {{0, 1}}, o, s, 8).hostSeconds, s.hostCallSeconds, 1e-15);
  o.syntheticData = false;
  EXPECT_NEAR(c.stepSeconds, op1 + c.hostSeconds, 1e-12);
  EXPECT_NEAR(c.samplesPerSecond, 8 / c.stepSeconds, 1e-6);
}

TEST(CostModel, TwoStagePipelineOneMicroBatchByHand) {
  // One micro-batch through two stages: F0 on stage 0, copy, F0 + B0 on stage 1, copy back, B0 on stage 0. No
  // overlap is possible, so the pipeline takes 2f + 2b + 2c and each stage is idle half of it.
  const IpuSpec s = IpuSpec::mk2();
  ModelProfile m = uniform(2, 200000000, 1000000, 1000, 100, 640000);
  IpuOptions o = opts(1, 2);
  o.gradientAccumulation = 2;
  IpuOptions one = o;
  one.gradientAccumulation = 1;
  one.executionStrategy = ExecutionStrategy::Sharded;  // G = 1 < P: the sharded schedule (same order for G = 1)
  const double amp = 0.6 * static_cast<double>(s.memoryBytes());
  const double f = opSeconds(m.blocks[0].forward[0], Precision::FP32, s, amp);
  const double b = opSeconds(m.blocks[0].backward[0], Precision::FP32, s, amp);
  const double copy = 640000 / (32e9 * 2) + 2e-6;
  const CostPlan c = planCost(m, {{0, 1}, {1, 2}}, one, s, 8);
  EXPECT_NEAR(c.stages[0].copyOut, copy, 1e-12);
  EXPECT_NEAR(c.pipelineSeconds, 2 * f + 2 * b + 2 * copy, 1e-12);
  // Pipelined with 2 micro-batches: the stages overlap; the bubble is what the busiest stage waits. Each backward
  // also adds the stage's one weight gradient (1,000 parameters) to its float32 accumulator: one op reading the
  // gradient and the accumulator, writing the accumulator.
  const double acc = (s.opCycles + 1000.0 * 12 / s.elementwiseBytesPerCycle) / s.clockHz;
  const CostPlan p = planCost(m, {{0, 1}, {1, 2}}, o, s, 8);
  EXPECT_NEAR(p.stages[0].accumulate, acc, 1e-12);
  EXPECT_NEAR(p.stages[0].backward, b + acc, 1e-12);
  EXPECT_NEAR(p.stages[0].busy, 2 * (f + b + acc), 1e-12);
  EXPECT_GE(p.pipelineSeconds, 2 * (f + b + acc) + f + copy - 1e-12);  // stage 1 waits for F0 and its copy
  EXPECT_NEAR(p.split.bubble, p.pipelineSeconds - p.stages[p.bottleneckStage].busy, 1e-12);
  EXPECT_LT(p.utilisation, 1.0);
}

TEST(CostModel, AccumulationAndTheOptimizerAreOpsPerWeightTensor) {
  // PopART's Adam (adamdecompose.cpp): per weight tensor, with accumulation, an accumulate op every micro-batch, and
  // once per update one op per state tensor (2), the updater term, the weight's update and the accumulator's reset.
  const IpuSpec s = IpuSpec::mk2();
  ModelProfile m = uniform(1, 1000000, 1000, 1000000, 0, 10);
  m.blocks[0].parameterTensors = 10;  // the same parameters in 10 tensors
  const CostPlan one = planCost(m, {{0, 1}}, opts(1, 1), s, 8);
  const CostPlan four = planCost(m, {{0, 1}}, opts(1, 4), s, 8);
  EXPECT_EQ(one.stages[0].accumulate, 0);  // no accumulator without accumulation
  EXPECT_NEAR(four.stages[0].accumulate, (10 * s.opCycles + 1e6 * 12 / s.elementwiseBytesPerCycle) / s.clockHz, 1e-12);
  const double bytes = 1e6 * (3 * 4 + 2 * 8) / s.elementwiseBytesPerCycle;
  EXPECT_NEAR(one.optimizerSeconds, (bytes + 10 * 4 * s.opCycles) / s.clockHz, 1e-12);
  EXPECT_NEAR(four.optimizerSeconds, (bytes + 10 * 5 * s.opCycles) / s.clockHz, 1e-12);
}

TEST(CostModel, AllReduceByHandAndMonotone) {
  const IpuSpec s = IpuSpec::mk2();
  ModelProfile m = uniform(1, 1000000, 1000, 1000000, 0, 10);
  const CostPlan c = planCost(m, {{0, 1}}, opts(4, 1), s, 8);
  // 4 MB over 4 replicas (device/Collectives.h): a reduce-scatter and an all-gather of 1 MB fragments on
  // quad-directional rings (above GCL's 192 KiB), 3 steps and 3 fragments through each IPU each.
  EXPECT_NEAR(c.allReduceSeconds, 6 * s.collectiveStepSeconds + 6e6 / (2 * s.collectiveBytesPerSecond), 1e-12);
  EXPECT_EQ(c.collectives, 1);
  EXPECT_EQ(c.collectiveMethod, "quad-directional ring");
  double last = 0;
  for (int64_t R = 1; R <= 16; ++R) {
    const double t = planCost(m, {{0, 1}}, opts(R, 1), s, 8).allReduceSeconds;
    EXPECT_GE(t, last) << R << " replicas";
    last = t;
  }
  // PopART's default: one all-reduce per weight tensor, at each tensor's recorded size; merged: one per stage.
  m.blocks[0].parameterTensors = 2;
  m.blocks[0].parameterSizes = {999900, 100};
  IpuOptions o = opts(16, 1);
  const CostPlan each = planCost(m, {{0, 1}}, o, s, 8);
  EXPECT_EQ(each.collectives, 2);
  EXPECT_NEAR(each.allReduceSeconds,
              collectiveCost(Collective::AllReduce, 3999600, 16, s, {}).seconds() +
                  collectiveCost(Collective::AllReduce, 400, 16, s, {}).seconds(),
              1e-15);
  o.mergeAllReduce = true;
  const CostPlan merged = planCost(m, {{0, 1}}, o, s, 8);
  EXPECT_EQ(merged.collectives, 1);
  EXPECT_NEAR(merged.allReduceSeconds, collectiveCost(Collective::AllReduce, 4e6, 16, s, {}).seconds(), 1e-15);
  EXPECT_LT(merged.allReduceSeconds, each.allReduceSeconds);
  // Replicas beyond a POD cross GW-Links: the plan's network part.
  o.replicationFactor = 128;
  const CostPlan pods = planCost(m, {{0, 1}}, o, s, 8);
  EXPECT_NEAR(pods.networkSeconds, collectiveCost(Collective::AllReduce, 4e6, 128, s, {}).gwLinkSeconds(), 1e-15);
  EXPECT_GT(pods.networkSeconds, 0);
}

TEST(CostModel, AllReduceAcrossHostsByHand) {
  const IpuSpec s = IpuSpec::mk2();
  ModelProfile m = uniform(1, 1000000, 1000, 1000000, 0, 10);
  IpuOptions o = opts(4, 1);
  o.hosts = 2;
  o.networkBytesPerSecond = 12.5e9;
  o.networkLatencySeconds = 10e-6;
  const CostPlan c = planCost(m, {{0, 1}}, o, s, 8);
  // Replicas over 2 hosts (this library's MPI replication): the IPUs' all-reduce, and a ring over the 2 hosts
  // through the network (2(2-1)/2 of 4 MB over 12.5 GB/s, 2 latencies of 10 us).
  const double network = 1.0 * 4e6 / 12.5e9 + 2 * 10e-6;
  const double links = collectiveCost(Collective::AllReduce, 4e6, 4, s, {}).seconds();
  EXPECT_NEAR(c.networkSeconds, network, 1e-12);
  EXPECT_NEAR(c.allReduceSeconds, links + network, 1e-12);
  // One host: the IPUs' all-reduce alone; more hosts (a slower network than IPU-Links) never make it faster.
  o.hosts = 1;
  EXPECT_NEAR(planCost(m, {{0, 1}}, o, s, 8).allReduceSeconds, links, 1e-12);
  EXPECT_EQ(planCost(m, {{0, 1}}, o, s, 8).networkSeconds, 0);
  o.replicationFactor = 8;
  double last = 0;
  for (int64_t H : {1, 2, 4, 8}) {
    o.hosts = H;
    const double t = planCost(m, {{0, 1}}, o, s, 8).allReduceSeconds;
    EXPECT_GE(t, last) << H << " hosts";
    last = t;
  }
}

TEST(CostModel, MoreAccumulationRaisesUtilisation) {
  const IpuSpec s = IpuSpec::mk2();
  ModelProfile m = uniform(4, 100000000, 1000000, 1000, 100, 1000);
  const StageBlocks st{{0, 1}, {1, 2}, {2, 3}, {3, 4}};
  double last = 0;
  for (int64_t G : {4, 8, 16, 32, 64}) {
    const double u = planCost(m, st, opts(1, G), s, 8).utilisation;
    EXPECT_GT(u, last) << G;
    last = u;
  }
  EXPECT_GT(last, 0.9);
}

int64_t category(const IpuMemory& m, const std::string& c) {
  const auto by = m.byCategory();
  auto it = by.find(c);
  return it == by.end() ? 0 : it->second;
}

TEST(MemoryModel, StashPerStageAndWhatEachOptionSaves) {
  const IpuSpec s = IpuSpec::mk2();
  ModelProfile m = uniform(4, 1000, 100, 1000000, 5000000, 100000);
  const StageBlocks st{{0, 1}, {1, 2}, {2, 3}, {3, 4}};
  IpuOptions o = opts(2, 8);
  const MemoryPlan base = planMemory(m, st, o, s);
  // A pipelined stage s of 4 holds 2(4-s)-1 micro-batches' activations: 7, 5, 3, 1.
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(category(base.ipus[static_cast<size_t>(i)], "stashed activations"), 5000000 * (2 * (4 - i) - 1)) << i;
  EXPECT_EQ(category(base.ipus[0], "weights"), 4000000);
  EXPECT_EQ(category(base.ipus[0], "gradients"), 4000000);          // fp32 accumulators (G > 1)
  EXPECT_EQ(category(base.ipus[0], "optimizer state"), 8000000);    // Adam: m and v
  EXPECT_EQ(category(base.ipus[0], "code and exchange"), s.codeAndExchangeBytes());

  IpuOptions off = o;
  off.offloadOptimizer = true;
  const MemoryPlan mo = planMemory(m, st, off, s);
  EXPECT_EQ(category(mo.ipus[0], "optimizer state"), 0);
  EXPECT_EQ(mo.ipus[0].total, base.ipus[0].total - 8000000);
  EXPECT_EQ(mo.streamingTotal, 4 * 8000000);

  IpuOptions rts = o;
  rts.replicatedTensorSharding = true;
  EXPECT_EQ(category(planMemory(m, st, rts, s).ipus[0], "optimizer state"), 4000000);  // 1/2 per replica

  IpuOptions half = o;
  half.precision = Precision::FP16;
  const MemoryPlan mh = planMemory(m, st, half, s);
  EXPECT_EQ(category(mh.ipus[0], "weights"), 2000000);
  EXPECT_EQ(category(mh.ipus[0], "optimizer state"), 12000000);  // + fp32 master weights
  EXPECT_EQ(category(mh.ipus[0], "stashed activations"), 5000000 / 2 * 7);

  IpuOptions rc = o;
  rc.recompute = true;
  const MemoryPlan mr = planMemory(m, st, rc, s);
  // Stage 1 keeps its input (100 kB) for each of 5 micro-batches, plus the micro-batch inputs, and one block's
  // saved tensors while its backward runs, instead of 5 x 5 MB.
  EXPECT_EQ(category(mr.ipus[1], "stashed activations"), 100000 * 5 + 1000 * 5);
  EXPECT_EQ(category(mr.ipus[1], "recomputation"), 5000000);
  EXPECT_LT(mr.ipus[1].total, base.ipus[1].total);

  IpuOptions ph = o;
  ph.executionStrategy = ExecutionStrategy::Phased;
  const MemoryPlan mp = planMemory(m, st, ph, s);
  ASSERT_EQ(mp.ipus.size(), 1u);  // one IPU per replica runs the phases in turn
  EXPECT_EQ(category(mp.ipus[0], "optimizer state"), 0);
  EXPECT_GT(mp.streamingTotal, 4 * 8000000);
}

// PopTorch's default when a training program is pipelined over more than one stage: recomputation, planned
// without being asked (the memory of recomputation, not of stashed activations, and its time); not for one stage,
// sharded stages or with the off switch. A plan that recomputes by default proposes no --recompute, and its
// phased fix is planned as `--execution phased` runs: without recomputation.
TEST(Plan, PipelinedTrainingRecomputesByDefault) {
  ModelProfile m = uniform(4, 1000, 100, 1000000, 5000000, 100000);
  IpuOptions o = opts(2, 8);
  o.pipelineSplits = {"layers/1", "layers/2", "layers/3"};
  const Plan p = makePlan(m, o, 8);
  EXPECT_TRUE(p.recomputeByDefault);
  EXPECT_TRUE(p.options.recompute);  // the options the program runs with
  EXPECT_EQ(category(p.memory.ipus[1], "stashed activations"), 100000 * 5 + 1000 * 5);
  EXPECT_EQ(category(p.memory.ipus[1], "recomputation"), 5000000);
  EXPECT_GT(p.cost.stages[0].recompute, 0);
  EXPECT_NE(p.report().find("PopTorch's default"), std::string::npos) << p.report();
  EXPECT_TRUE(p.toJson()["recompute"].get<bool>());
  EXPECT_TRUE(p.toJson()["recompute_by_default"].get<bool>());

  IpuOptions off = o;
  off.recomputeWhenPipelined = false;
  const Plan q = makePlan(m, off, 8);
  EXPECT_FALSE(q.recomputeByDefault);
  EXPECT_FALSE(q.options.recompute);
  EXPECT_EQ(category(q.memory.ipus[1], "stashed activations"), 5000000 * 5);
  EXPECT_EQ(q.cost.stages[0].recompute, 0);
  EXPECT_FALSE(q.toJson()["recompute"].get<bool>());

  IpuOptions sharded = o;
  sharded.executionStrategy = ExecutionStrategy::Sharded;
  EXPECT_FALSE(makePlan(m, sharded, 8).options.recompute);
  EXPECT_FALSE(makePlan(m, opts(2, 8), 8).options.recompute);  // one stage
  IpuOptions forward = o;
  forward.gradientAccumulation = 1;
  forward.deviceIterations = 8;
  const Plan inference = makePlan(uniform(4, 1000, 100, 1000000, 5000000, 100000, false), forward, 8);
  EXPECT_FALSE(inference.recomputeByDefault);  // no backward to recompute for
  EXPECT_FALSE(inference.toJson()["recompute"].get<bool>());

  // Too little memory for any plan: the fixes of a pipeline that recomputes by default.
  IpuOptions tight = o;
  tight.bytesPerTile = 96 * 1024 + 1000;
  const Plan t = makePlan(m, tight, 8);
  ASSERT_FALSE(t.fits());
  for (const PlanFix& f : t.fixes) EXPECT_EQ(f.flags.find("--recompute"), std::string::npos) << f.flags;
  IpuOptions phased = o;
  phased.executionStrategy = ExecutionStrategy::Phased;
  phased.bytesPerTile = tight.bytesPerTile;
  const Plan ph = makePlan(m, phased, 8, false);
  bool found = false;
  for (const PlanFix& f : t.fixes)
    if (f.flags == "--execution phased") {
      found = true;
      EXPECT_EQ(f.fullestBytes, ph.memory.ipus[ph.memory.fullest].total);
    }
  EXPECT_TRUE(found);
}

// Automatic splits plan each number of stages as it would run: more than one pipelined stage recomputes.
TEST(Plan, AutoSplitsPlanPipelinesWithTheirDefaultRecomputation) {
  ModelProfile m = uniform(6, 1000, 100, 1000, 150000000, 1000);
  IpuOptions o = opts(1, 8);
  o.autoPipelineSplits = true;
  // Room for one block's stash at a time, not for a pipeline's stash of several micro-batches.
  o.bytesPerTile = 96 * 1024 + 400000000 / 1472;
  const Plan p = makePlan(m, o, 8);
  ASSERT_TRUE(p.fits()) << p.report();
  EXPECT_GT(p.stages.size(), 1u);
  EXPECT_TRUE(p.recomputeByDefault);
  EXPECT_NE(p.splitReason.find("+ recompute"), std::string::npos) << p.splitReason;
  IpuOptions off = o;
  off.recomputeWhenPipelined = false;
  EXPECT_FALSE(makePlan(m, off, 8).fits());  // stashing 2P-1 micro-batches on the first stage does not fit
}

TEST(Plan, AutoSplitsBalanceAndFit) {
  // Blocks of unequal cost: the slowest stage of the chosen split is no slower than any other 2-stage split's.
  ModelProfile m = uniform(6, 100000000, 1000, 1000, 1000, 1000);
  for (int64_t b : {0, 1, 2}) {
    m.blocks[static_cast<size_t>(b)].forward[0].flops *= 3;
    m.blocks[static_cast<size_t>(b)].backward[0].flops *= 3;
  }
  IpuOptions o = opts(1, 8);
  StageBlocks st;
  std::string why;
  ASSERT_TRUE(autoSplits(m, o, 2, &st, &why));
  ASSERT_EQ(st.size(), 2u);
  const IpuSpec s = IpuSpec::mk2();
  auto slowest = [&](const StageBlocks& x) {
    const CostPlan c = planCost(m, x, o, s, 8);
    double t = 0;
    for (const StageCost& sc : c.stages) t = std::max(t, sc.forward + sc.backward + sc.copyOut);
    return t;
  };
  for (int64_t cut = 1; cut < 6; ++cut) EXPECT_LE(slowest(st), slowest({{0, cut}, {cut, 6}}) + 1e-12) << cut;
  EXPECT_EQ(st[0].second, 2);  // 3+3 | 3+1+1+1
  EXPECT_NE(why.find("2 stage(s)"), std::string::npos) << why;
  // The fewest that fit: with tile memory for about two blocks' stash per IPU, one stage does not fit.
  // (Sharded: one micro-batch in flight, so more stages always hold less; a pipeline's first stage stashes more.)
  IpuOptions tight = o;
  tight.executionStrategy = ExecutionStrategy::Sharded;
  ModelProfile big = uniform(6, 1000, 100, 1000, 150000000, 1000);
  tight.bytesPerTile = 96 * 1024 + 700000000 / 1472;
  ASSERT_TRUE(autoSplits(big, tight, 0, &st, &why));
  EXPECT_GT(st.size(), 1u) << why;
  for (size_t i = 0; i < st.size(); ++i)
    EXPECT_TRUE(stageMemory(big, st[i].first, st[i].second, static_cast<int64_t>(i), static_cast<int64_t>(st.size()),
                            tight, IpuSpec::of(tight), nullptr).fits());
  EXPECT_NE(why.find("the fewest that fit"), std::string::npos) << why;
}

// --- end to end: a real model's compile record ------------------------------------------------------------

Batch batchOf(int64_t graphs) {
  static const std::vector<Graph> g = test::pcqmStyle(64, 30);
  FixedSizeOptions o;
  o.numGraphs = graphs + 1;
  o.numNodes = 30 * graphs + 8;
  o.numEdges = 2 * o.numNodes;
  o.maxNodesPerGraph = 30;
  return FixedSizeCollator(o).collate(std::vector<Graph>(g.begin(), g.begin() + graphs));
}

std::unique_ptr<BlockModel> gin() {
  Generator gen(3);
  GraphModelOptions o;
  o.layers = 4;
  o.hidden = 64;
  return std::make_unique<OgbMolGIN>(o, gen);
}

LossFn l1() {
  return {[](const Variable& out, const Batch& b) { return l1Loss(out, b.y, b.yMask); }, {}};
}

TEST(Plan, CompileRecordPerBlock) {
  auto model = gin();
  Adam opt({{model->parameters(), 0.0}}, 1e-3);
  const Batch b = batchOf(8);
  const Plan p = planProgram(*model, l1(), &opt, b, opts());
  ASSERT_EQ(p.blockNames.size(), model->numBlocks());
  int64_t params = 0;
  for (const Variable& v : model->parameters()) params += v.value().numel();
  EXPECT_EQ(p.parameters, params);  // every parameter charged to exactly one block
  EXPECT_TRUE(p.fits());
  EXPECT_GT(p.cost.samplesPerSecond, 0);
  EXPECT_EQ(p.samplesPerMicroBatch, 8);
  const nlohmann::json j = p.toJson();
  for (const char* k : {"memory_per_ipu_mb", "memory_budget_mb", "estimated_samples_per_s", "pipeline_utilisation",
                        "bottleneck_stage"})
    EXPECT_TRUE(j.contains(k)) << k;
  // The model is untouched by planning (it ran on a copy).
  Generator gen(3);
  GraphModelOptions o;
  o.layers = 4;
  o.hidden = 64;
  OgbMolGIN fresh(o, gen);
  const auto a = model->parameters(), f = fresh.parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].value().bitEqual(f[i].value())) << i;
}

// The fitted exchange terms need each exchange op's index count and table: GIN's fused message sum (a gather of the
// micro-batch's node rows by its edges, scatter-added back to the nodes) and the readout's segment sum over each
// graph's nodes; the backwards carry the same.
TEST(Plan, GathersAndScattersCarryTheirIndicesAndTables) {
  auto model = gin();
  Adam opt({{model->parameters(), 0.0}}, 1e-3);
  const Batch b = batchOf(8);
  const Plan p = planProgram(*model, l1(), &opt, b, opts());
  ASSERT_TRUE(p.profile);
  int64_t messages = 0, readouts = 0;
  for (const BlockProfile& bp : p.profile->blocks)
    for (const auto* ops : {&bp.forward, &bp.backward})
      for (const OpCost& c : *ops) {
        EXPECT_EQ(c.backward, ops == &bp.backward) << c.name;
        if (c.name == "reluMessageSum") {
          ++messages;
          EXPECT_EQ(c.indices, b.numEdges);
          EXPECT_EQ(c.tableRows, b.numNodes);
        } else if (c.name == "segmentSum" || c.name == "segmentMean") {
          ++readouts;
          EXPECT_EQ(c.indices, b.numNodes);
          EXPECT_EQ(c.tableRows, b.numGraphs);
        } else if (c.cls != OpClass::Exchange) {
          EXPECT_EQ(c.indices, 0) << c.name;
        }
      }
  EXPECT_EQ(messages, 2 * 4);  // 4 layers, forward and backward
  EXPECT_GE(readouts, 2);
}

// An inference program (no optimizer, no loss: PopTorch's inferenceModel) is planned from the forward only, with
// every weight on its IPU and nothing a weight update needs.
TEST(Plan, InferencePlanHoldsTheWeightsAndRunsTheForwardOnly) {
  auto model = gin();
  Adam opt({{model->parameters(), 0.0}}, 1e-3);
  const Batch b = batchOf(8);
  int64_t params = 0;
  for (const Variable& v : model->parameters()) params += v.value().numel();
  IpuOptions o = opts();
  o.deviceIterations = 4;
  o.pipelineSplits = {"layers/2"};
  const Plan train = planProgram(*model, l1(), &opt, b, o);
  const Plan infer = planProgram(*model, {}, nullptr, b, o);
  EXPECT_TRUE(train.training);
  EXPECT_FALSE(infer.training);
  EXPECT_EQ(infer.parameters, params);
  int64_t weights = 0;
  for (const IpuMemory& ipu : infer.memory.ipus)
    for (const MemoryItem& it : ipu.items) {
      if (it.category == "weights") weights += it.bytes;
      EXPECT_TRUE(it.category != "gradients" && it.category != "optimizer state" &&
                  it.category != "stashed activations")
          << it.category;
    }
  EXPECT_EQ(weights, params * 4);  // fp32
  ASSERT_EQ(infer.cost.stages.size(), 2u);
  for (size_t s = 0; s < 2; ++s) EXPECT_EQ(infer.cost.stages[s].backward, 0);
  // Nearly the same forward: in eval mode batch norm reads its running statistics instead of the batch's, and
  // the last stage ends in the stand-in loss (a sum) instead of L1.
  for (size_t s = 0; s < 2; ++s)
    EXPECT_NEAR(infer.cost.stages[s].forward, train.cost.stages[s].forward, 0.05 * train.cost.stages[s].forward) << s;
  // One device iteration of 4 micro-batches through 2 stages: 5 forward slots of the slower stage, at least.
  const double slowest = std::max(infer.cost.stages[0].forward, infer.cost.stages[1].forward);
  EXPECT_GE(infer.cost.stepSeconds, 5 * slowest);
  EXPECT_LT(infer.memory.ipus[0].total, train.memory.ipus[0].total);
}

TEST(Plan, OutOfMemoryAtCompileThenAProposedChangeFits) {
  // Wide enough that the weights, gradients and optimizer state, which stages divide, outweigh what every stage
  // keeps whole (the micro-batch's I/O buffers, the largest op's temporaries).
  Generator gen(3);
  GraphModelOptions go;
  go.layers = 4;
  go.hidden = 256;
  auto model = std::make_unique<OgbMolGIN>(go, gen);
  Adam opt({{model->parameters(), 0.0}}, 1e-3);
  const Batch b = batchOf(8);
  IpuOptions o = opts(1, 4);
  const Plan roomy = planProgram(*model, l1(), &opt, b, o);
  // Tile memory for code and exchange plus 85% of what the model needs on one IPU. (Splitting does not divide
  // everything: the first of P stages stashes 2P-1 micro-batches' activations.)
  const IpuSpec s = IpuSpec::mk2();
  const int64_t need = roomy.memory.ipus[0].total - s.codeAndExchangeBytes();
  o.bytesPerTile = s.codeAndExchangeBytesPerTile + need * 85 / 100 / s.tiles;
  SimulatedIpu ipu;
  std::string report;
  try {
    ipu.compile(*model, l1(), &opt, b, o);
    FAIL() << "compiled a plan that does not fit";
  } catch (const OutOfMemory& e) {
    report = e.what();
    EXPECT_NE(report.find("Out of memory: IPU 0"), std::string::npos) << report;
    EXPECT_NE(report.find("largest items"), std::string::npos) << report;
    // Apply the proposed pipeline split (the change this build executes) and compile again.
    const PlanFix* split = nullptr;
    for (const PlanFix& f : e.plan().fixes)
      if (f.fits && f.flags.rfind("--pipeline-splits ", 0) == 0) split = &f;
    ASSERT_NE(split, nullptr) << report;
    std::istringstream flags(split->flags);
    std::string flag, names;
    IpuOptions fixed = o;
    while (flags >> flag) {
      if (flag == "--pipeline-splits") {
        flags >> names;
        std::istringstream ns(names);
        for (std::string n; std::getline(ns, n, ',');) fixed.pipelineSplits.push_back(n);
      } else if (flag == "--grad-accum") {
        flags >> fixed.gradientAccumulation;
      }
    }
    auto program = ipu.compile(*model, l1(), &opt, b, fixed);
    ASSERT_NE(program->plan(), nullptr);
    EXPECT_TRUE(program->plan()->fits());
    EXPECT_EQ(program->stageNames().size(), fixed.pipelineSplits.size() + 1);
  }
}

TEST(Plan, AutoSplitsCompileAndTraceOnTheIpuClock) {
  auto model = gin();
  Adam opt({{model->parameters(), 0.0}}, 1e-3);
  const Batch b = batchOf(8);
  IpuOptions o = opts(1, 4);
  o.autoPipelineSplits = true;
  o.autoStages = 3;
  SimulatedIpu ipu;
  auto program = ipu.compile(*model, l1(), &opt, b, o);
  EXPECT_EQ(program->stageNames().size(), 3u);
  EXPECT_EQ(program->options().pipelineSplits.size(), 2u);
  program->enableTrace(1);
  program->run(stackMicroBatches({b, b, b, b}));
  Trace t;
  t.setTracks(program->trace().tracks());
  for (const TaskRecord& r : program->trace().records()) t.add(r);
  attachIpuClock(t, *program->plan());
  int64_t withClock = 0, tasks = 0;
  for (const TaskRecord& r : t.records()) {
    ++tasks;
    withClock += r.ipuClock.set();
    if (r.kind != TaskKind::Forward || r.stage == 0) continue;
    // A stage's forward starts after the stage before finished that micro-batch.
    for (const TaskRecord& q : t.records()) {
      if (q.kind != TaskKind::Forward || q.stage != r.stage - 1 || q.microBatch != r.microBatch) continue;
      EXPECT_GE(r.ipuClock.start, q.ipuClock.start + q.ipuClock.duration - 1e-12);
    }
  }
  EXPECT_EQ(withClock, tasks);
}

}  // namespace
}  // namespace gnn
