// Precision (fp16 with loss scaling, stochastic rounding) and the memory-saving options of the simulated IPU:
// phased execution, optimizer offload, replicated tensor sharding, recomputation and 8-bit I/O each end with the
// weights of the run without them; fp16 rounds as IEEE half, skips overflowing updates and reproduces its bits.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "../models/GraphormerMolecules.h"
#include "BitEqual.h"
#include "SmallMolecules.h"
#include "device/CpuDevice.h"
#include "device/ExecutionProgram.h"
#include "device/PipelineSchedule.h"
#include "device/Plan.h"
#include "device/SimulatedIpu.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/tensor/HalfPrecision.h"
#include "models/Graphormer.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

const std::vector<Graph>& molecules() {
  static const std::vector<Graph> g = test::pcqmStyle(64, 30);
  return g;
}

// Host requests of `microBatches` micro-batches of b real graphs each (b+1 slots), consecutive graphs.
std::vector<Batch> requests(int64_t count, int64_t microBatches, int64_t b) {
  std::vector<Batch> out;
  size_t next = 0;
  for (int64_t r = 0; r < count; ++r) {
    std::vector<Batch> parts;
    for (int64_t m = 0; m < microBatches; ++m, next += static_cast<size_t>(b)) {
      const std::vector<Graph> gs(molecules().begin() + static_cast<long>(next),
                                  molecules().begin() + static_cast<long>(next + static_cast<size_t>(b)));
      FixedSizeOptions o;
      o.numGraphs = b + 1;
      o.numNodes = 30 * b + 8;
      o.numEdges = 2 * o.numNodes;
      o.maxNodesPerGraph = 30;
      parts.push_back(FixedSizeCollator(o).collate(gs));
    }
    out.push_back(microBatches == 1 ? parts.front() : stackMicroBatches(parts));
  }
  return out;
}

LossFn l1() { return test::maskedL1(); }

std::unique_ptr<BlockModel> gin(double dropout = 0.0) { return test::smallGin(dropout); }

std::unique_ptr<BlockModel> graphormer(double dropout = 0.0) {
  Generator gen(12);
  GraphormerOptions o = GraphormerOptions::slim();
  o.layers = 3;
  o.hidden = 16;
  o.heads = 2;
  o.ffn = 16;
  o.dropout = o.attentionDropout = o.activationDropout = dropout;
  o.packedRows = false;  // the static shapes an IPU compiles
  return std::make_unique<Graphormer>(o, gen);
}

enum class Opt { Adam, AdamW, Sgd };

struct Session {
  std::unique_ptr<BlockModel> model;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<DeviceProgram> program;
  std::vector<RunResult> results;
  std::vector<Tensor> weights() const {
    std::vector<Tensor> w;
    for (const Variable& p : model->parameters()) w.push_back(p.value().clone());
    return w;
  }
  ExecutionProgram& exec() { return dynamic_cast<ExecutionProgram&>(*program); }
};

Session compile(std::unique_ptr<BlockModel> model, const IpuOptions& o, const Batch& shape, Opt opt = Opt::Adam,
            LossFn loss = l1()) {
  Session t;
  t.model = std::move(model);
  std::vector<ParamGroup> groups{{t.model->parameters(), opt == Opt::Sgd ? 0.0 : 0.01}};
  if (opt == Opt::Adam) t.optimizer = std::make_unique<Adam>(groups, 1e-3);
  else if (opt == Opt::AdamW) t.optimizer = std::make_unique<AdamW>(groups, 1e-3);
  else t.optimizer = std::make_unique<SGD>(groups, 0.05, 0.9);
  SimulatedIpu ipu;
  t.program = ipu.compile(*t.model, std::move(loss), t.optimizer.get(), shape, o);
  return t;
}

Session train(std::unique_ptr<BlockModel> model, const std::vector<Batch>& reqs, const IpuOptions& o, Opt opt = Opt::Adam) {
  ExecutionContext::current().setRandomKey({5, 0, 0});
  const int64_t per = o.microBatchesPerRequest();
  Session t = compile(std::move(model), o, per == 1 ? reqs.front() : microBatch(reqs.front(), 0, per), opt);
  RunArgs args;
  args.seed = 5;
  for (const Batch& r : reqs) t.results.push_back(t.program->run(r, args));
  return t;
}

