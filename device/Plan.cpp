#include "device/Plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "device/PlanFormat.h"
#include "device/StepParts.h"
#include "gnn/system/Check.h"

namespace gnn {

using planfmt::fmt;
using planfmt::ms;
using planfmt::pct;
using planfmt::thousands;

namespace {
// Seconds per micro-batch of blocks [first, last) on one IPU (forward, backward, recomputation).
double rangeSeconds(const ModelProfile& m, int64_t first, int64_t last, const IpuOptions& o, const IpuSpec& spec) {
  const StageCost c = stageCost(m, first, last, false, o, spec);
  return c.forward + c.backward + c.recompute;
}

// prefix[i]: seconds per micro-batch of blocks [0, i), each block alone on an IPU.
std::vector<double> blockPrefixSeconds(const ModelProfile& m, const IpuOptions& o, const IpuSpec& spec) {
  const size_t B = m.blocks.size();
  std::vector<double> prefix(B + 1, 0);
  for (size_t b = 0; b < B; ++b)
    prefix[b + 1] = prefix[b] + rangeSeconds(m, static_cast<int64_t>(b), static_cast<int64_t>(b) + 1, o, spec);
  return prefix;
}
}  // namespace

StageBlocks stagesFromSplits(const ModelProfile& m, const std::vector<std::string>& splits) {
  GNN_CHECK_ARG(!m.blocks.empty(), "plan: the compile record has no blocks");
  return stageRanges(m.blockNames(), splits);
}

bool autoSplits(const ModelProfile& m, const IpuOptions& o, int64_t stages, StageBlocks* out, std::string* reason) {
  const IpuSpec spec = IpuSpec::of(o);
  const int64_t B = static_cast<int64_t>(m.blocks.size());
  GNN_CHECK_ARG(B >= 1, "plan: the compile record has no blocks");
  GNN_CHECK_ARG(stages <= B, "--pipeline-splits auto:", stages, ": the model has only ", B, " blocks");
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::string whyNotFewer;
  const int64_t lo = stages > 0 ? stages : 1, hi = stages > 0 ? stages : B;
  StageBlocks fallback;
  for (int64_t P = lo; P <= hi; ++P) {
    // P stages planned as they would run: a pipeline of more than one stage recomputes by PopTorch's default.
    IpuOptions oP = o;
    oP.recompute = o.recomputes(m.training, P);
    const std::vector<double> prefix = blockPrefixSeconds(m, oP, spec);
    // best[s][i]: the smallest slowest-stage time for blocks [0, i) in stages 0..s, every stage fitting.
    std::vector<std::vector<double>> best(static_cast<size_t>(P), std::vector<double>(static_cast<size_t>(B) + 1, kInf));
    std::vector<std::vector<int64_t>> from(static_cast<size_t>(P), std::vector<int64_t>(static_cast<size_t>(B) + 1, -1));
    // Also without the memory limit, to report the balanced layout when nothing fits.
    int64_t smallestOver = std::numeric_limits<int64_t>::max();
    std::string overWhere;
    for (int64_t s = 0; s < P; ++s)
      for (int64_t i = s + 1; i <= B - (P - 1 - s); ++i)
        for (int64_t j = s == 0 ? 0 : s; j < i; ++j) {
          if (s == 0 && j != 0) break;
          const double before = s == 0 ? 0.0 : best[static_cast<size_t>(s) - 1][static_cast<size_t>(j)];
          if (before == kInf) continue;
          if (s == P - 1 && i != B) continue;
          const double t = prefix[static_cast<size_t>(i)] - prefix[static_cast<size_t>(j)] +
                           (s + 1 < P ? copySeconds(m, i - 1, oP, spec) : 0.0);
          const double v = std::max(before, t);
          if (v >= best[static_cast<size_t>(s)][static_cast<size_t>(i)]) continue;
          const IpuMemory mem = stageMemory(m, j, i, s, P, oP, spec, nullptr);
          if (!mem.fits()) {
            if (mem.total < smallestOver) {
              smallestOver = mem.total;
              overWhere = stageLabel(m.blockNames(), j, i);
            }
            continue;
          }
          best[static_cast<size_t>(s)][static_cast<size_t>(i)] = v;
          from[static_cast<size_t>(s)][static_cast<size_t>(i)] = j;
        }
    if (best[static_cast<size_t>(P) - 1][static_cast<size_t>(B)] == kInf) {
      whyNotFewer = std::to_string(P) + " stage(s) do not fit" +
                    (overWhere.empty() ? std::string()
                                       : " (at best a stage such as " + overWhere + " needs " + formatMB(smallestOver) +
                                             " against " + formatMB(spec.memoryBytes()) + ")");
      // Balanced by time alone, for the report of a configuration that fits nowhere.
      fallback.clear();
      for (int64_t s = 0; s < P; ++s) fallback.push_back({s * B / P, (s + 1) * B / P});
      continue;
    }
    StageBlocks st(static_cast<size_t>(P));
    for (int64_t s = P - 1, i = B; s >= 0; --s) {
      const int64_t j = from[static_cast<size_t>(s)][static_cast<size_t>(i)];
      st[static_cast<size_t>(s)] = {j, i};
      i = j;
    }
    *out = st;
    std::ostringstream why;
    why << P << " stage(s)";
    if (stages > 0)
      why << " as asked";
    else if (P == 1)
      why << ": the whole model fits on one IPU";
    else
      why << ": the fewest that fit; " << whyNotFewer;
    if (P > 1) {
      why << "; blocks balanced by estimated time per micro-batch (forward + backward" << (oP.recompute ? " + recompute" : "")
          << " + copy):";
      double slow = 0;
      int64_t slowest = 0;
      for (int64_t s = 0; s < P; ++s) {
        const auto [a, b] = st[static_cast<size_t>(s)];
        const double t = prefix[static_cast<size_t>(b)] - prefix[static_cast<size_t>(a)] + (s + 1 < P ? copySeconds(m, b - 1, oP, spec) : 0.0);
        why << (s ? " / " : " ") << fmt("%.3f", t * 1e3);
        if (t > slow) {
          slow = t;
          slowest = s;
        }
      }
      why << " ms (slowest: stage " << slowest << ", " << stageLabel(m.blockNames(), st[static_cast<size_t>(slowest)].first, st[static_cast<size_t>(slowest)].second) << ")";
      if (o.executionStrategy == ExecutionStrategy::Pipelined && o.gradientAccumulation < P)
        why << "; a pipeline of " << P << " stages needs --grad-accum " << P << " or more";
    }
    *reason = why.str();
    return true;
  }
  *out = fallback.empty() ? StageBlocks{{0, B}} : fallback;
  *reason = whyNotFewer.empty() ? "no split fits" : "no split fits: " + whyNotFewer;
  return false;
}

int64_t Plan::numIpus() const {
  IpuOptions o = options;
  return o.numIpus(static_cast<int64_t>(stages.size()));
}

void Plan::setHost(const HostSample& sample, int64_t coresPerHost, const std::string& coresSource, int64_t hosts) {
  host = planHost(sample, coresPerHost, coresSource, options, training, cost, samplesPerMicroBatch, hosts);
}

std::string Plan::stageName(int64_t s) const {
  const auto [a, b] = stages[static_cast<size_t>(s)];
  return stageLabel(blockNames, a, b);
}

namespace {

// The plan of `options` as they are: its stages (given or balanced), memory and cost, without fixes.
Plan planAsGiven(const ModelProfile& m, const IpuOptions& options, double samplesPerMicroBatch) {
  Plan p;
  p.spec = IpuSpec::of(options);
  p.options = options;
  p.training = m.training;
  p.parameters = m.parameters();
  p.samplesPerMicroBatch = samplesPerMicroBatch;
  for (const BlockProfile& b : m.blocks) p.blockNames.push_back(b.name);
  if (options.autoPipelineSplits) {
    autoSplits(m, options, options.autoStages, &p.stages, &p.splitReason);
  } else {
    p.stages = stagesFromSplits(m, options.pipelineSplits);
  }
  p.options.pipelineSplits.clear();
  for (size_t s = 1; s < p.stages.size(); ++s) p.options.pipelineSplits.push_back(p.blockNames[static_cast<size_t>(p.stages[s].first)]);
  p.options.autoPipelineSplits = false;
  p.splits = p.options.pipelineSplits;
  const auto P = static_cast<int64_t>(p.stages.size());
  p.recomputeByDefault = p.options.recomputesByDefault(m.training, P);
  p.options.recompute = p.options.recomputes(m.training, P);
  p.memory = planMemory(m, p.stages, p.options, p.spec);
  p.cost = planCost(m, p.stages, p.options, p.spec, samplesPerMicroBatch);
  p.profile = std::make_shared<const ModelProfile>(m);
  return p;
}

// A simple switch that could make a plan fit: what it changes, its flag, and the plan's options with it.
struct Switch {
  std::string change, flag;
  IpuOptions options;
};

// The simple switches that apply to options `o` of a plan of P stages, in the order they are tried and combined.
// `o` holds the options as asked (recomputation by default not yet resolved), so that a switch planned again
// resolves it as the program given its flags would (a phased program does not recompute by default).
std::vector<Switch> simpleSwitches(const ModelProfile& m, const IpuOptions& o, int64_t P) {
  std::vector<Switch> simple;
  if (o.precision == Precision::FP32) {
    IpuOptions o2 = o;
    o2.precision = Precision::FP16;
    simple.push_back({"fp16 weights, activations and gradients (fp32 master weights and optimizer state)", "--precision fp16", o2});
  }
  if (m.training && !o.recomputes(m.training, P)) {
    IpuOptions o2 = o;
    o2.recompute = true;
    // The user turned PopTorch's default off: the fix says to drop that flag (--recompute beside it is refused).
    const bool turnedOff = !o.recomputeWhenPipelined;
    o2.recomputeWhenPipelined = true;
    simple.push_back({std::string("recompute each block's forward in the backward instead of stashing activations") +
                          (turnedOff ? " (drop --no-recompute)" : ""),
                      "--recompute", o2});
  }
  if (m.training && !o.offloadOptimizer && o.executionStrategy != ExecutionStrategy::Phased) {
    IpuOptions o2 = o;
    o2.offloadOptimizer = true;
    simple.push_back({"optimizer state in streaming memory", "--offload-optimizer", o2});
  }
  if (m.training && o.replicationFactor > 1 && !o.replicatedTensorSharding) {
    IpuOptions o2 = o;
    o2.replicatedTensorSharding = true;
    simple.push_back({"optimizer state sharded over the " + std::to_string(o.replicationFactor) + " replicas",
                      "--replicated-tensor-sharding", o2});
  }
  if (m.training && o.executionStrategy != ExecutionStrategy::Phased && P > 1) {
    IpuOptions o2 = o;
    o2.executionStrategy = ExecutionStrategy::Phased;
    simple.push_back({"phased execution: one stage's weights resident at a time, on one IPU per replica", "--execution phased", o2});
  }
  return simple;
}

// Adds to p's fixes the change and its flags, with what plan q (planned with them) says of them.
void recordFix(Plan& p, std::string change, std::string flags, const Plan& q) {
  p.fixes.push_back({std::move(change), std::move(flags), q.fits(), q.memory.ipus[q.memory.fullest].total,
                     q.cost.samplesPerSecond});
}

// More stages: the fewest that fit, balanced (the most there are blocks when none does).
void fixByMoreStages(const ModelProfile& m, double samplesPerMicroBatch, Plan& p) {
  const IpuOptions& o = p.options;
  const int64_t P = static_cast<int64_t>(p.stages.size());
  const int64_t B = static_cast<int64_t>(m.blocks.size());
  for (int64_t P2 = P + 1; P2 <= B; ++P2) {
    IpuOptions o2 = o;
    o2.autoPipelineSplits = true;
    o2.autoStages = P2;
    std::string extra;
    if (o2.executionStrategy == ExecutionStrategy::Pipelined && o2.gradientAccumulation < P2) {
      o2.gradientAccumulation = P2;
      extra = " --grad-accum " + std::to_string(P2);
    }
    const Plan q = makePlan(m, o2, samplesPerMicroBatch, false);
    if (q.fits() || P2 == B) {
      std::string names;
      for (const auto& n : q.splits) names += (names.empty() ? "" : ",") + n;
      recordFix(p, std::to_string(P2) + " pipeline stages, balanced", "--pipeline-splits " + names + extra, q);
      break;
    }
  }
}

// A smaller micro-batch: halve until it fits (at most 1/8).
void fixBySmallerMicroBatches(const ModelProfile& m, double samplesPerMicroBatch, Plan& p) {
  for (double f = 0.5; f >= 0.125; f /= 2) {
    const ModelProfile m2 = m.scaled(f);
    const Plan q = makePlan(m2, p.options, samplesPerMicroBatch * f, false);
    if (q.fits() || f <= 0.125) {
      recordFix(p, "micro-batches " + fmt("%g", 1 / f) + "x smaller (activations scale with the micro-batch)",
                "--batch-size " + fmt("%.0f", std::max(1.0, std::floor(samplesPerMicroBatch * f))), q);
      break;
    }
  }
}

// When no single change fits: the simple switches combined, in order, until it does.
void fixByCombinedSwitches(const ModelProfile& m, double samplesPerMicroBatch, const IpuOptions& o,
                           const std::vector<Switch>& simple, Plan& p) {
  bool any = false;
  for (const PlanFix& f : p.fixes) any = any || f.fits;
  if (any || simple.size() <= 1) return;
  IpuOptions o2 = o;
  std::string change, flags;
  for (size_t i = 0; i < simple.size(); ++i) {
    const IpuOptions& s = simple[i].options;
    if (s.precision != o.precision) o2.precision = s.precision;
    if (s.recompute) o2.recompute = true;
    if (s.offloadOptimizer) o2.offloadOptimizer = true;
    if (s.replicatedTensorSharding) o2.replicatedTensorSharding = true;
    if (s.executionStrategy != o.executionStrategy) o2.executionStrategy = s.executionStrategy;
    change += (change.empty() ? "" : " + ") + simple[i].flag.substr(2);
    flags += (flags.empty() ? "" : " ") + simple[i].flag;
    if (i == 0) continue;
    const Plan q = makePlan(m, o2, samplesPerMicroBatch, false);
    if (q.fits() || i + 1 == simple.size()) {
      recordFix(p, "combined: " + change, flags, q);
      break;
    }
  }
}

}  // namespace

Plan makePlan(const ModelProfile& m, const IpuOptions& options, double samplesPerMicroBatch, bool withFixes) {
  Plan p = planAsGiven(m, options, samplesPerMicroBatch);
  if (p.fits() || !withFixes) return p;

  // Every change that could make it fit, each planned again.
  IpuOptions asked = p.options;
  if (p.recomputeByDefault) asked.recompute = false;
  const std::vector<Switch> simple = simpleSwitches(m, asked, static_cast<int64_t>(p.stages.size()));
  for (const Switch& s : simple) recordFix(p, s.change, s.flag, makePlan(m, s.options, samplesPerMicroBatch, false));
  fixByMoreStages(m, samplesPerMicroBatch, p);
  fixBySmallerMicroBatches(m, samplesPerMicroBatch, p);
  fixByCombinedSwitches(m, samplesPerMicroBatch, asked, simple, p);
  std::stable_sort(p.fixes.begin(), p.fixes.end(), [](const PlanFix& a, const PlanFix& b) {
    if (a.fits != b.fits) return a.fits;
    return a.fits ? a.samplesPerSecond > b.samplesPerSecond : a.fullestBytes < b.fullestBytes;
  });
  return p;
}

namespace {
// The report's cost section: the device's estimate, the step's parts, the all-reduce across hosts, the stages,
// the hosts' preparation and the headline.
void writeCost(std::ostringstream& s, const Plan& p) {
  const CostPlan& c = p.cost;
  const int64_t P = static_cast<int64_t>(p.stages.size());
  s << "Cost (estimate): the IPUs run " << thousands(c.samplesPerSecond) << " samples/s; " << ms(c.stepSeconds) << " per "
    << (p.training ? "weight update of " : "device iteration of ") << fmt("%g", c.samplesPerUpdate) << " samples\n";
  const double T = c.stepSeconds > 0 ? c.stepSeconds : 1;
  s << stepParts(p).table();
  if (p.training && p.options.replicationFactor > 1) {
    const int64_t H = std::min(std::max<int64_t>(1, p.options.hosts), p.options.replicationFactor);
    s << "  all-reduce of " << p.options.replicationFactor << " replicas: " << ms(c.allReduceSeconds) << " per update ("
      << pct(c.allReduceSeconds / T) << " of the step), " << c.collectives
      << (c.collectives == 1 ? " collective (merged: --merge-all-reduce)" : " collectives (one per weight tensor, PopART's "
                                                                             "default; --merge-all-reduce merges them)")
      << ", GCL's " << c.collectiveMethod << " for the largest";
    if (H > 1)
      s << "; of which the network between " << H << " hosts and GW-Links between PODs " << ms(c.networkSeconds) << " ("
        << fmt("%g", p.options.networkBytesPerSecond * 8 / 1e9) << " Gb/s, "
        << fmt("%g", p.options.networkLatencySeconds * 1e6) << " us; --network-gbps, --network-latency-us)";
    else if (c.networkSeconds > 0)
      s << "; of which GW-Links between PODs of " << p.options.ipusPerPod << " IPUs " << ms(c.networkSeconds);
    s << "\n";
  }
  s << "  pipeline utilisation " << pct(c.utilisation) << "; bottleneck: stage " << c.bottleneckStage << " ("
    << p.stageName(c.bottleneckStage) << ")\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-5s %-30s %10s %10s %10s %10s %10s\n", "stage", "blocks", "fwd ms", "bwd ms",
                "recomp ms", "copy ms", "busy ms");
  s << line;
  for (int64_t i = 0; i < P; ++i) {
    const StageCost& sc = c.stages[static_cast<size_t>(i)];
    std::snprintf(line, sizeof line, "  %-5lld %-30s %10.4f %10.4f %10.4f %10.4f %10.4f\n", static_cast<long long>(i),
                  p.stageName(i).c_str(), sc.forward * 1e3, sc.backward * 1e3, sc.recompute * 1e3, sc.copyOut * 1e3,
                  sc.busy * 1e3);
    s << line;
  }
  s << p.host.report();
  s << "Throughput (estimate): " << thousands(p.throughput()) << " samples/s"
    << (p.packing.known ? " (real graphs)" : "") << ", limited by the "
    << (p.options.syntheticData ? "IPUs (--synthetic-data: no host transfers or preparation)"
        : !p.host.known ? "IPUs (the host's preparation not planned: no loader)"
                      : p.host.hostBound() ? "HOST (its preparation of micro-batches)" : "IPUs")
    << (p.host.known && !p.host.asyncLoading ? ", with the host's preparation between calls (--loader-mode sync, "
                                               "PopTorch's default)"
                                             : "")
    << "\n";
}
}  // namespace

