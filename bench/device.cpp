// bench_device: what the simulated IPU's execution model costs on this machine's CPU. Two comparisons, each in
// one run with interleaved rounds (a change of machine load hits both sides alike):
//   overhead: GIN training steps on CpuDevice vs SimulatedIpu with 1 replica and 1 stage (the task machinery,
//     gradient sinks and trace records around the same forward/backward/update): ratio of median step times.
//   pipelining: Graphormer-slim, 8 micro-batches per update, unsplit vs 4 pipelined stages on simulated IPUs:
//     CPU wall time per update. On 2 cores, 4 stages cannot run at once; this is what pipelining costs or
//     saves here, not on IPUs (their time is the cost model's, part 2).
// Prints one JSON object.
//
//   bench_device [--rounds 5 --steps-per-round 4 --batch-size 64]

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/HeapTuning.h"
#include "app/MoleculeData.h"
#include "app/Program.h"
#include "app/ShippedData.h"
#include "app/TrainingFlags.h"
#include "device/CpuDevice.h"
#include "device/SimulatedIpu.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/SystemInfo.h"
#include "loaders/FixedSizeDataLoader.h"
#include "models/Graphormer.h"
#include "models/OgbMolGIN.h"

namespace po = boost::program_options;
using namespace gnn;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct Side {
  std::string name;
  std::unique_ptr<BlockModel> model;
  std::unique_ptr<Adam> opt;
  std::unique_ptr<DeviceProgram> program;
  std::unique_ptr<FixedSizeDataLoader> loader;
  int64_t perRequest = 1, epoch = 0, graphs = 0;
  std::vector<double> seconds;

  void step() {
    Batch req;
    while (!loader->nextRequest(req) || req.numGraphs != perRequest * program->record().numGraphs)
      loader->startEpoch(++epoch);
    ExecutionContext::current().setRandomKey({0, static_cast<uint64_t>(opt->stepCount()), 0});
    const auto t0 = Clock::now();
    RunResult r = program->run(req);
    seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(r.updates));
    graphs += r.samples;
  }
};

LossFn l1() {
  return {[](const Variable& out, const Batch& b) { return l1Loss(out, b.y, b.yMask); }, {}};
}

Side make(const std::string& name, std::unique_ptr<BlockModel> model, Device& dev, const IpuOptions& o,
          std::shared_ptr<const Dataset> train, const FixedSizeOptions& fixed) {
  Side s;
  s.name = name;
  s.model = std::move(model);
  s.opt = std::make_unique<Adam>(std::vector<ParamGroup>{{s.model->parameters(), 0.0}}, 1e-4);
  FixedSizeDataLoader::Options lo;
  lo.microBatchesPerRequest = o.microBatchesPerRequest();
  s.perRequest = lo.microBatchesPerRequest;
  s.loader = std::make_unique<FixedSizeDataLoader>(train, fixed, lo);
  s.loader->startEpoch(0);
  s.program = dev.compile(*s.model, l1(), s.opt.get(), s.loader->collateBatch(0), o);
  return s;
}

constexpr const char* kSummary =
    "the simulated IPU's cost on a CPU.\n\n"
    "Measures: overhead = median step time of GIN on SimulatedIpu (1 replica, 1 stage) / on CpuDevice;\n"
    "  pipelining = CPU wall time per update of Graphormer-slim on 4 pipelined stages / unsplit, 8\n"
    "  micro-batches per update. Both sides of each comparison run interleaved in rounds, in this run.\n"
    "  No stored figures are compared.";

struct Options {
  std::string data;
  int64_t rounds = 5, stepsPerRound = 4, batchSize = 64, limit = 4000;
  int threads = 0;
};

void addFlags(app::Program& prog, Options& o) {
  auto flag = prog.flags().add_options();
  flag("data",
       po::value(&o.data)->default_value(app::defaultMoleculeDataPath(), app::shippedDataLabel("pcqm4mv2_style")),
       "molecule set: PCQM4Mv2 layout, MoleculeNet CSV or a built .npz");
  flag("rounds", app::value(&o.rounds, int64_t{5}), "interleaved rounds");
  flag("steps-per-round", app::value(&o.stepsPerRound, int64_t{4}), "updates of each side per round");
  flag("batch-size", app::value(&o.batchSize, int64_t{64}), "GIN: molecules per step; Graphormer: per micro-batch / 8");
  flag("limit", app::value(&o.limit, int64_t{4000}), "first N molecules only (-1: all)");
  flag("threads", app::value(&o.threads, 0), "threads for ops (0: every core)");
}

void checkOptions(const Options& o) {
  app::requireAtLeast("--rounds", static_cast<double>(o.rounds), 1);
  app::requireAtLeast("--steps-per-round", static_cast<double>(o.stepsPerRound), 1);
  app::requireAtLeast("--batch-size", static_cast<double>(o.batchSize), 8);
}

app::MoleculeData openMolecules(const Options& o) {
  app::MoleculeDataOptions mo;
  mo.path = o.data;
  mo.limit = o.limit;
  mo.graphormerMaxDist = 5;  // Graphormer's encodings (GIN ignores them)
  return app::openMoleculeData(mo);
}