using test::bitEqual;

bool stateEqual(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || !v.bitEqual(it->second)) return false;
  }
  return true;
}

double maxRelDiff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor x = a[i].to(DType::F64), y = b[i].to(DType::F64);
    const double scale = std::max(1e-3, y.flat<double>().cwiseAbs().maxCoeff());
    worst = std::max(worst, (x.flat<double>() - y.flat<double>()).cwiseAbs().maxCoeff() / scale);
  }
  return worst;
}

// ---- phased execution ----------------------------------------------------------------------------------

TEST(PhasedExecution, ScheduleSerialisesTheBatchPerPhase) {
  PipelineSchedule s = PipelineSchedule::training(3, 2, ExecutionStrategy::Phased);
  ASSERT_EQ(s.lanes.size(), 1u);
  std::string order;
  for (const auto& t : s.lanes[0])
    order += (order.empty() ? "" : " ") + std::string(t.kind == TaskKind::Forward ? "F" : "B") +
             std::to_string(t.stage) + "." + std::to_string(t.microBatch);
  EXPECT_EQ(order, "F0.0 F0.1 F1.0 F1.1 F2.0 F2.1 B2.0 B2.1 B1.0 B1.1 B0.0 B0.1");
  for (int64_t st = 0; st < 3; ++st) EXPECT_EQ(s.maxStashed(st), 2);
  PipelineSchedule inf = PipelineSchedule::inference(2, 3, ExecutionStrategy::Phased);
  ASSERT_EQ(inf.lanes.size(), 1u);
  EXPECT_EQ(inf.laneString(0), "F0 F1 F2 F0 F1 F2");
  // No rule G >= P: phased runs 3 stages with 2 micro-batches.
  IpuOptions o;
  o.gradientAccumulation = 2;
  o.executionStrategy = ExecutionStrategy::Phased;
  EXPECT_NO_THROW(o.validate(true, 3));
}

TEST(PhasedExecution, SameBitsAsShardedAndPipelined) {
  for (bool graphormerModel : {false, true}) {
    IpuOptions o;
    o.gradientAccumulation = 4;
    o.pipelineSplits = {"layers/0", "layers/2"};
    auto reqs = requests(2, 4, 2);
    Session piped = train(graphormerModel ? graphormer() : gin(0.2), reqs, o);
    o.executionStrategy = ExecutionStrategy::Sharded;
    Session sharded = train(graphormerModel ? graphormer() : gin(0.2), reqs, o);
    o.executionStrategy = ExecutionStrategy::Phased;
    Session phased = train(graphormerModel ? graphormer() : gin(0.2), reqs, o);
    EXPECT_TRUE(bitEqual(phased.weights(), sharded.weights())) << maxRelDiff(phased.weights(), sharded.weights());
    EXPECT_TRUE(bitEqual(phased.weights(), piped.weights())) << maxRelDiff(phased.weights(), piped.weights());
    EXPECT_EQ(phased.program->record().stages[0].maxStashed, 4);
  }
}

// ---- optimizer offload -----------------------------------------------------------------------------------

TEST(OffloadOptimizer, SameBitsAndTheStateLeavesTheIpus) {
  IpuOptions o;
  o.gradientAccumulation = 2;
  o.pipelineSplits = {"layers/1"};
  auto reqs = requests(3, 2, 3);
  Session on = train(gin(), reqs, o);
  o.offloadOptimizer = true;
  Session off = train(gin(), reqs, o);
  EXPECT_TRUE(bitEqual(on.weights(), off.weights()));
  EXPECT_TRUE(stateEqual(on.optimizer->state(), off.optimizer->state()));
  // Adam's m and v: two float tensors per parameter.
  const int64_t stateBytes = 2 * 4 * on.model->numParameters();
  int64_t onIpus = 0, offIpus = 0;
  for (int64_t id = 0; id < 2; ++id) {
    onIpus += on.exec().ipuMemory(id).currentBytes();
    offIpus += off.exec().ipuMemory(id).currentBytes();
  }
  EXPECT_EQ(onIpus - offIpus, stateBytes);
  EXPECT_EQ(off.exec().streamingMemory().currentBytes(), stateBytes);
  EXPECT_EQ(on.exec().streamingMemory().currentBytes(), 0);
}

