#include "loaders/BatchPlanner.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>

#include "loaders/GraphTrim.h"

namespace gnn {

PaddingReport EpochPlan::report(const FixedSizeOptions& o) const {
  PaddingReport r;
  for (const auto& b : batches) {
    ++r.batches;
    for (const PlannedGraph& g : b) {
      r.realNodes += g.numNodes;
      r.realEdges += g.numEdges;
    }
    r.realGraphs += static_cast<int64_t>(b.size());
  }
  r.totalNodes = r.batches * o.numNodes;
  r.totalEdges = r.batches * o.numEdges;
  r.totalGraphs = r.batches * o.numGraphs;
  r.skipped = static_cast<int64_t>(skipped.size());
  r.trimmed = trimmed;
  return r;
}

BatchPlanner::BatchPlanner(std::shared_ptr<const Dataset> dataset, FixedSizeOptions fixed, Options options)
    : dataset_(std::move(dataset)), fixed_(fixed), options_(options) {
  GNN_CHECK_ARG(dataset_ != nullptr, "BatchPlanner: no dataset");
  fixed_.validate();
  GNN_CHECK_ARG(options_.packWindow >= 0, "BatchPlanner: packWindow must be >= 0 (0 = whole epoch)");
}

namespace {

// An open batch while planning: its running totals.
struct Bin {
  std::vector<PlannedGraph> graphs;
  int64_t nodes = 0, edges = 0;
};

// Whether one more graph of (n, e) fits the open batch: FixedSizeOptions' capacity rule on the new totals.
inline bool fits(const Bin& b, int64_t n, int64_t e, const FixedSizeOptions& o) {
  return o.fits(b.nodes + n, b.edges + e, static_cast<int64_t>(b.graphs.size()) + 1);
}

inline void put(Bin& b, PlannedGraph g) {
  b.nodes += g.numNodes;
  b.edges += g.numEdges;
  b.graphs.push_back(std::move(g));
}

// Replaces an over-size graph by its trimmed copy of at most maxN nodes and maxE edges.
void trimToFit(PlannedGraph& g, const Dataset& dataset, int64_t maxN, int64_t maxE,
               const BatchPlanner::Options& options, const EpochSampler& sampler, int64_t epoch) {
  // Seeded per (epoch, graph) so the result does not depend on where the graph falls in the order.
  Generator gen = sampler.generator(epoch, 2);
  gen.setState(gen.seed(), gen.offset() + static_cast<uint64_t>(g.index) * 1048576);
  auto t = std::make_shared<Graph>(trimGraph(dataset.get(static_cast<size_t>(g.index)), maxN, maxE, options.overSize,
                                             gen, options.nodeLevelTargets, "graph " + std::to_string(g.index)));
  g.numNodes = t->numNodes;
  g.numEdges = t->numEdges();
  g.trimmed = std::move(t);
}

// PadToMax and StreamPack share the greedy rule; PadToMax differs in its sizes (fromDataset's worst case,
// where every run of numGraphs − 1 graphs fits) and in never packing more than numGraphs − 1 graphs, which
// the rule enforces for both. A batch that cannot take the next graph is closed early.
void packGreedy(std::vector<PlannedGraph>& items, const FixedSizeOptions& o, const BatchPlanner::Options& options,
                EpochPlan& plan) {
  Bin open;
  for (PlannedGraph& g : items) {
    if (!open.graphs.empty() && !fits(open, g.numNodes, g.numEdges, o)) {
      plan.batches.push_back(std::move(open.graphs));
      open = Bin();
    }
    put(open, std::move(g));
  }
  if (!open.graphs.empty()) {
    bool partial = static_cast<int64_t>(open.graphs.size()) < o.numGraphs - 1;
    if (!(options.dropLast && partial && options.strategy == PackingStrategy::PadToMax))
      plan.batches.push_back(std::move(open.graphs));
  }
}

using SizeKey = std::tuple<int64_t, int64_t, size_t>;  // (nodes, edges, position): a total, seed-free order

// One PlannedPack batch, its graphs taken out of `left` (and moved out of items) until none fits: the largest
// graph that fits while the batch's mean graph size is at or below the target mean, the smallest otherwise.
Bin fillPlannedBatch(std::set<SizeKey>& left, std::vector<PlannedGraph>& items, const FixedSizeOptions& o,
                     double targetNodes, double targetEdges) {
  const int64_t cap = o.numGraphs - 1;
  constexpr int kScan = 256;  // how far to look past a graph whose edges do not fit
  Bin bin;
  for (;;) {
    int64_t c = static_cast<int64_t>(bin.graphs.size());
    if (c + 1 > cap) break;
    // The largest graph that still fits: o.fits(bin + graph, c + 1) holds exactly when it has at most
    // roomN nodes and roomE edges (the graphs left are all within maxGraphNodes()).
    int64_t roomN = o.nodeBudget(c + 1) - bin.nodes;
    int64_t roomE = o.edgeBudget(c + 1) - bin.edges;
    bool light = static_cast<double>(bin.nodes) <= targetNodes * static_cast<double>(c) &&
                 static_cast<double>(bin.edges) <= targetEdges * static_cast<double>(c);
    auto pick = left.end();
    if (light) {  // largest that fits
      auto it = left.upper_bound(SizeKey{roomN, std::numeric_limits<int64_t>::max(), SIZE_MAX});
      for (int s = 0; s < kScan && it != left.begin(); ++s) {
        --it;
        if (std::get<1>(*it) <= roomE) {
          pick = it;
          break;
        }
      }
    } else {  // smallest that fits
      auto it = left.begin();
      for (int s = 0; s < kScan && it != left.end() && std::get<0>(*it) <= roomN; ++s, ++it)
        if (std::get<1>(*it) <= roomE) {
          pick = it;
          break;
        }
    }
    if (pick == left.end()) break;
    put(bin, std::move(items[std::get<2>(*pick)]));
    left.erase(pick);
  }
  return bin;
}

// PlannedPack: decreasing-size packing within each window, filling a batch from both ends of the size order.
// Plain first-fit-decreasing groups the large graphs together and leaves the small ones for the last batches,
// which then hit the graph cap (numGraphs − 1) long before their node budget; and since every unused graph slot
// costs a padding node and edge, few-graph batches waste rows too. So each batch takes the largest graph that
// still fits while its mean graph size is at or below the target mean (budget per graph slot, or the window's
// mean if larger), and the smallest graph otherwise: node budget and graph cap run out together. The window's
// batches are then emitted in a seeded random order so that batch composition does not follow graph size.
void packPlanned(std::vector<PlannedGraph>& items, const FixedSizeOptions& o, int64_t packWindow,
                 Generator& orderGen, EpochPlan& plan) {
  const size_t total = items.size();
  const size_t window = packWindow > 0 ? static_cast<size_t>(packWindow) : std::max<size_t>(total, 1);
  const int64_t cap = o.numGraphs - 1;
  for (size_t begin = 0; begin < total; begin += window) {
    size_t end = std::min(total, begin + window);
    std::set<SizeKey> left;
    double sumNodes = 0, sumEdges = 0;
    for (size_t k = begin; k < end; ++k) {
      left.emplace(items[k].numNodes, items[k].numEdges, k);
      sumNodes += static_cast<double>(items[k].numNodes);
      sumEdges += static_cast<double>(items[k].numEdges);
    }
    double count = static_cast<double>(end - begin);
    double targetNodes = std::max(static_cast<double>(o.nodeBudget(cap)) / static_cast<double>(cap), sumNodes / count);
    double targetEdges = std::max(static_cast<double>(o.edgeBudget(cap)) / static_cast<double>(cap), sumEdges / count);
    std::vector<std::vector<PlannedGraph>> bins;
    while (!left.empty()) {
      Bin bin = fillPlannedBatch(left, items, o, targetNodes, targetEdges);
      GNN_ASSERT(!bin.graphs.empty(), "PlannedPack: a graph fits no empty batch");
      std::sort(bin.graphs.begin(), bin.graphs.end(),  // dataset order inside a batch: reproducible
                [](const PlannedGraph& a, const PlannedGraph& b) { return a.index < b.index; });
      bins.push_back(std::move(bin.graphs));
    }
    std::vector<size_t> binOrder(bins.size());
    std::iota(binOrder.begin(), binOrder.end(), size_t{0});
    shuffleInPlace(binOrder, orderGen);
    for (size_t b : binOrder) plan.batches.push_back(std::move(bins[b]));
  }
}

}  // namespace

EpochPlan BatchPlanner::plan(const std::vector<int64_t>& order, const EpochSampler& sampler, int64_t epoch) const {
  EpochPlan plan;
  const FixedSizeOptions& o = fixed_;
  const int64_t maxN = o.maxGraphNodes(), maxE = o.maxGraphEdges();

  // 1. Sizes in sampler order; over-size graphs are skipped, trimmed, or reported.
  std::vector<PlannedGraph> items;
  items.reserve(order.size());
  for (int64_t idx : order) {
    PlannedGraph g;
    g.index = idx;
    g.numNodes = dataset_->numNodes(static_cast<size_t>(idx));
    g.numEdges = dataset_->numEdges(static_cast<size_t>(idx));
    if (!o.fitsGraph(g.numNodes, g.numEdges)) {
      switch (options_.overSize) {
        case OverSizeStrategy::Error:
          invalidArgument("graph ", idx, " has ", g.numNodes, " nodes and ", g.numEdges, " edges but a batch holds ",
                          o.graphLimits(), ": raise numNodes/numEdges or use OverSizeStrategy Skip or Trim*");
        case OverSizeStrategy::Skip:
          plan.skipped.push_back(idx);
          continue;
        default:
          trimToFit(g, *dataset_, maxN, maxE, options_, sampler, epoch);
          ++plan.trimmed;
      }
    }
    items.push_back(std::move(g));
  }

  // 2. Group.
  if (options_.strategy != PackingStrategy::PlannedPack) {
    packGreedy(items, o, options_, plan);
    return plan;
  }
  Generator orderGen = sampler.generator(epoch, 1);
  packPlanned(items, o, options_.packWindow, orderGen, plan);
  return plan;
}

}  // namespace gnn
