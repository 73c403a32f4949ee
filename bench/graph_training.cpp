// bench_graph_training: end-to-end graph-level training throughput (real graphs/s) of one model with PadToMax,
// StreamPack and PlannedPack batches at the same number of real graphs per step, in one run. Steps of the
// strategies are interleaved in rounds, so a change in machine load (shared cores) hits all of them alike.
// Prints one JSON object with graphs/s per strategy (over all timed steps, and at the median step time, which
// a passing hiccup of a shared machine does not move) and the PlannedPack / PadToMax ratio; for GIN also a
// roofline: the step's fp32 GEMM work timed alone and the machine's FMA peak, as bounds on graphs/s.
//
//   bench_graph_training [--model gin --layers 5 --hidden 300 --batch-size 128 --rounds 4 --steps-per-round 5]

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "bench/FmaPeak.h"
#include "app/ComputeInfo.h"
#include "app/HeapTuning.h"
#include "app/MoleculeData.h"
#include "app/Program.h"
#include "app/ShippedData.h"
#include "app/TrainingFlags.h"
#include "gnn/autograd/Profiler.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"
#include "loaders/FixedSizeDataLoader.h"
#include "models/OgbMolGCN.h"
#include "models/OgbMolGIN.h"

namespace po = boost::program_options;
using namespace gnn;
using Clock = std::chrono::steady_clock;

namespace {
using bench::FmaPeak;
using bench::measureFmaPeak;

struct Runner {
  PackingStrategy strategy;
  FixedSizeOptions fixed;
  std::unique_ptr<FixedSizeDataLoader> loader;
  std::unique_ptr<GraphModel> model;
  std::unique_ptr<Adam> opt;
  int64_t epoch = 0, steps = 0, graphs = 0, nodes = 0, totalNodes = 0;
  std::vector<double> stepSeconds;
  double seconds = 0, loadSeconds = 0, forwardSeconds = 0, backwardSeconds = 0, optimizerSeconds = 0;

  // One training step on the next batch (a new epoch when the current one is over); returns false never.
  void step() {
    auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    auto t0 = Clock::now();
    Batch b;
    while (!loader->next(b)) loader->startEpoch(++epoch);
    loadSeconds += since(t0);
    auto t1 = Clock::now();
    opt->zeroGrad();
    ExecutionContext::current().setRandomKey({0, static_cast<uint64_t>(opt->stepCount()), 0});
    Variable loss = l1Loss(model->forward(b), b.y, b.yMask);
    forwardSeconds += since(t1);
    auto t2 = Clock::now();
    loss.backward();
    backwardSeconds += since(t2);
    auto t3 = Clock::now();
    opt->step();
    optimizerSeconds += since(t3);
    stepSeconds.push_back(since(t0));
    seconds += stepSeconds.back();
    ++steps;
    graphs += b.numRealGraphs;
    nodes += b.numRealNodes;
    totalNodes += b.numNodes;
  }

  // Forgets the steps taken so far (the warm-up's); the epoch goes on.
  void clearCounts() {
    steps = graphs = nodes = totalNodes = 0;
    stepSeconds.clear();
    seconds = loadSeconds = forwardSeconds = backwardSeconds = optimizerSeconds = 0;
  }