TEST(OffloadOptimizer, Fp16MasterWeightsLiveInStreamingMemory) {
  IpuOptions o;
  o.precision = Precision::FP16;
  o.offloadOptimizer = true;
  auto reqs = requests(4, 1, 3);
  Session off = train(gin(), reqs, o);
  const int64_t weights = 4 * off.model->numParameters();
  EXPECT_EQ(off.exec().streamingMemory().currentBytes(), 3 * weights);  // master weights, m, v
}

// ---- replicated tensor sharding --------------------------------------------------------------------------

TEST(ReplicatedTensorSharding, SameWeightsAndStateAsUnshardedForTwoAndThreeReplicas) {
  for (int64_t R : {2, 3})
    for (Opt opt : {Opt::Adam, Opt::AdamW, Opt::Sgd}) {
      IpuOptions o;
      o.replicationFactor = R;
      o.gradientAccumulation = 2;
      auto reqs = requests(3, 2 * R, 2);
      Session plain = train(gin(), reqs, o, opt);
      o.replicatedTensorSharding = true;
      Session rts = train(gin(), reqs, o, opt);
      EXPECT_TRUE(bitEqual(plain.weights(), rts.weights())) << "R=" << R << " " << maxRelDiff(plain.weights(), rts.weights());
      const auto a = plain.optimizer->state(), b = rts.optimizer->state();
      EXPECT_TRUE(stateEqual(a, b)) << "R=" << R;
      EXPECT_EQ(rts.optimizer->numShards(), static_cast<size_t>(R));
      // Each replica holds its shard: the state is spread over the replicas' IPUs, nothing of it in streaming.
      if (opt != Opt::Sgd) {
        const int64_t total = 2 * 4 * plain.model->numParameters();
        int64_t perReplicaMax = 0;
        for (int64_t r = 0; r < R; ++r) perReplicaMax = std::max(perReplicaMax, rts.exec().ipuMemory(r).currentBytes());
        EXPECT_LT(perReplicaMax, plain.exec().ipuMemory(0).currentBytes()) << "R=" << R;
        (void)total;
      }
      // A checkpoint of the sharded run loads into an unsharded optimizer and back.
      Session fresh = compile(gin(), IpuOptions{}, microBatch(reqs.front(), 0, 2 * R), opt);
      fresh.optimizer->loadState(b);
      EXPECT_TRUE(stateEqual(fresh.optimizer->state(), b));
      rts.optimizer->loadState(a);
      EXPECT_TRUE(stateEqual(rts.optimizer->state(), a));
    }
}

TEST(ReplicatedTensorSharding, RangesAreBalanced) {
  const auto r = Optimizer::balancedRanges(10, 3);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], std::make_pair(int64_t{0}, int64_t{4}));
  EXPECT_EQ(r[1], std::make_pair(int64_t{4}, int64_t{7}));
  EXPECT_EQ(r[2], std::make_pair(int64_t{7}, int64_t{10}));
}

// ---- recomputation -------------------------------------------------------------------------------------

TEST(Recomputation, SameBitsAsStoringActivationsWithDropoutOnOneAndTwoStages) {
  for (bool graphormerModel : {false, true})
    for (bool split : {false, true}) {
      IpuOptions o;
      o.gradientAccumulation = 4;
      if (split) o.pipelineSplits = {"layers/1"};
      o.recomputeWhenPipelined = false;  // the run that stores activations (a pipeline recomputes by default)
      auto reqs = requests(2, 4, 2);
      Session kept = train(graphormerModel ? graphormer(0.2) : gin(0.3), reqs, o);
      o.recompute = true;
      Session again = train(graphormerModel ? graphormer(0.2) : gin(0.3), reqs, o);
      const std::string what = std::string(graphormerModel ? "Graphormer" : "GIN") + (split ? ", 2 stages" : ", 1 stage");
      EXPECT_TRUE(bitEqual(kept.weights(), again.weights())) << what << ": " << maxRelDiff(kept.weights(), again.weights());
      EXPECT_TRUE(stateEqual(kept.optimizer->state(), again.optimizer->state())) << what;
      ASSERT_EQ(kept.results.back().outputs.size(), again.results.back().outputs.size());
      EXPECT_EQ(kept.results.back().outputs.back().loss, again.results.back().outputs.back().loss) << what;
      // The compile record is the same: the re-run forwards are not counted as more forward ops.
      EXPECT_EQ(kept.program->record().ops.size(), again.program->record().ops.size()) << what;
    }
}

