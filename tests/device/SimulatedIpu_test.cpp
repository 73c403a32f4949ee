// The simulated IPU's execution model against the plain CPU device: replicas × accumulation × micro-batch give
// the weights of one batch of all their graphs; pipelined = sharded = unsplit; device iterations change only
// the number of requests; output modes; rules; shapes; traces; thread counts.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../models/GraphormerMolecules.h"
#include "BitEqual.h"
#include "SmallMolecules.h"
#include "device/CpuDevice.h"
#include "device/PipelineSchedule.h"
#include "device/SimulatedIpu.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"
#include "models/Graphormer.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

const std::vector<Graph>& molecules() {
  static const std::vector<Graph> g = test::pcqmStyle(64, 30);
  return g;
}

// Graphs [first, first + count) in one fixed-size batch of `slots` graph slots (the rest padding graphs).
Batch fixedBatch(size_t first, size_t count, int64_t slots, int64_t rows, int64_t maxNodes = 30) {
  const std::vector<Graph> gs(molecules().begin() + static_cast<long>(first),
                              molecules().begin() + static_cast<long>(first + count));
  FixedSizeOptions o;
  o.numGraphs = slots;
  o.numNodes = rows;
  o.numEdges = 2 * rows;
  o.maxNodesPerGraph = maxNodes;
  return FixedSizeCollator(o).collate(gs);
}

// Host requests of `microBatches` micro-batches of b real graphs each (b+1 slots), consecutive graphs.
std::vector<Batch> requests(int64_t count, int64_t microBatches, int64_t b, size_t first = 0) {
  std::vector<Batch> out;
  size_t next = first;
  for (int64_t r = 0; r < count; ++r) {
    std::vector<Batch> parts;
    for (int64_t m = 0; m < microBatches; ++m, next += static_cast<size_t>(b))
      parts.push_back(fixedBatch(next, static_cast<size_t>(b), b + 1, 30 * b + 8));
    out.push_back(microBatches == 1 ? parts.front() : stackMicroBatches(parts));
  }
  return out;
}

// The same graphs as `requests(count, updatesPerRequest·R·G, b)`, one CPU batch per weight update.
std::vector<Batch> cpuBatches(int64_t updates, int64_t graphsPerUpdate, size_t first = 0) {
  std::vector<Batch> out;
  for (int64_t u = 0; u < updates; ++u)
    out.push_back(fixedBatch(first + static_cast<size_t>(u * graphsPerUpdate), static_cast<size_t>(graphsPerUpdate),
                             graphsPerUpdate + 1, 30 * graphsPerUpdate + 8));
  return out;
}

LossFn l1() { return test::maskedL1(); }

std::unique_ptr<BlockModel> gin(double dropout = 0.0) { return test::smallGin(dropout); }

std::unique_ptr<BlockModel> graphormer() {
  Generator gen(12);
  GraphormerOptions o = GraphormerOptions::slim();
  o.layers = 3;
  o.hidden = 16;
  o.heads = 2;
  o.ffn = 16;
  o.dropout = o.attentionDropout = o.activationDropout = 0;
  o.packedRows = false;  // the static shapes an IPU compiles
  return std::make_unique<Graphormer>(o, gen);
}

struct Trained {
  std::vector<Tensor> weights;
  std::vector<RunResult> results;
  std::unique_ptr<DeviceProgram> program;
  std::unique_ptr<Optimizer> optimizer;  // the program points at it
};

Trained train(Device& dev, BlockModel& model, const std::vector<Batch>& reqs, const IpuOptions& o, int64_t traceReqs = 0,
              int64_t microSlots = 0, bool adam = true) {
  std::unique_ptr<Optimizer> optimizer;
  if (adam) optimizer = std::make_unique<Adam>(std::vector<ParamGroup>{{model.parameters(), 0.0}}, 1e-3);
  else optimizer = std::make_unique<SGD>(std::vector<ParamGroup>{{model.parameters(), 0.0}}, 0.05, 0.9);
  Optimizer& opt = *optimizer;
  ExecutionContext::current().setRandomKey({5, 0, 0});
  Trained t;
  // The micro-batch's shapes: the first micro-batch of the first request.
  const int64_t per = microSlots > 0 ? reqs.front().numGraphs / microSlots : o.microBatchesPerRequest();
  Batch shape = per == 1 ? reqs.front() : microBatch(reqs.front(), 0, per);
  t.program = dev.compile(model, l1(), &opt, shape, o);
  t.optimizer = std::move(optimizer);
  t.program->enableTrace(traceReqs);
  RunArgs args;
  args.seed = 5;
  for (const Batch& r : reqs) t.results.push_back(t.program->run(r, args));
  for (const Variable& p : model.parameters()) t.weights.push_back(p.value().clone());
  return t;
}