std::string Plan::report() const {
  std::ostringstream s;
  const int64_t P = static_cast<int64_t>(stages.size());
  s << "Plan of the " << (training ? "training" : "inference") << " program on " << spec.description << ": "
    << options.describe(P);
  const std::string mem = options.describeMemoryOptions();
  if (!mem.empty()) s << "; " << mem;
  if (recomputeByDefault) s << " (PopTorch's default for a pipelined training program; --no-recompute: off)";
  s << "\n  " << thousands(static_cast<double>(parameters)) << " parameters, " << fmt("%g", samplesPerMicroBatch)
    << (packing.known ? " real graphs" : " samples") << " per micro-batch, " << numIpus() << " IPU(s)\n";
  if (packing.known) s << "  micro-batch: " << packing.describe() << "\n";
  if (!splitReason.empty()) s << "  splits: " << splitReason << "\n";
  s << "Memory per IPU (budget " << formatMB(memory.ipus.front().budget) << " In-Processor-Memory, "
    << spec.tiles << " tiles x " << spec.bytesPerTile << " B):\n";
  const std::vector<std::string> cats = {"weights",        "gradients",     "optimizer state", "stashed activations",
                                         "recomputation",  "stage buffers", "phase buffers",   "activations",
                                         "temporaries",    "I/O buffers",   "code and exchange"};
  char line[512];
  std::snprintf(line, sizeof line, "  %-4s %-30s %10s %5s  %s\n", "IPU", "stage", "total", "fits", "largest categories");
  s << line;
  for (size_t i = 0; i < memory.ipus.size(); ++i) {
    const IpuMemory& m = memory.ipus[i];
    auto by = m.byCategory();
    std::vector<std::pair<int64_t, std::string>> top;
    for (const auto& [c, b] : by) top.push_back({b, c});
    std::sort(top.rbegin(), top.rend());
    std::string tops;
    for (size_t k = 0; k < top.size() && k < 4; ++k) tops += (k ? ", " : "") + top[k].second + " " + formatMB(top[k].first);
    std::snprintf(line, sizeof line, "  %-4zu %-30s %10s %5s  %s\n", i, m.stageName.c_str(), formatMB(m.total).c_str(),
                  m.fits() ? "yes" : "NO", tops.c_str());
    s << line;
  }
  if (!memory.streaming.empty())
    s << "  streaming memory per replica: " << formatMB(memory.streamingTotal) << " of " << formatMB(memory.streamingBudget)
      << " (largest: " << memory.streaming.front().category << " " << memory.streaming.front().block << " "
      << formatMB(memory.streaming.front().bytes) << ")\n";
  writeCost(s, *this);
  s << "  per-op terms fitted to kernel measurements (device/CostFit.h): matmuls at " << fmt("%.2f", spec.matmulPeakShare)
    << " of " << fmt("%.1f", spec.peakFlops(options.precision == Precision::FP16) / 1e12) << " TFLOPS peak, "
    << fmt("%.0f", spec.opCycles) << " cycles per op, element-wise "
    << fmt("%.1f", spec.elementwiseBytesPerCycle * spec.clockHz / 1e12) << " TB/s, gathers "
    << fmt("%.1f", spec.gatherBytesPerCycle * spec.clockHz / 1e12) << " TB/s, scatters "
    << fmt("%.1f", spec.scatterBytesPerCycle * spec.clockHz / 1e12) << " TB/s; assumed: code and exchange "
    << spec.codeAndExchangeBytesPerTile / 1024 << " KiB per tile\n";
  if (!fits()) s << outOfMemoryReport();
  return s.str();
}