TEST(Recomputation, PeakMemoryOfAPipelinedStageDrops) {
  IpuOptions o;
  o.gradientAccumulation = 6;
  o.pipelineSplits = {"layers/2"};
  o.recomputeWhenPipelined = false;  // the run that stores activations (a pipeline recomputes by default)
  auto reqs = requests(1, 6, 3);
  Session kept = train(graphormer(0.1), reqs, o);
  o.recompute = true;
  Session again = train(graphormer(0.1), reqs, o);
  const int64_t before = kept.exec().ipuMemory(0).peakBytes(), after = again.exec().ipuMemory(0).peakBytes();
  std::cout << "stage 0 peak: " << before << " B storing activations, " << after << " B recomputing\n";
  EXPECT_LT(after, before) << "stage 0 peak: " << before << " B storing activations, " << after << " B recomputing";
  EXPECT_TRUE(bitEqual(kept.weights(), again.weights()));
}

// PopTorch's default: a training program pipelined over more than one stage recomputes without being asked (its
// compiler sets autoRecomputation to Pipeline); one stage, sharded stages and inference do not; the off switch
// (PopART's NoRecompute) stores the activations. Exact either way: the same weights.
TEST(Recomputation, OnByDefaultWhenPipelinedOverStagesAndOffWhenTurnedOff) {
  IpuOptions o;
  o.gradientAccumulation = 6;
  o.pipelineSplits = {"layers/2"};
  auto reqs = requests(1, 6, 3);
  Session byDefault = train(graphormer(0.1), reqs, o);
  EXPECT_TRUE(byDefault.program->options().recompute);
  ASSERT_NE(byDefault.program->plan(), nullptr);
  EXPECT_TRUE(byDefault.program->plan()->recomputeByDefault);
  EXPECT_GT(byDefault.program->plan()->cost.stages[0].recompute, 0);
  IpuOptions off = o;
  off.recomputeWhenPipelined = false;
  Session stored = train(graphormer(0.1), reqs, off);
  EXPECT_FALSE(stored.program->options().recompute);
  EXPECT_FALSE(stored.program->plan()->recomputeByDefault);
  EXPECT_EQ(stored.program->plan()->cost.stages[0].recompute, 0);
  EXPECT_LT(byDefault.exec().ipuMemory(0).peakBytes(), stored.exec().ipuMemory(0).peakBytes());
  EXPECT_TRUE(bitEqual(byDefault.weights(), stored.weights())) << maxRelDiff(byDefault.weights(), stored.weights());

  IpuOptions sharded = o;
  sharded.executionStrategy = ExecutionStrategy::Sharded;
  IpuOptions one = o;
  one.pipelineSplits.clear();
  EXPECT_TRUE(o.recomputes(true, 2));
  EXPECT_FALSE(o.recomputes(false, 2));  // inference: no backward
  EXPECT_FALSE(one.recomputes(true, 1));
  EXPECT_FALSE(sharded.recomputes(true, 2));
  EXPECT_FALSE(off.recomputes(true, 2));
  off.recompute = true;  // asked for: on whatever the default
  EXPECT_TRUE(off.recomputes(true, 1));
  EXPECT_FALSE(off.recomputesByDefault(true, 2));
  EXPECT_FALSE(train(graphormer(0.1), reqs, sharded).program->options().recompute);
}