// GIN on CpuDevice, then on a SimulatedIpu with 1 replica and 1 stage.
std::vector<Side> overheadSides(Device& cpu, Device& ipu, std::shared_ptr<const Dataset> train, int64_t batchSize) {
  auto gin = [] {
    Generator gen(0);
    GraphModelOptions o;
    return std::unique_ptr<BlockModel>(std::make_unique<OgbMolGIN>(o, gen));
  };
  const FixedSizeOptions ginFixed = FixedSizeOptions::fromDataset(*train, batchSize + 1);
  std::vector<Side> overhead;
  overhead.push_back(make("cpu", gin(), cpu, IpuOptions{}, train, ginFixed));
  overhead.push_back(make("ipu_1x1", gin(), ipu, IpuOptions{}, train, ginFixed));
  return overhead;
}

// Graphormer-slim on the training molecules of at most 30 nodes, 8 micro-batches per update: unsplit, then on 4
// pipelined stages.
std::vector<Side> pipeliningSides(Device& ipu, const app::MoleculeData& md, const Dataset& train, int64_t batchSize) {
  auto slim = [] {
    Generator gen(0);
    return std::unique_ptr<BlockModel>(std::make_unique<Graphormer>(GraphormerOptions::slim(), gen));
  };
  FixedSizeOptions gf = FixedSizeOptions::fromDataset(train, batchSize / 8 + 1);
  gf.maxNodesPerGraph = 30;
  gf.numNodes = std::max(gf.numNodes, 30 * (batchSize / 8) + 1);
  gf.numEdges = std::max(gf.numEdges, 70 * (batchSize / 8) + 1);
  IpuOptions unsplit;
  unsplit.gradientAccumulation = 8;
  IpuOptions piped = unsplit;
  piped.pipelineSplits = {"layers/3", "layers/6", "layers/9"};
  auto small = std::make_shared<Subset>(md.dataset, [&] {
    std::vector<size_t> keep;
    for (int64_t i : md.split.train)
      if (md.dataset->numNodes(static_cast<size_t>(i)) <= 30) keep.push_back(static_cast<size_t>(i));
    return keep;
  }());
  std::vector<Side> pipelining;
  pipelining.push_back(make("unsplit", slim(), ipu, unsplit, small, gf));
  pipelining.push_back(make("pipelined_4", slim(), ipu, piped, small, gf));
  return pipelining;
}

// One warm-up step of each side, then `rounds` rounds of `stepsPerRound` timed steps of each side in turn.
void runRounds(std::vector<Side>& sides, const Options& o) {
  for (auto& s : sides) s.step();  // warm-up: compile record, buffers
  for (auto& s : sides) s.seconds.clear(), s.graphs = 0;
  for (int64_t r = 0; r < o.rounds; ++r)
    for (auto& s : sides)
      for (int64_t k = 0; k < o.stepsPerRound; ++k) s.step();
}

nlohmann::json report(const Options& o, const std::vector<Side>& overhead, const std::vector<Side>& pipelining) {
  nlohmann::json out;
  out["machine"] = {{"cores", machineCores()}, {"threads", numThreads()}};
  const double cpuMs = median(overhead[0].seconds) * 1e3, ipuMs = median(overhead[1].seconds) * 1e3;
  out["overhead"] = {{"model", "GIN 5x300"},
                     {"batch_size", o.batchSize},
                     {"cpu_device_step_ms", cpuMs},
                     {"simulated_ipu_1x1_step_ms", ipuMs},
                     {"ratio_ipu_over_cpu", ipuMs / cpuMs},
                     {"goal", "<= 1.10"}};
  const double unMs = median(pipelining[0].seconds) * 1e3, pipeMs = median(pipelining[1].seconds) * 1e3;
  out["pipelining"] = {{"model", "Graphormer-slim"},
                       {"micro_batch", o.batchSize / 8},
                       {"micro_batches_per_update", 8},
                       {"unsplit_update_ms", unMs},
                       {"pipelined_4_stages_update_ms", pipeMs},
                       {"ratio_pipelined_over_unsplit", pipeMs / unMs},
                       {"workers", std::min<int64_t>(machineCores(), 4)},
                       {"stage_table", pipelining[1].program->stageTable()}};
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  app::Program prog("bench_device", kSummary);
  Options o;
  addFlags(prog, o);
  return prog.run(argc, argv, [&] {
    checkOptions(o);
    app::applyThreads(o.threads);
    app::keepFreedMemoryInHeap();
    const app::MoleculeData md = openMolecules(o);
    auto train =
        std::make_shared<Subset>(md.dataset, std::vector<size_t>(md.split.train.begin(), md.split.train.end()));
    CpuDevice cpu;
    SimulatedIpu ipu;
    std::vector<Side> overhead = overheadSides(cpu, ipu, train, o.batchSize);
    std::vector<Side> pipelining = pipeliningSides(ipu, md, *train, o.batchSize);
    runRounds(overhead, o);
    runRounds(pipelining, o);
    std::cout << report(o, overhead, pipelining).dump(1) << std::endl;
    return 0;
  });
}