std::string Plan::outOfMemoryReport() const {
  std::ostringstream s;
  const IpuMemory& worst = memory.ipus[memory.fullest];
  s << "Out of memory: IPU " << memory.fullest << " (" << worst.stageName << ") needs " << formatMB(worst.total)
    << " but an IPU has " << formatMB(worst.budget) << " (" << spec.description << ")";
  if (memory.streamingTotal > memory.streamingBudget)
    s << "; streaming memory needs " << formatMB(memory.streamingTotal) << " of " << formatMB(memory.streamingBudget);
  s << "\n  largest items on IPU " << memory.fullest << ":\n";
  char line[512];
  for (size_t i = 0; i < worst.items.size() && i < 8; ++i) {
    const MemoryItem& it = worst.items[i];
    std::snprintf(line, sizeof line, "    %10s  %-20s %-14s %s\n", formatMB(it.bytes).c_str(), it.category.c_str(),
                  it.block.c_str(), it.detail.c_str());
    s << line;
  }
  if (!fixes.empty()) {
    s << "  changes, each planned again:\n";
    for (const PlanFix& f : fixes) {
      std::snprintf(line, sizeof line, "    %-8s %10s  %9s samples/s  %s: %s\n", f.fits ? "fits" : "no", formatMB(f.fullestBytes).c_str(),
                    thousands(f.samplesPerSecond).c_str(), f.flags.c_str(), f.change.c_str());
      s << line;
    }
  }
  return s.str();
}