double maxRelDiff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor x = a[i].to(DType::F64), y = b[i].to(DType::F64);
    const double scale = std::max(1e-3, y.flat<double>().cwiseAbs().maxCoeff());
    const double d = (x.flat<double>() - y.flat<double>()).cwiseAbs().maxCoeff() / scale;
    if (getenv("GNN_DEBUG_DIFF") && d > 1e-6) std::cerr << "tensor " << i << " " << shapeString(x.shape()) << " " << d << "\n";
    worst = std::max(worst, d);
  }
  return worst;
}

using test::bitEqual;

TEST(PipelineSchedule, PopArtOrderAndStash) {
  PipelineSchedule s = PipelineSchedule::training(4, 8, ExecutionStrategy::Pipelined);
  ASSERT_EQ(s.lanes.size(), 4u);
  EXPECT_EQ(s.laneString(3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  EXPECT_EQ(s.laneString(0), "F0 F1 F2 F3 F4 F5 F6 B0 F7 B1 B2 B3 B4 B5 B6 B7");
  for (int64_t st = 0; st < 4; ++st) EXPECT_EQ(s.maxStashed(st), 2 * (4 - st) - 1) << "stage " << st;
  EXPECT_EQ(s.lanes[0].front().phase, PipelinePhase::Fill);
  EXPECT_EQ(s.lanes[3].front().phase, PipelinePhase::Main);
  EXPECT_EQ(s.lanes[0].back().phase, PipelinePhase::Flush);
  PipelineSchedule sh = PipelineSchedule::training(3, 2, ExecutionStrategy::Sharded);
  ASSERT_EQ(sh.lanes.size(), 1u);
  EXPECT_EQ(sh.laneString(0), "F0 F0 F0 B0 B0 B0 F1 F1 F1 B1 B1 B1");
  PipelineSchedule inf = PipelineSchedule::inference(2, 3, ExecutionStrategy::Pipelined);
  EXPECT_EQ(inf.laneString(1), "F0 F1 F2");
}

TEST(IpuOptions, RulesSayWhatToChange) {
  IpuOptions o;
  o.gradientAccumulation = 2;
  try {
    o.validate(true, 4);
    FAIL() << "accepted accumulation 2 with 4 pipelined stages";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("For pipelining, depth (gradient accumulation factor) must equal at least the "
                                         "number of pipeline stages (4)"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--grad-accum"), std::string::npos);
  }
  o.executionStrategy = ExecutionStrategy::Sharded;
  EXPECT_NO_THROW(o.validate(true, 4));
  IpuOptions inf;
  inf.gradientAccumulation = 2;
  EXPECT_THROW(inf.validate(false, 1), std::invalid_argument);
  IpuOptions round;
  round.replicationFactor = 3;
  EXPECT_EQ(round.numIpus(1), 3);
  round.autoRoundNumIpus = true;
  EXPECT_EQ(round.numIpus(1), 4);
  int64_t period = 0;
  EXPECT_EQ(parseOutputMode("every:3", &period), OutputMode::EveryN);
  EXPECT_EQ(period, 3);
  EXPECT_THROW(parseOutputMode("every:0", &period), std::invalid_argument);
  EXPECT_THROW(parseOutputMode("sometimes", &period), std::invalid_argument);
  EXPECT_EQ(o.resolvedOutputMode(true), OutputMode::Final);
  EXPECT_EQ(o.resolvedOutputMode(false), OutputMode::All);
}

TEST(SimulatedIpu, SplitsAreCheckedAgainstTheModelsBlocks) {
  auto model = gin();
  Adam opt({{model->parameters(), 0.0}}, 1e-3);
  SimulatedIpu ipu;
  const Batch b = requests(1, 1, 3).front();
  IpuOptions o;
  o.gradientAccumulation = 4;
  o.pipelineSplits = {"layers/7"};
  try {
    ipu.compile(*model, l1(), &opt, b, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("input, layers/0, layers/1, layers/2, head"), std::string::npos) << e.what();
  }
  o.pipelineSplits = {"layers/2", "layers/1"};
  EXPECT_THROW(ipu.compile(*model, l1(), &opt, b, o), std::invalid_argument);
  o.pipelineSplits = {"input"};
  EXPECT_THROW(ipu.compile(*model, l1(), &opt, b, o), std::invalid_argument);
  CpuDevice cpu;
  o.pipelineSplits = {"layers/1"};
  EXPECT_THROW(cpu.compile(*model, l1(), &opt, b, o), std::invalid_argument);
}

TEST(SimulatedIpu, ReplicasTimesAccumulationEqualOneBigBatchForGIN) {
  // 2 replicas × 2 micro-batches × 3 graphs = 12 graphs per update; 3 updates.
  IpuOptions o;
  o.replicationFactor = 2;
  o.gradientAccumulation = 2;
  auto ipuModel = gin();
  SimulatedIpu ipu;
  Trained a = train(ipu, *ipuModel, requests(3, 4, 3), o);
  auto cpuModel = gin();
  CpuDevice cpu;
  Trained b = train(cpu, *cpuModel, cpuBatches(3, 12), IpuOptions{});
  EXPECT_LE(maxRelDiff(a.weights, b.weights), 1e-5);
  EXPECT_EQ(a.results[0].updates, 1);
  EXPECT_EQ(a.results[0].samples, 12);
  EXPECT_EQ(a.program->numIpus(), 2);
  // And the weights moved: the comparison is not between two untrained models.
  auto fresh = gin();
  std::vector<Tensor> w0;
  for (const Variable& p : fresh->parameters()) w0.push_back(p.value());
  EXPECT_GT(maxRelDiff(a.weights, w0), 1e-4);
}

TEST(SimulatedIpu, ReplicasTimesAccumulationEqualOneBigBatchForGraphormer) {
  // SGD with momentum: the attention's key bias has an exactly-zero gradient in exact arithmetic (softmax does
  // not see a constant added to every key), so both sides hold rounding noise of ~1e-9 there, which Adam would
  // scale up to ±lr whatever the device.
  IpuOptions o;
  o.replicationFactor = 2;
  o.gradientAccumulation = 2;
  auto ipuModel = graphormer();
  SimulatedIpu ipu;
  Trained a = train(ipu, *ipuModel, requests(3, 4, 3), o, 0, 0, /*adam=*/false);
  auto cpuModel = graphormer();
  CpuDevice cpu;
  Trained b = train(cpu, *cpuModel, cpuBatches(3, 12), IpuOptions{}, 0, 0, /*adam=*/false);
  EXPECT_LE(maxRelDiff(a.weights, b.weights), 1e-5);
}

TEST(SimulatedIpu, PipelinedEqualsShardedEqualsUnsplit) {
  for (bool graphormerModel : {false, true}) {
    IpuOptions o;
    o.gradientAccumulation = 4;
    auto m0 = graphormerModel ? graphormer() : gin();
    SimulatedIpu ipu;
    Trained whole = train(ipu, *m0, requests(2, 4, 2), o);
    o.pipelineSplits = {"layers/0", "layers/2"};
    auto m1 = graphormerModel ? graphormer() : gin();
    Trained piped = train(ipu, *m1, requests(2, 4, 2), o);
    o.executionStrategy = ExecutionStrategy::Sharded;
    auto m2 = graphormerModel ? graphormer() : gin();
    Trained sharded = train(ipu, *m2, requests(2, 4, 2), o);
    EXPECT_TRUE(bitEqual(piped.weights, whole.weights)) << maxRelDiff(piped.weights, whole.weights);
    EXPECT_TRUE(bitEqual(sharded.weights, whole.weights)) << maxRelDiff(sharded.weights, whole.weights);
    EXPECT_EQ(piped.program->numIpus(), 3);
    EXPECT_EQ(piped.program->stageNames().size(), 3u);
  }
}

TEST(SimulatedIpu, DropoutMasksDoNotDependOnStagesOrThreads) {
  IpuOptions o;
  o.gradientAccumulation = 4;
  SimulatedIpu ipu;
  auto m0 = gin(0.3);
  Trained whole = train(ipu, *m0, requests(2, 4, 2), o);
  o.pipelineSplits = {"layers/1"};
  auto m1 = gin(0.3);
  Trained piped = train(ipu, *m1, requests(2, 4, 2), o);
  EXPECT_TRUE(bitEqual(piped.weights, whole.weights)) << maxRelDiff(piped.weights, whole.weights);
  const int before = numThreads();
  setDefaultThreads(1);
  auto m2 = gin(0.3);
  o.workers = 1;
  Trained one = train(ipu, *m2, requests(2, 4, 2), o);
  setDefaultThreads(0);
  (void)before;
  EXPECT_TRUE(bitEqual(one.weights, whole.weights));
  // Dropout is on: the masks changed the result (against a model without dropout).
  auto m3 = gin(0.0);
  Trained noDrop = train(ipu, *m3, requests(2, 4, 2), o);
  EXPECT_FALSE(bitEqual(noDrop.weights, whole.weights));
}

TEST(SimulatedIpu, DeviceIterationsChangeOnlyTheNumberOfRequests) {
  IpuOptions o;
  o.replicationFactor = 2;
  o.gradientAccumulation = 2;
  SimulatedIpu ipu;
  auto m0 = gin();
  Trained three = train(ipu, *m0, requests(3, 4, 2), o);
  o.deviceIterations = 3;
  auto m1 = gin();
  Trained once = train(ipu, *m1, requests(1, 12, 2), o);
  EXPECT_TRUE(bitEqual(three.weights, once.weights));
  EXPECT_EQ(once.results[0].updates, 3);
  EXPECT_EQ(once.program->hostRequests(), 1);
  EXPECT_EQ(three.program->hostRequests(), 3);
}

TEST(SimulatedIpu, OutputModesReturnWhatTheyPromise) {
  IpuOptions o;
  o.replicationFactor = 2;
  o.gradientAccumulation = 2;
  o.deviceIterations = 2;
  SimulatedIpu ipu;
  std::vector<MicroBatchOutput> all;
  for (const char* mode : {"all", "final", "every:3", "sum"}) {
    o.outputMode = parseOutputMode(mode, &o.outputPeriod);
    auto m = gin();
    Trained t = train(ipu, *m, requests(1, 8, 2), o);
    const auto& outs = t.results[0].outputs;
    const std::string what = mode;
    if (what == "all") {
      ASSERT_EQ(outs.size(), 8u);
      all = outs;
      for (const auto& x : outs) EXPECT_EQ(x.output.rows(), 3);
    } else if (what == "final") {
      ASSERT_EQ(outs.size(), 2u);  // the last micro-batch of each replica
      for (const auto& x : outs) EXPECT_TRUE(x.iteration == 1 && x.microBatch == 1);
      EXPECT_EQ(outs[0].loss, all[5].loss);  // replica 0's last: request position 1·4 + 0·2 + 1
      EXPECT_EQ(outs[1].loss, all[7].loss);
    } else if (what == "every:3") {
      // Steps j = iteration·2 + micro-batch with (j + 1) % 3 == 0: j = 2, per replica.
      ASSERT_EQ(outs.size(), 2u);
      for (const auto& x : outs) EXPECT_TRUE(x.iteration == 1 && x.microBatch == 0);
    } else {
      ASSERT_EQ(outs.size(), 2u);
      double s0 = 0;
      for (const auto& x : all)
        if (x.replica == 0) s0 += x.loss;
      EXPECT_DOUBLE_EQ(outs[0].loss, s0);
    }
  }
}

TEST(SimulatedIpu, PartialRequestsArePaddedOrDroppedAndCounted) {
  IpuOptions o;
  o.replicationFactor = 2;
  o.gradientAccumulation = 2;
  SimulatedIpu ipu;
  // 3 micro-batches of 3 graphs where an update takes 4: padded, the update is that of the 9 graphs.
  auto m0 = gin();
  Trained padded = train(ipu, *m0, requests(1, 3, 3), o, 0, 4);
  EXPECT_EQ(padded.results[0].paddedMicroBatches, 1);
  EXPECT_EQ(padded.results[0].samples, 9);
  EXPECT_EQ(padded.results[0].updates, 1);
  auto m1 = gin();
  CpuDevice cpu;
  Trained ref = train(cpu, *m1, cpuBatches(1, 9), IpuOptions{});
  EXPECT_LE(maxRelDiff(padded.weights, ref.weights), 1e-5);
  o.partialRequest = PartialRequest::Drop;
  auto m2 = gin();
  Trained dropped = train(ipu, *m2, requests(1, 3, 3), o, 0, 4);
  EXPECT_EQ(dropped.results[0].droppedMicroBatches, 3);
  EXPECT_EQ(dropped.results[0].updates, 0);
}

TEST(SimulatedIpu, ShapesOtherThanCompiledAreRefusedByName) {
  auto model = gin();
  Adam opt({{model->parameters(), 0.0}}, 1e-3);
  SimulatedIpu ipu;
  auto program = ipu.compile(*model, l1(), &opt, requests(1, 1, 3).front(), IpuOptions{});
  const Batch other = fixedBatch(0, 3, 4, 30 * 3 + 9);  // one more node row
  try {
    program->run(other);
    FAIL();
  } catch (const std::invalid_argument& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("not a whole number of the compiled micro-batch"), std::string::npos) << w;
  }
  FixedSizeOptions f;
  f.numGraphs = 4;
  f.numNodes = 98;
  f.numEdges = 2 * 98 + 2;  // same nodes and graphs, more edges
  f.maxNodesPerGraph = 30;
  const std::vector<Graph> gs(molecules().begin(), molecules().begin() + 3);
  try {
    program->run(FixedSizeCollator(f).collate(gs));
    FAIL();
  } catch (const std::invalid_argument& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("'edge_index' has shape [2, 198]"), std::string::npos) << w;
    EXPECT_NE(w.find("compiled for [2, 196]"), std::string::npos) << w;
  }
}

TEST(SimulatedIpu, NonFiniteLossStopsBeforeTheUpdate) {
  auto model = gin();
  std::vector<Tensor> before;
  for (const Variable& p : model->parameters()) before.push_back(p.value().clone());
  Adam opt({{model->parameters(), 0.0}}, 1e-3);
  SimulatedIpu ipu;
  IpuOptions o;
  o.gradientAccumulation = 2;
  LossFn bad{[](const Variable& out, const Batch& b) { return scale(l1Loss(out, b.y, b.yMask), NAN); }, {}};
  auto program = ipu.compile(*model, bad, &opt, requests(1, 1, 3).front(), o);
  EXPECT_THROW(program->run(requests(1, 2, 3).front()), NonFiniteLoss);
  std::vector<Tensor> after;
  for (const Variable& p : model->parameters()) after.push_back(p.value());
  EXPECT_TRUE(bitEqual(before, after));
  EXPECT_EQ(opt.stepCount(), 0);
}

TEST(SimulatedIpu, InferenceProgramsReturnEveryOutput) {
  IpuOptions o;
  o.replicationFactor = 2;
  o.deviceIterations = 2;
  o.pipelineSplits = {"layers/1"};
  auto model = gin();
  model->eval();
  SimulatedIpu ipu;
  const Batch req = requests(1, 4, 3).front();
  auto program = ipu.compile(*model, {}, nullptr, microBatch(req, 0, 4), o);
  RunResult r = program->run(req);
  ASSERT_EQ(r.outputs.size(), 4u);
  for (int64_t m = 0; m < 4; ++m) {
    NoGradGuard ng;
    Tensor direct = model->forward(microBatch(req, m, 4)).value();
    EXPECT_TRUE(direct.bitEqual(r.outputs[static_cast<size_t>(m)].output)) << "micro-batch " << m;
  }
}

TEST(SimulatedIpu, FourStageGraphormerTraceHasFourIpuTracksAndPhases) {
  IpuOptions o;
  o.gradientAccumulation = 8;
  o.pipelineSplits = {"layers/0", "layers/1", "layers/2"};
  auto model = graphormer();
  SimulatedIpu ipu;
  Trained t = train(ipu, *model, requests(2, 8, 2), o, /*traceReqs=*/1);
  const std::string dir = ::testing::TempDir();
  t.program->trace().writeChromeJson(dir + "/trace.json", "test");
  t.program->trace().writeSvg(dir + "/trace.svg", "test");
  std::ifstream f(dir + "/trace.json");
  nlohmann::json j = nlohmann::json::parse(f);
  std::set<int64_t> ipuTracks;
  int64_t forwards = 0, backwards = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"].get<std::string>().rfind("IPU ", 0) == 0)
      ipuTracks.insert(e["tid"].get<int64_t>());
    if (e["ph"] == "X" && e["cat"] == "forward") ++forwards;
    if (e["ph"] == "X" && e["cat"] == "backward") ++backwards;
  }
  EXPECT_GE(ipuTracks.size(), 4u);
  EXPECT_EQ(forwards, 4 * 8);  // one request traced: 4 stages × 8 micro-batches
  EXPECT_EQ(backwards, 4 * 8);
  std::ifstream s(dir + "/trace.svg");
  std::stringstream svg;
  svg << s.rdbuf();
  for (const char* word : {">fill<", ">main<", ">flush<", "<svg", "</svg>"})
    EXPECT_NE(svg.str().find(word), std::string::npos) << word;
  const std::string table = t.program->stageTable();
  EXPECT_NE(table.find("layers/2..head"), std::string::npos) << table;
  EXPECT_EQ(t.program->record().stages.size(), 4u);
  int64_t params = 0;
  for (const auto& st : t.program->record().stages) params += st.parameters;
  EXPECT_EQ(params, model->numParameters());
  EXPECT_GT(t.program->record().ops.size(), 50u);
}

}  // namespace
}  // namespace gnn