TEST(Recomputation, WorksWithFp16AndStochasticRounding) {
  IpuOptions o;
  o.gradientAccumulation = 2;
  o.pipelineSplits = {"layers/1"};
  o.precision = Precision::FP16;
  o.recomputeWhenPipelined = false;  // the run that stores activations (a pipeline recomputes by default)
  auto reqs = requests(3, 2, 2);
  Session kept = train(gin(0.3), reqs, o, Opt::Sgd);
  o.recompute = true;
  Session again = train(gin(0.3), reqs, o, Opt::Sgd);
  EXPECT_TRUE(bitEqual(kept.weights(), again.weights())) << maxRelDiff(kept.weights(), again.weights());
  o.stochasticRounding = true;
  Session s1 = train(gin(0.3), reqs, o, Opt::Sgd);
  Session s2 = train(gin(0.3), reqs, o, Opt::Sgd);
  EXPECT_TRUE(bitEqual(s1.weights(), s2.weights()));
}

// ---- 8-bit I/O -------------------------------------------------------------------------------------------

TEST(EightBitIo, SameResultsFewerBytesAndOutOfRangeRefusedByName) {
  IpuOptions o;
  o.gradientAccumulation = 2;
  // GIN's inputs: atom features and bonds (Graphormer's below).
  auto reqs = requests(2, 2, 3);
  for (Batch& r : reqs) r.spatialPos = r.inDegree = r.edgeInput = Tensor();
  auto run = [&](bool narrow) {
    IpuOptions x = o;
    x.eightBitIo = narrow;
    ExecutionContext::current().setRandomKey({5, 0, 0});
    Session t = compile(gin(), x, microBatch(reqs.front(), 0, 2));
    t.program->enableTrace(2);
    RunArgs args;
    args.seed = 5;
    for (const Batch& r : reqs) t.results.push_back(t.program->run(r, args));
    return t;
  };
  Session wide = run(false), narrow = run(true);
  EXPECT_TRUE(bitEqual(wide.weights(), narrow.weights()));
  auto h2d = [](const Trace& t) {
    int64_t b = 0;
    for (const auto& r : t.records())
      if (r.kind == TaskKind::HostToDevice) b += r.bytes;
    return b;
  };
  const Batch& b = reqs.front();
  // x and edge_attr (atom and bond feature ids, int64, which PopTorch streams as int32) cross as one byte per
  // value instead of four.
  ASSERT_EQ(b.x.dtype(), DType::I64);
  ASSERT_EQ(b.edgeAttr.dtype(), DType::I64);
  EXPECT_EQ(h2d(wide.program->trace()) - h2d(narrow.program->trace()), 2 * 3 * (b.x.numel() + b.edgeAttr.numel()));
  Batch bad = b;
  bad.x = b.x.clone();
  bad.x.data<int64_t>()[b.x.numel() / 2 + 5] = 300;  // in micro-batch 1 of the request
  try {
    narrow.program->run(bad);
    FAIL() << "a value above 255 crossed an 8-bit link";
  } catch (const std::invalid_argument& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("field 'x'"), std::string::npos) << w;
    EXPECT_NE(w.find("micro-batch 1"), std::string::npos) << w;
    EXPECT_NE(w.find("holds 300"), std::string::npos) << w;
  }
}