nlohmann::json Plan::toJson() const {
  nlohmann::json ipus = nlohmann::json::array();
  nlohmann::json perIpu = nlohmann::json::array();
  for (const IpuMemory& m : memory.ipus) {
    nlohmann::json items = nlohmann::json::array();
    for (const MemoryItem& it : m.items)
      items.push_back({{"category", it.category}, {"block", it.block}, {"detail", it.detail}, {"bytes", it.bytes}});
    nlohmann::json cats = nlohmann::json::object();
    for (const auto& [c, b] : m.byCategory()) cats[c] = b;
    ipus.push_back({{"stage", m.stage}, {"name", m.stageName}, {"total_bytes", m.total}, {"fits", m.fits()},
                    {"by_category", cats}, {"items", items}});
    perIpu.push_back(static_cast<double>(m.total) / 1e6);
  }
  nlohmann::json streaming = nlohmann::json::array();
  for (const MemoryItem& it : memory.streaming)
    streaming.push_back({{"category", it.category}, {"block", it.block}, {"detail", it.detail}, {"bytes", it.bytes}});
  nlohmann::json st = nlohmann::json::array();
  for (size_t i = 0; i < stages.size(); ++i) {
    const StageCost& sc = cost.stages[i];
    st.push_back({{"name", stageName(static_cast<int64_t>(i))},
                  {"first_block", stages[i].first},
                  {"last_block", stages[i].second},
                  {"forward_ms", sc.forward * 1e3},
                  {"backward_ms", sc.backward * 1e3},
                  {"recompute_ms", sc.recompute * 1e3},
                  {"copy_ms", sc.copyOut * 1e3},
                  {"busy_ms", sc.busy * 1e3}});
  }
  nlohmann::json fx = nlohmann::json::array();
  for (const PlanFix& f : fixes)
    fx.push_back({{"change", f.change}, {"flags", f.flags}, {"fits", f.fits}, {"fullest_ipu_mb", static_cast<double>(f.fullestBytes) / 1e6},
                  {"estimated_samples_per_s", f.samplesPerSecond}});
  const double T = cost.stepSeconds > 0 ? cost.stepSeconds : 1;
  return {{"program", training ? "training" : "inference"},
          {"ipu", spec.name},
          {"description", spec.description},
          {"options", options.describe(static_cast<int64_t>(stages.size()))},
          {"memory_options", options.describeMemoryOptions()},
          {"recompute", training && options.recompute},
          {"recompute_by_default", recomputeByDefault},
          {"num_ipus", numIpus()},
          {"parameters", parameters},
          {"samples_per_micro_batch", samplesPerMicroBatch},
          {"splits", splits},
          {"split_reason", splitReason},
          {"fits", fits()},
          {"memory_per_ipu_mb", perIpu},
          {"memory_budget_mb", static_cast<double>(spec.memoryBytes()) / 1e6},
          {"ipus", ipus},
          {"streaming_mb", static_cast<double>(memory.streamingTotal) / 1e6},
          {"streaming", streaming},
          {"estimated_samples_per_s", cost.samplesPerSecond},
          {"step_ms", cost.stepSeconds * 1e3},
          {"step_split",
           {{"compute", cost.split.compute / T},
            {"exchange", cost.split.exchange / T},
            {"pipeline_bubble", cost.split.bubble / T},
            {"all_reduce", cost.split.allReduce / T},
            {"optimizer", cost.split.optimizer / T},
            {"host_io", cost.split.hostIo / T},
            {"streaming", cost.split.streaming / T}}},
          {"hosts", std::min(std::max<int64_t>(1, options.hosts), options.replicationFactor)},
          {"all_reduce_ms", cost.allReduceSeconds * 1e3},
          {"network_ms", cost.networkSeconds * 1e3},
          {"collectives",
           {{"per_update", cost.collectives},
            {"merged", options.mergeAllReduce},
            {"method_of_largest", cost.collectiveMethod},
            {"ipus_per_pod", options.ipusPerPod},
            {"all_reduce_ms", cost.allReduceSeconds * 1e3},
            {"between_pods_or_hosts_ms", cost.networkSeconds * 1e3}}},
          {"pipeline_utilisation", cost.utilisation},
          {"bottleneck_stage", cost.bottleneckStage},
          {"step_parts", stepParts(*this).toJson()},
          {"packing", packing.known ? packing.toJson(cost.samplesPerSecond / std::max(samplesPerMicroBatch, 1e-12))
                                    : nlohmann::json(nullptr)},
          {"host", host.toJson()},
          {"throughput",
           {{"samples_per_s", throughput()},
            {"limited_by", limitedBy()},
            {"loader_mode", options.asyncLoading ? "async" : "sync"},
            {"synthetic_data", options.syntheticData},
            {"device_samples_per_s", host.known ? host.deviceSamplesPerSecond : cost.samplesPerSecond},
            {"host_samples_per_s", host.known ? nlohmann::json(host.samplesPerSecond) : nlohmann::json(nullptr)}}},
          {"stages", st},
          {"fixes", fx},
          {"assumptions",
           {{"matmul_peak_share", spec.matmulPeakShare},
            {"matmul_half_dim", spec.matmulHalfDim},
            {"op_cycles", spec.opCycles},
            {"elementwise_bytes_per_cycle", spec.elementwiseBytesPerCycle},
            {"gather_cycles", spec.gatherCycles},
            {"gather_cycles_per_index", spec.gatherCyclesPerIndex},
            {"gather_cycles_per_table_row", spec.gatherCyclesPerTableRow},
            {"gather_bytes_per_cycle", spec.gatherBytesPerCycle},
            {"scatter_cycles", spec.scatterCycles},
            {"scatter_cycles_per_index", spec.scatterCyclesPerIndex},
            {"scatter_bytes_per_cycle", spec.scatterBytesPerCycle},
            {"code_and_exchange_bytes_per_tile", spec.codeAndExchangeBytesPerTile},
            {"clock_hz", spec.clockHz},
            {"ipu_link_bytes_per_s", spec.ipuLinkBytesPerSecond},
            {"collective_step_s", spec.collectiveStepSeconds},
            {"collective_bytes_per_s", spec.collectiveBytesPerSecond},
            {"quad_ring_bandwidth_factor", spec.quadRingBandwidthFactor},
            {"gw_link_bytes_per_s_per_ipu", spec.gwLinkBytesPerSecondPerIpu},
            {"gw_link_step_s", spec.gwLinkStepSeconds},
            {"host_call_s", spec.hostCallSeconds},
            {"host_bytes_per_s_per_ipu", spec.hostBytesPerSecondPerIpu},
            {"streaming_bytes_per_s", spec.streamingBytesPerSecond}}}};
}