  double perStep(double total) const { return total / static_cast<double>(steps); }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Time of the GEMM part of one GIN step of `nodes` rows, alone: per layer Linear(D, 2D) and Linear(2D, D)
// forward and backward (input and weight gradients), through the same ops the model uses.
double gemmOnlySeconds(int64_t nodes, int64_t hidden, int64_t layers, int repeats) {
  Generator g(1);
  Variable x(init::uniform({nodes, hidden}, -1, 1, g), true);
  std::vector<Variable> w1, w2;
  for (int64_t l = 0; l < layers; ++l) {
    w1.emplace_back(init::uniform({2 * hidden, hidden}, -0.05, 0.05, g), true);
    w2.emplace_back(init::uniform({hidden, 2 * hidden}, -0.05, 0.05, g), true);
  }
  Tensor seed = init::uniform({nodes, hidden}, -1, 1, g);
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = Clock::now();
    Variable h = x;
    for (int64_t l = 0; l < layers; ++l) h = linear(linear(h, w1[l]), w2[l]);
    h.backward(seed);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    x.zeroGrad();
    for (auto& w : w1) w.zeroGrad();
    for (auto& w : w2) w.zeroGrad();
  }
  return best;
}

// What one training step keeps in memory, measured on a step of `r` under its own memory account: the peak
// tensor bytes of the step (activations, gradients, temporaries; parameters and optimizer state live
// outside it), the bytes the tape saves for the backward, and the bytes the previous tape held at least
// (it kept every recorded op's input values until the backward: every op output that fed another op).
nlohmann::json stepMemory(Runner& r) {
  // Every recorded op of this model writes a new buffer (no views), so their sizes add up; buffers freed during
  // the forward are reused at the same addresses, so they are not told apart by storageId().
  struct Outputs : OpObserver {
    int64_t bytes = 0;
    void onOp(const OpEvent& e) override {
      if (e.pass == Pass::Forward && e.recorded && e.output) bytes += static_cast<int64_t>(e.output->storageBytes());
    }
  } outputs;
  auto account = std::make_shared<MemoryAccount>("step");
  ExecutionContext ctx;
  ctx.setMemoryAccount(account);
  ctx.setRandomKey(ExecutionContext::current().randomKey());
  ctx.setThreads(numThreads());
  int64_t saved = 0, afterForward = 0, peakForward = 0;
  {
    ContextScope use(ctx);
    Batch b;
    while (!r.loader->next(b)) r.loader->startEpoch(++r.epoch);
    account->resetPeak();
    const int64_t start = account->currentBytes();
    r.opt->zeroGrad();
    Variable loss;
    {
      ObserverScope watch(outputs);
      loss = l1Loss(r.model->forward(b), b.y, b.yMask);
    }
    saved = tapeStats(loss).savedBytes;
    afterForward = account->currentBytes() - start;
    peakForward = account->peakBytes() - start;
    loss.backward();
    r.opt->step();
  }
  const int64_t outputBytes = outputs.bytes;
  auto mb = [](int64_t b) { return static_cast<double>(b) / (1 << 20); };
  return {{"strategy", packingStrategyName(r.strategy)},
          {"num_nodes", r.fixed.numNodes},
          {"tape_saved_mb", mb(saved)},
          {"held_after_forward_mb", mb(afterForward)},
          {"peak_forward_mb", mb(peakForward)},
          {"peak_step_mb", mb(account->peakBytes())},
          {"previous_tape_held_at_least_mb", mb(outputBytes)},
          {"held_after_forward_over_previous", static_cast<double>(afterForward) / static_cast<double>(outputBytes)}};
}

constexpr const char* kSummary =
    "graph-level training throughput with fixed-size batches.\n\n"
    "Measures: real (not padding) graphs trained per second, graphs/s, of one model (forward,\n"
    "  backward, Adam step) with each batching strategy at the same real graphs per step; the\n"
    "  strategies' timed steps run interleaved in rounds, so a change of machine load hits all alike.\n"
    "Compared with: the other strategies in the same run: plan_over_pad = PlannedPack graphs/s /\n"
    "  PadToMax graphs/s. GIN roofline: graphs/s bounds from the step's GEMM work timed alone and at the\n"
    "  machine's FMA peak, both measured in this run. memory: one step's tensor MB;\n"
    "  held_after_forward_over_previous = MB held after the forward / MB the previous tape held at least.\n"
    "  No stored figures are compared.";

struct Options {
  std::string data, modelName, strategies, precision = "fp32";
  int64_t layers = 5, hidden = 300, batchSize = 128, rounds = 4, stepsPerRound = 5, limit = -1;
  int threads = 0;
  bool roofline = true, memory = true, profile = false;
};

void addFlags(app::Program& prog, Options& o) {
  auto flag = prog.flags().add_options();
  flag("data",
       po::value(&o.data)->default_value(app::defaultMoleculeDataPath(),
                                         app::shippedDataLabel("pcqm4mv2_style")),
       "molecule set: PCQM4Mv2 layout, MoleculeNet CSV or a built .npz");
  flag("model", app::value(&o.modelName, "gin"), "gin | gcn");
  flag("layers", app::value(&o.layers, int64_t{5}), "message-passing layers");
  flag("hidden", app::value(&o.hidden, int64_t{300}), "hidden width");
  flag("batch-size", app::value(&o.batchSize, int64_t{128}),
       "real graphs per step (pad) / graph cap (packing)");
  flag("rounds", app::value(&o.rounds, int64_t{4}), "interleaved rounds");
  flag("steps-per-round", app::value(&o.stepsPerRound, int64_t{5}), "steps of each strategy per round");
  flag("limit", app::value(&o.limit, int64_t{-1}), "first N molecules only (-1: all)");
  flag("threads", app::value(&o.threads, 0), "threads for ops (0: every core; at most the machine's cores)");
  flag("strategies", app::value(&o.strategies, "pad,stream,plan"),
       "comma-separated subset of pad, stream, plan");
  flag("roofline", po::value(&o.roofline)->default_value(true, "true"),
       "GIN: also time the step's GEMMs alone and the machine's FMA peak (bounds on graphs/s)");
  flag(
      "memory", po::value(&o.memory)->default_value(true, "true"),
      "also measure one step's memory: peak tensor bytes, bytes the tape saves, what the previous tape held");
  flag("precision", app::value(&o.precision, "fp32"),
       "fp32 | bf16: the matrix products' inputs (bf16: fp32 accumulation, every other op in fp32); the roofline's "
       "GEMMs run in the same precision");
  flag("profile", po::bool_switch(&o.profile),
       "profile one more step: per-op table on stderr, rows under \"profile\"");
}

// Sets the matmul precision once --model and --precision are known good, then refuses the rest of a bad command
// line (UsageError in flag terms). Returns the names --strategies chose.
std::vector<std::string> applyOptions(const Options& o) {
  app::requireOneOf("--model", o.modelName, {"gin", "gcn"});
  app::requireOneOf("--precision", o.precision, {"fp32", "bf16"});
  // The benchmark's steps and its roofline's GEMMs run on this thread's context (and parallelFor's workers under it).
  ExecutionContext::current().setMatmulPrecision(parseMatmulPrecision(o.precision));
  if (o.strategies.find_first_not_of(',') == std::string::npos)
    throw app::UsageError("--strategies '" + o.strategies + "': names none of pad, stream, plan");
  std::vector<std::string> chosen = app::requireListOf("--strategies", o.strategies, {"pad", "stream", "plan"});
  app::requireAtLeast("--layers", static_cast<double>(o.layers), 1);
  app::requireAtLeast("--hidden", static_cast<double>(o.hidden), 1);
  app::requireAtLeast("--batch-size", static_cast<double>(o.batchSize), 1);
  app::requireAtLeast("--rounds", static_cast<double>(o.rounds), 1);
  app::requireAtLeast("--steps-per-round", static_cast<double>(o.stepsPerRound), 1);
  if (o.limit != -1) app::requireAtLeast("--limit", static_cast<double>(o.limit), 1);
  return chosen;
}

// The whole molecule set (the batch shapes come from it) and its training split (the batches).
struct Molecules {
  std::shared_ptr<const Dataset> all;
  std::shared_ptr<const Dataset> train;
};

Molecules openMolecules(const Options& o) {
  app::MoleculeDataOptions mo;
  mo.path = o.data;
  mo.limit = o.limit;
  app::MoleculeData md = app::openMoleculeData(mo);  // refuses a split without training molecules
  Molecules m;
  m.all = md.dataset;
  m.train = std::make_shared<Subset>(m.all, std::vector<size_t>(md.split.train.begin(), md.split.train.end()));
  return m;
}

// A strategy's loader, model and optimizer, after one untimed warm-up step.
Runner makeRunner(PackingStrategy s, const Options& o, const Molecules& m) {
  Runner r;
  r.strategy = s;
  r.fixed = s == PackingStrategy::PadToMax ? FixedSizeOptions::fromDataset(*m.all, o.batchSize + 1)
                                           : FixedSizeOptions::forPacking(*m.all, o.batchSize);
  FixedSizeDataLoader::Options lo;
  lo.strategy = s;
  r.loader = std::make_unique<FixedSizeDataLoader>(m.train, r.fixed, lo);
  r.loader->startEpoch(0);
  Generator gen(0);  // same initial weights for every strategy
  GraphModelOptions mopt;
  mopt.layers = o.layers;
  mopt.hidden = o.hidden;
  if (o.modelName == "gcn")
    r.model = std::make_unique<OgbMolGCN>(mopt, gen);
  else
    r.model = std::make_unique<OgbMolGIN>(mopt, gen);
  r.opt = std::make_unique<Adam>(std::vector<ParamGroup>{{r.model->parameters(), 0.0}}, 1e-3);
  r.step();  // warm-up (first allocations), not timed below
  r.clearCounts();
  return r;
}

std::vector<Runner> makeRunners(const Options& o, const std::vector<std::string>& chosen, const Molecules& m) {
  std::vector<Runner> runners;
  for (PackingStrategy s : {PackingStrategy::PadToMax, PackingStrategy::StreamPack, PackingStrategy::PlannedPack}) {
    if (std::find(chosen.begin(), chosen.end(), packingStrategyName(s)) == chosen.end()) continue;
    runners.push_back(makeRunner(s, o, m));
  }
  return runners;
}

void runRounds(std::vector<Runner>& runners, const Options& o) {
  for (int64_t round = 0; round < o.rounds; ++round)
    for (Runner& r : runners)
      for (int64_t s = 0; s < o.stepsPerRound; ++s) r.step();
}

// How fast could a step be? Its fp32 GEMM work alone, at the machine's FMA peak and at the speed the GEMMs
// actually run, for the PlannedPack batch shape (null without a PlannedPack runner).
nlohmann::json roofline(const Options& o, const std::vector<Runner>& runners) {
  nlohmann::json out;
  for (const Runner& r : runners) {
    if (r.strategy != PackingStrategy::PlannedPack) continue;
    const double graphsPerStep = r.perStep(static_cast<double>(r.graphs));
    const double flop = 2.0 * 3.0 * static_cast<double>(o.layers) * static_cast<double>(r.fixed.numNodes) * 2.0 *
                        static_cast<double>(o.hidden * 2 * o.hidden);
    const FmaPeak fma = measureFmaPeak(static_cast<int>(numThreads()));
    const double peak = fma.gflops;
    const double gemmSeconds = gemmOnlySeconds(r.fixed.numNodes, o.hidden, o.layers, 5);
    out = {{"batch_nodes", r.fixed.numNodes},
           {"gemm_gflop_per_step", flop / 1e9},
           {"fma_peak_gflop_per_s", peak},
           {"fma_peak_isa", fma.isa},
           {"gemm_only_seconds_per_step", gemmSeconds},
           {"gemm_gflop_per_s", flop / 1e9 / gemmSeconds},
           {"step_share_in_gemm", gemmSeconds / r.perStep(r.seconds)},
           {"bound_graphs_per_s_at_fma_peak", graphsPerStep / (flop / 1e9 / peak)},
           {"bound_graphs_per_s_gemm_only", graphsPerStep / gemmSeconds}};
  }
  return out;
}

struct ProfiledStep {
  nlohmann::json rows;
  double linearGflop = 0;
};

// One more step of `r` under the profiler: the per-op table on stderr, whose linear FLOPs are the roofline's GEMM
// FLOPs plus the head's.
ProfiledStep profiledStep(Runner& r) {
  OpProfiler prof;
  {
    ObserverScope watch(prof);
    r.step();
  }
  prof.print(std::cerr);
  return {prof.json(), static_cast<double>(prof.flopsOf("linear")) / 1e9};
}

// What is measured after the timed rounds, in this order, each when its flag asks for it.
struct AfterRounds {
  nlohmann::json roofline, memory;
  std::optional<ProfiledStep> profile;
};

AfterRounds measureAfterRounds(const Options& o, std::vector<Runner>& runners) {
  AfterRounds a;
  if (o.roofline && o.modelName == "gin") a.roofline = roofline(o, runners);
  // The last strategy's next steps: first the one under its own memory account, then the profiled one.
  if (o.memory && !runners.empty()) a.memory = stepMemory(runners.back());
  if (o.profile && !runners.empty()) a.profile = profiledStep(runners.back());
  return a;
}

nlohmann::json strategyJson(const Runner& r) {
  return {{"strategy", packingStrategyName(r.strategy)},
          {"num_nodes", r.fixed.numNodes},
          {"num_edges", r.fixed.numEdges},
          {"num_graphs", r.fixed.numGraphs},
          {"real_graphs_per_step", r.perStep(static_cast<double>(r.graphs))},
          {"node_efficiency", static_cast<double>(r.nodes) / static_cast<double>(r.totalNodes)},
          {"seconds_per_step", r.perStep(r.seconds)},
          {"step_split_s",
           {{"load", r.perStep(r.loadSeconds)},
            {"forward", r.perStep(r.forwardSeconds)},
            {"backward", r.perStep(r.backwardSeconds)},
            {"optimizer", r.perStep(r.optimizerSeconds)}}},
          {"real_graphs_per_s", static_cast<double>(r.graphs) / r.seconds},
          {"real_graphs_per_s_at_median_step", r.perStep(static_cast<double>(r.graphs)) / median(r.stepSeconds)}};
}

nlohmann::json report(const Options& o, const std::vector<Runner>& runners, const AfterRounds& a) {
  nlohmann::json out;
  out["data"] = o.data;
  out["model"] = o.modelName;
  out["layers"] = o.layers;
  out["hidden"] = o.hidden;
  out["batch_size"] = o.batchSize;
  out["threads"] = numThreads();
  out["steps_per_strategy"] = o.rounds * o.stepsPerRound;
  double padRate = 0, planRate = 0;
  for (const Runner& r : runners) {
    const double rate = static_cast<double>(r.graphs) / r.seconds;
    if (r.strategy == PackingStrategy::PadToMax) padRate = rate;
    if (r.strategy == PackingStrategy::PlannedPack) planRate = rate;
    out["strategies"].push_back(strategyJson(r));
  }
  if (padRate > 0 && planRate > 0) out["plan_over_pad"] = planRate / padRate;
  if (!a.roofline.is_null()) out["roofline"] = a.roofline;
  if (!a.memory.is_null()) out["memory"] = a.memory;
  if (a.profile) {
    out["profile"] = a.profile->rows;
    out["profile_linear_gflop"] = a.profile->linearGflop;
  }
  app::addComputeInfo(out);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  app::Program prog("bench_graph_training", kSummary);
  Options o;
  addFlags(prog, o);
  return prog.run(argc, argv, [&] {
    const std::vector<std::string> chosen = applyOptions(o);
    app::applyThreads(o.threads);
    app::keepFreedMemoryInHeap();
    const Molecules molecules = openMolecules(o);
    std::vector<Runner> runners = makeRunners(o, chosen, molecules);
    runRounds(runners, o);
    const AfterRounds after = measureAfterRounds(o, runners);
    std::cout << report(o, runners, after).dump(2) << std::endl;
    return 0;
  });
}