TEST(EightBitIo, GraphormerPairFieldsCrossWithTheirOffsetsAndSentinelOnTheDevice) {
  // edge_input stores bond feature f of a hop as value + 512 f (convert_to_single_emb) and spatial_pos marks an
  // unreachable pair with 510: the offsets are added back on the device and 510 crosses as 255, so Graphormer
  // trains on 8-bit I/O to the same bits.
  IpuOptions o;
  o.gradientAccumulation = 2;
  auto reqs = requests(2, 2, 3);
  const int64_t M = reqs.front().spatialPos.dim(1);
  for (Batch& r : reqs) {
    r.spatialPos = r.spatialPos.clone();
    r.spatialPos.data<int64_t>()[1] = 510;  // graph 0's pair (0, 1), as in a molecule of two fragments
    r.spatialPos.data<int64_t>()[M] = 510;
  }
  ASSERT_EQ(reqs.front().edgeInput.dtype(), DType::I64);
  int64_t offsetValues = 0;
  for (int64_t i = 0; i < reqs.front().edgeInput.numel(); ++i)
    offsetValues += std::as_const(reqs.front().edgeInput).data<int64_t>()[i] > 255;
  ASSERT_GT(offsetValues, 0);  // the second and third bond features sit above 512
  auto run = [&](bool narrow) {
    IpuOptions x = o;
    x.eightBitIo = narrow;
    ExecutionContext::current().setRandomKey({6, 0, 0});
    Session t = compile(graphormer(), x, microBatch(reqs.front(), 0, 2));
    RunArgs args;
    args.seed = 6;
    for (const Batch& r : reqs) t.results.push_back(t.program->run(r, args));
    return t;
  };
  Session wide = run(false), narrow = run(true);
  EXPECT_TRUE(bitEqual(wide.weights(), narrow.weights())) << maxRelDiff(wide.weights(), narrow.weights());
  // A hop distance the wire cannot carry (above 253, not the sentinel) is refused by name.
  Batch bad = reqs.front();
  bad.spatialPos = bad.spatialPos.clone();
  bad.spatialPos.data<int64_t>()[2] = 300;
  try {
    narrow.program->run(bad);
    FAIL() << "a hop distance of 300 crossed an 8-bit link";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("field 'spatial_pos'"), std::string::npos) << e.what();
  }
  // An edge_input value below its column's offset is not a bond feature: refused, never widened to another.
  bad = reqs.front();
  bad.edgeInput = bad.edgeInput.clone();
  bad.edgeInput.data<int64_t>()[1] = 100;  // column 1: values are 512 + 2 + feature
  EXPECT_THROW(narrow.program->run(bad), std::invalid_argument);
}

// ---- fp16 ------------------------------------------------------------------------------------------------