void attachIpuClock(Trace& trace, const Plan& plan) {
  const CostPlan& c = plan.cost;
  const int64_t P = static_cast<int64_t>(plan.stages.size());
  const double hostIn = c.hostSeconds;  // per update, charged before it
  const double update = c.stepSeconds;
  std::vector<TaskRecord> recs = trace.records();
  // Requests start one after another; a request's length is its updates (the largest iteration seen + 1).
  std::map<int64_t, int64_t> iterations;
  for (const TaskRecord& r : recs) iterations[r.request] = std::max(iterations[r.request], r.iteration + 1);
  std::map<int64_t, double> requestStart;
  double t = 0;
  for (const auto& [q, n] : iterations) {
    requestStart[q] = t;
    t += static_cast<double>(n) * update;
  }
  auto find = [&](TaskKind k, int64_t stage, int64_t mb) -> const TimedTask* {
    for (const TimedTask& x : c.timeline)
      if (x.kind == k && (k == TaskKind::AllReduce || k == TaskKind::Optimizer || (x.stage == stage && x.microBatch == mb)))
        return &x;
    return nullptr;
  };
  trace.mapRecords([&](TaskRecord& r) {
    const double base = requestStart[r.request] + static_cast<double>(r.iteration) * update + hostIn;
    const int64_t stage = r.stage;
    switch (r.kind) {
      case TaskKind::Forward:
      case TaskKind::Backward:
      case TaskKind::AllReduce:
      case TaskKind::Optimizer: {
        const TimedTask* x = find(r.kind, stage, r.microBatch);
        if (x) r.ipuClock = {base + x->start, x->duration};
        break;
      }
      case TaskKind::Copy: {
        const TimedTask* x = find(TaskKind::Forward, stage, r.microBatch);
        const double d = stage > 0 && stage <= P - 1 ? c.stages[static_cast<size_t>(stage - 1)].copyOut : 0.0;
        if (x) r.ipuClock = {base + x->start - d, d};
        break;
      }
      case TaskKind::HostToDevice:
        r.ipuClock = {requestStart[r.request], hostIn};
        break;
      case TaskKind::DeviceToHost: {
        const double end = requestStart[r.request] + static_cast<double>(iterations[r.request]) * update + hostIn;
        r.ipuClock = {end, 0};
        break;
      }
    }
  });
}

}  // namespace gnn