TEST(HalfPrecision, RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(roundToHalf(1.0f), 1.0f);
  EXPECT_EQ(roundToHalf(0.1f), 0.0999755859375f);
  // Ties to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 (odd): 1. 1 + 3·2^-11: halfway between
  // 1 + 2^-10 (odd) and 1 + 2^-9 (even): the latter.
  EXPECT_EQ(roundToHalf(1.0f + std::ldexp(1.0f, -11)), 1.0f);
  EXPECT_EQ(roundToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(roundToHalf(1e5f), 65504.0f);
  EXPECT_EQ(roundToHalf(-1e9f), -65504.0f);
  EXPECT_EQ(roundToHalf(INFINITY), 65504.0f);
  EXPECT_EQ(roundToHalf(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isnan(roundToHalf(NAN)));
  EXPECT_EQ(roundToHalf(std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(roundToHalf(std::ldexp(1.0f, -26)), 0.0f);
  Tensor t = Tensor::fromVector<float>({1.0f, 7e4f, -INFINITY, NAN, 0.5f}, {5});
  EXPECT_EQ(roundTensorToHalf(t, Rounding::Half), 3);
  EXPECT_EQ(t.data<float>()[1], 65504.0f);
}

TEST(HalfPrecision, StochasticRoundingIsUnbiasedAndReproducible) {
  // x = 1 + 2^-12: a quarter of the way from 1 to the next half, 1 + 2^-10.
  const float x = 1.0f + std::ldexp(1.0f, -12);
  const int64_t n = 200000;
  Tensor t = Tensor::full({n}, x, DType::F32);
  Tensor u = t.clone();
  const Generator g(42);
  roundTensorToHalf(t, Rounding::StochasticHalf, &g);
  roundTensorToHalf(u, Rounding::StochasticHalf, &g);
  EXPECT_TRUE(t.bitEqual(u));
  double sum = 0;
  int64_t up = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = t.data<float>()[i];
    ASSERT_TRUE(v == 1.0f || v == 1.0f + std::ldexp(1.0f, -10));
    up += v > 1.0f;
    sum += v;
  }
  EXPECT_NEAR(static_cast<double>(up) / n, 0.25, 0.005);
  EXPECT_NEAR(sum / n, static_cast<double>(x), 3e-6);
  EXPECT_EQ(roundToHalfStochastic(0.5f, 0.999), 0.5f);  // already a half
  Tensor other = Tensor::full({n}, x, DType::F32);
  const Generator g2(43);
  roundTensorToHalf(other, Rounding::StochasticHalf, &g2);
  EXPECT_FALSE(other.bitEqual(t));
}

TEST(HalfPrecision, Fp16TrainingIsReproducibleAndHalfValued) {
  for (bool stochastic : {false, true}) {
    IpuOptions o;
    o.replicationFactor = 2;
    o.gradientAccumulation = 2;
    o.pipelineSplits = {"layers/1"};
    o.precision = Precision::FP16;
    o.stochasticRounding = stochastic;
    auto reqs = requests(3, 4, 2);
    // SGD: Adam would scale the rounding noise of gradients that are zero in exact arithmetic up to +-lr.
    Session a = train(gin(0.2), reqs, o, Opt::Sgd);
    Session b = train(gin(0.2), reqs, o, Opt::Sgd);
    EXPECT_TRUE(bitEqual(a.weights(), b.weights())) << "stochastic " << stochastic;
    IpuOptions f32 = o;
    f32.precision = Precision::FP32;
    f32.stochasticRounding = false;
    Session c = train(gin(0.2), reqs, f32, Opt::Sgd);
    EXPECT_FALSE(bitEqual(a.weights(), c.weights()));
    EXPECT_LT(maxRelDiff(a.weights(), c.weights()), 0.1);
    // The outputs the device computed are halves.
    for (const auto& out : a.results.back().outputs) {
      Tensor h = out.output.clone();
      roundTensorToHalf(h, Rounding::Half);
      EXPECT_TRUE(h.bitEqual(out.output));
    }
  }
}

// --precision bf16 is an option of the program, not of the process: the CPU device runs its steps under it (the
// first micro-batch's output is the model's forward with bfloat16 products), the caller's context stays float32,
// and the simulated IPU refuses it.
TEST(Bf16Precision, TheCpuProgramRunsItsStepsUnderTheOptionAndLeavesTheCallerAlone) {
  const std::vector<Batch> reqs = requests(3, 1, 3);
  auto run = [&](Precision p, Tensor* firstOutput) {
    IpuOptions o;
    o.precision = p;
    o.outputMode = OutputMode::All;
    Session t;
    t.model = gin();
    t.optimizer = std::make_unique<SGD>(std::vector<ParamGroup>{{t.model->parameters(), 0.0}}, 0.05, 0.9);
    t.program = CpuDevice().compile(*t.model, l1(), t.optimizer.get(), reqs.front(), o);
    RunArgs args;
    args.seed = 5;
    for (const Batch& r : reqs) t.results.push_back(t.program->run(r, args));
    *firstOutput = t.results.front().outputs.front().output.clone();
    return t.weights();
  };
  ASSERT_EQ(ExecutionContext::current().matmulPrecision(), MatmulPrecision::Float32);
  Tensor bf16Out, bf16Again, fp32Out;
  const std::vector<Tensor> bf16 = run(Precision::BF16, &bf16Out);
  EXPECT_EQ(ExecutionContext::current().matmulPrecision(), MatmulPrecision::Float32);
  EXPECT_TRUE(bitEqual(bf16, run(Precision::BF16, &bf16Again)));
  EXPECT_TRUE(bf16Out.bitEqual(bf16Again));
  const std::vector<Tensor> fp32 = run(Precision::FP32, &fp32Out);
  EXPECT_FALSE(bitEqual(bf16, fp32));
  EXPECT_LT(maxRelDiff(bf16, fp32), 0.05);
  // The same forward on this thread, once with bfloat16 products and once without.
  auto forward = [&](MatmulPrecision p) {
    auto m = gin();
    ExecutionContext ctx;
    ctx.setMatmulPrecision(p);
    ContextScope use(ctx);
    return m->forward(reqs.front()).value().clone();
  };
  EXPECT_TRUE(bf16Out.bitEqual(forward(MatmulPrecision::BFloat16)));
  EXPECT_TRUE(fp32Out.bitEqual(forward(MatmulPrecision::Float32)));
  EXPECT_FALSE(bf16Out.bitEqual(fp32Out));

  IpuOptions o;
  o.precision = Precision::BF16;
  try {
    compile(gin(), o, reqs.front());
    ADD_FAILURE() << "the simulated IPU compiled a bf16 program";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parsePrecision("bfloat16"), Precision::BF16);
  EXPECT_STREQ(precisionName(Precision::BF16), "bf16");
}

TEST(HalfPrecision, OverflowingUpdateIsSkippedCountedAndTheScaleHalvesThenGrows) {
  IpuOptions o;
  o.precision = Precision::FP16;
  o.lossScaling = LossScaling::parse("dynamic:8192");
  o.lossScaling.growthInterval = 2;
  auto reqs = requests(5, 1, 3);
  // A loss that can be made to overflow in the backward: its gradient times 1e6 saturates half.
  auto blowUp = std::make_shared<bool>(false);
  LossFn loss{[blowUp](const Variable& out, const Batch& b) {
                Variable l = l1Loss(out, b.y, b.yMask);
                return *blowUp ? scale(l, 1e6) : l;
              },
              {}};
  ExecutionContext::current().setRandomKey({5, 0, 0});
  Session t = compile(gin(), o, reqs.front(), Opt::Adam, loss);
  EXPECT_EQ(t.program->lossScale(), 8192);
  RunResult r1 = t.program->run(reqs[0]);
  RunResult r2 = t.program->run(reqs[1]);
  EXPECT_EQ(r1.updates + r2.updates, 2);
  EXPECT_EQ(t.program->lossScale(), 16384);  // two clean updates in a row: doubled
  EXPECT_EQ(t.optimizer->stepCount(), 2);
  const auto weights = t.weights();
  const auto state = t.optimizer->state();
  *blowUp = true;
  RunResult r3 = t.program->run(reqs[2]);
  EXPECT_EQ(r3.updates, 0);
  EXPECT_EQ(r3.skippedUpdates, 1);
  EXPECT_EQ(t.program->skippedUpdates(), 1);
  EXPECT_EQ(t.program->lossScale(), 8192);  // halved
  EXPECT_EQ(t.optimizer->stepCount(), 2);
  EXPECT_TRUE(bitEqual(t.weights(), weights));
  EXPECT_TRUE(stateEqual(t.optimizer->state(), state));
  *blowUp = false;
  RunResult r4 = t.program->run(reqs[3]);
  EXPECT_EQ(r4.updates, 1);
  EXPECT_EQ(t.program->lossScale(), 8192);
  t.program->run(reqs[4]);
  EXPECT_EQ(t.program->lossScale(), 16384);  // grown again after two clean updates
  EXPECT_EQ(t.optimizer->stepCount(), 4);
  EXPECT_EQ(t.exec().overflowUpdates(), 1);

  // A scale far beyond what half holds saturates the backward's seed itself: skipped from the first update.
  o.lossScaling = LossScaling::parse("dynamic:1e30");
  ExecutionContext::current().setRandomKey({5, 0, 0});
  Session big = compile(gin(), o, reqs.front());
  const auto w0 = big.weights();
  RunResult s = big.program->run(reqs[0]);
  EXPECT_EQ(s.updates, 0);
  EXPECT_EQ(s.skippedUpdates, 1);
  EXPECT_EQ(big.program->lossScale(), 5e29);
  EXPECT_EQ(big.optimizer->stepCount(), 0);
  EXPECT_TRUE(bitEqual(big.weights(), w0));

  // Static scaling applies an overflowing update and counts it.
  o.lossScaling = LossScaling::parse("static:1e30");
  ExecutionContext::current().setRandomKey({5, 0, 0});
  Session st = compile(gin(), o, reqs.front(), Opt::Sgd);
  RunResult q = st.program->run(reqs[0]);
  EXPECT_EQ(q.updates, 1);
  EXPECT_EQ(q.skippedUpdates, 0);
  EXPECT_EQ(st.exec().overflowUpdates(), 1);
  EXPECT_EQ(st.program->lossScale(), 1e30);
}

}  // namespace
}  // namespace gnn
