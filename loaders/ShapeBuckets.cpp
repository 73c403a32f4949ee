#include "loaders/ShapeBuckets.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "loaders/BatchPlanner.h"

namespace gnn {

std::vector<GraphSize> graphSizes(const Dataset& dataset, const std::vector<int64_t>& positions) {
  std::vector<GraphSize> sizes;
  sizes.reserve(positions.size());
  for (int64_t i : positions)
    sizes.push_back({dataset.numNodes(static_cast<size_t>(i)), dataset.numEdges(static_cast<size_t>(i))});
  return sizes;
}

FixedSizeOptions bucketShape(const FixedSizeOptions& base, int64_t nodes, int64_t edges, int64_t graphs) {
  GNN_CHECK_ARG(graphs >= 2 && graphs <= base.numGraphs, "bucketShape: ", graphs, " graph slots, need 2..",
                base.numGraphs);
  GNN_CHECK_ARG(base.fitsGraph(nodes, edges), "bucketShape: a graph of ", nodes, " nodes and ", edges,
                " edges does not fit ", base.toString());
  const int64_t t = std::max<int64_t>(nodes, 1), e = std::max<int64_t>(edges, 1);
  FixedSizeOptions s = base;
  s.numGraphs = graphs;
  s.maxNodesPerGraph = t;
  // Room for graphs − 1 graphs of the bucket's largest sizes, within the base's rows, and always for one of
  // them.
  s.numNodes =
      std::max(s.rowsNeeded(t, 1), std::min(base.numNodes, s.rowsNeeded(t * (graphs - 1), graphs - 1)));
  s.numEdges =
      std::max(s.rowsNeeded(e, 1), std::min(base.numEdges, s.rowsNeeded(e * (graphs - 1), graphs - 1)));
  return s;
}

double ShapeBuckets::batchCost(const FixedSizeOptions& s, ShapeCost cost) {
  if (cost == ShapeCost::NodePairs) {
    const auto side = static_cast<double>(s.maxGraphNodes());
    return static_cast<double>(s.numGraphs) * side * side;
  }
  return static_cast<double>(s.numNodes + s.numEdges);
}

namespace {

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The graphs of one bucket: how many, their node and edge totals (and sums of squares), the largest sizes.
struct Group {
  int64_t count = 0, nodes = 0, edges = 0, maxNodes = 0, maxEdges = 0;
  double nodeSquares = 0, edgeSquares = 0;
  void add(const Group& g) {
    count += g.count;
    nodes += g.nodes;
    edges += g.edges;
    nodeSquares += g.nodeSquares;
    edgeSquares += g.edgeSquares;
    maxNodes = std::max(maxNodes, g.maxNodes);
    maxEdges = std::max(maxEdges, g.maxEdges);
  }
};

// Batches of shape `s` that `g` needs, estimated: by the graph cap, or by the node or edge budget less what
// greedy packing leaves unused when a batch closes, about E[n²] / (2 E[n]) rows (the mean residual of the
// size of the graph that did not fit).
int64_t batchesFor(const FixedSizeOptions& s, const Group& g) {
  if (g.count == 0) return 0;
  auto byBudget = [&](int64_t total, double squares, int64_t rows) {
    const double left = total > 0 ? squares / (2.0 * static_cast<double>(total)) : 0.0;
    const double room = std::max(1.0, static_cast<double>(rows - 1) - left);
    return static_cast<int64_t>(std::ceil(static_cast<double>(total) / room));
  };
  return std::max({ceilDiv(g.count, s.numGraphs - 1), byBudget(g.nodes, g.nodeSquares, s.numNodes),
                   byBudget(g.edges, g.edgeSquares, s.numEdges)});
}

// The cheapest shape for a bucket holding `g`: the base's graph slots, or as few as its batches need.
std::pair<double, FixedSizeOptions> bucketFor(const FixedSizeOptions& base, const Group& g, ShapeCost cost) {
  FixedSizeOptions full = bucketShape(base, g.maxNodes, g.maxEdges, base.numGraphs);
  const int64_t b = batchesFor(full, g);
  double best = static_cast<double>(b) * ShapeBuckets::batchCost(full, cost);
  const int64_t slots = ceilDiv(g.count, std::max<int64_t>(b, 1)) + 1;
  if (slots >= base.numGraphs) return {best, full};
  FixedSizeOptions fewer = bucketShape(base, g.maxNodes, g.maxEdges, std::max<int64_t>(slots, 2));
  const double c = static_cast<double>(batchesFor(fewer, g)) * ShapeBuckets::batchCost(fewer, cost);
  return c < best ? std::pair{c, fewer} : std::pair{best, full};
}

// At most 64 groups of consecutive node counts, as equal in graphs as the counts allow: the dynamic
// programme's thresholds are their upper ends (O(D²) stays small for sets of very different sizes).
std::vector<Group> coarsen(const std::vector<Group>& groups) {
  constexpr size_t kMaxGroups = 64;
  if (groups.size() <= kMaxGroups) return groups;
  int64_t total = 0;
  for (const Group& g : groups) total += g.count;
  std::vector<Group> out;
  Group open;
  int64_t seen = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    open.add(groups[i]);
    seen += groups[i].count;
    // Close when the graphs so far reach the next 1/64th (the last group closes at the end).
    if (seen * static_cast<int64_t>(kMaxGroups) >= total * static_cast<int64_t>(out.size() + 1) ||
        i + 1 == groups.size()) {
      out.push_back(open);
      open = Group();
    }
  }
  return out;
}

// The padded work of `shapes` on `sizes` packed as evaluation packs them: each graph in the first shape that
// holds it, each shape's graphs greedily in input order (a batch closes when the next graph does not fit).
double packedWorkOf(const std::vector<FixedSizeOptions>& shapes, const std::vector<GraphSize>& sizes,
                    ShapeCost cost) {
  struct Open {
    int64_t nodes = 0, edges = 0, graphs = 0, batches = 0;
  };
  std::vector<Open> open(shapes.size());
  for (const GraphSize& s : sizes)
    for (size_t k = 0; k < shapes.size(); ++k) {
      if (!shapes[k].fitsGraph(s.nodes, s.edges)) continue;
      Open& o = open[k];
      if (o.graphs == 0 || !shapes[k].fits(o.nodes + s.nodes, o.edges + s.edges, o.graphs + 1)) {
        ++o.batches;
        o = Open{0, 0, 0, o.batches};
      }
      o.nodes += s.nodes;
      o.edges += s.edges;
      ++o.graphs;
      break;
    }
  double w = 0;
  for (size_t k = 0; k < shapes.size(); ++k)
    w += static_cast<double>(open[k].batches) * ShapeBuckets::batchCost(shapes[k], cost);
  return w;
}

}  // namespace

ShapeBuckets ShapeBuckets::single(const FixedSizeOptions& base) {
  base.validate();
  ShapeBuckets b;
  b.shapes_ = {base};
  return b;
}

ShapeBuckets ShapeBuckets::choose(const std::vector<GraphSize>& sizes, const FixedSizeOptions& base,
                                  int64_t maxBuckets, ShapeCost cost) {
  GNN_CHECK_ARG(maxBuckets >= 1, "ShapeBuckets: maxBuckets = ", maxBuckets, ", need >= 1");
  base.validate();
  // Per distinct node count (ascending): the graphs that have it.
  std::map<int64_t, Group> byNodes;
  for (const GraphSize& s : sizes) {
    if (!base.fitsGraph(s.nodes, s.edges)) continue;
    const auto n = static_cast<double>(s.nodes), e = static_cast<double>(s.edges);
    byNodes[s.nodes].add(Group{1, s.nodes, s.edges, s.nodes, s.edges, n * n, e * e});
  }
  if (maxBuckets == 1 || byNodes.empty()) return single(base);
  const std::vector<Group> groups = [&] {
    std::vector<Group> v;
    for (const auto& kv : byNodes) v.push_back(kv.second);
    return coarsen(v);
  }();
  const auto d = static_cast<int64_t>(groups.size());
  const int64_t kMax = std::min(maxBuckets, d);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // best[k][j]: the least estimated W of the groups 0..j in k + 1 buckets, the last of which starts at
  // from[k][j].
  std::vector<std::vector<double>> best(static_cast<size_t>(kMax),
                                        std::vector<double>(static_cast<size_t>(d), kInf));
  std::vector<std::vector<int64_t>> from(static_cast<size_t>(kMax),
                                         std::vector<int64_t>(static_cast<size_t>(d), 0));
  for (int64_t j = 0; j < d; ++j) {
    Group range;  // groups i..j, grown downwards from j
    for (int64_t i = j; i >= 0; --i) {
      range.add(groups[static_cast<size_t>(i)]);
      const double c = bucketFor(base, range, cost).first;
      if (i == 0) {
        best[0][static_cast<size_t>(j)] = c;
        continue;
      }
      for (int64_t k = 1; k < kMax; ++k) {
        const double w = best[static_cast<size_t>(k - 1)][static_cast<size_t>(i - 1)] + c;
        if (w < best[static_cast<size_t>(k)][static_cast<size_t>(j)]) {
          best[static_cast<size_t>(k)][static_cast<size_t>(j)] = w;
          from[static_cast<size_t>(k)][static_cast<size_t>(j)] = i;
        }
      }
    }
  }
  // The estimate's best for each number of buckets, and the base alone, packed exactly: the least padded work
  // wins, fewer shapes on a tie. So buckets never pad more than the one shape.
  std::vector<FixedSizeOptions> chosen = {base};
  double chosenWork = packedWorkOf(chosen, sizes, cost);
  for (int64_t k = 0; k < kMax; ++k) {
    if (best[static_cast<size_t>(k)][static_cast<size_t>(d - 1)] == kInf) continue;
    std::vector<FixedSizeOptions> shapes;
    for (int64_t j = d - 1, q = k; q >= 0; --q) {
      const int64_t i = q == 0 ? 0 : from[static_cast<size_t>(q)][static_cast<size_t>(j)];
      Group range;
      for (int64_t r = i; r <= j; ++r) range.add(groups[static_cast<size_t>(r)]);
      shapes.push_back(bucketFor(base, range, cost).second);
      j = i - 1;
    }
    std::reverse(shapes.begin(), shapes.end());
    const double w = packedWorkOf(shapes, sizes, cost);
    if (w < chosenWork) {
      chosen = std::move(shapes);
      chosenWork = w;
    }
  }
  ShapeBuckets out;
  out.shapes_ = std::move(chosen);
  return out;
}

int64_t ShapeBuckets::bucketOf(int64_t nodes, int64_t edges) const {
  for (size_t k = 0; k < shapes_.size(); ++k)
    if (shapes_[k].fitsGraph(nodes, edges)) return static_cast<int64_t>(k);
  return -1;
}

double ShapeBuckets::packedWork(const std::vector<GraphSize>& sizes, ShapeCost cost) const {
  return packedWorkOf(shapes_, sizes, cost);
}

std::string ShapeBuckets::toString() const {
  std::ostringstream os;
  os << shapes_.size() << (shapes_.size() == 1 ? " shape:" : " shapes:");
  for (size_t k = 0; k < shapes_.size(); ++k) {
    const FixedSizeOptions& s = shapes_[k];
    os << (k ? "; " : " ") << "side " << s.maxGraphNodes() << ", " << s.numNodes << " nodes, " << s.numEdges
       << " edges, " << s.numGraphs << " graphs";
  }
  return os.str();
}

PaddingReport plannedPadding(const std::shared_ptr<const Dataset>& dataset,
                             const std::vector<int64_t>& positions, const ShapeBuckets& buckets,
                             bool nodePairs) {
  std::vector<std::vector<size_t>> members(static_cast<size_t>(buckets.size()));
  PaddingReport total;
  for (int64_t i : positions) {
    const int64_t k = buckets.bucketOf(dataset->numNodes(static_cast<size_t>(i)),
                                       dataset->numEdges(static_cast<size_t>(i)));
    if (k < 0)
      ++total.skipped;
    else
      members[static_cast<size_t>(k)].push_back(static_cast<size_t>(i));
  }
  for (size_t k = 0; k < members.size(); ++k) {
    if (members[k].empty()) continue;
    const FixedSizeOptions& shape = buckets.shapes()[k];
    BatchPlanner::Options po;
    po.strategy = PackingStrategy::StreamPack;
    BatchPlanner planner(std::make_shared<Subset>(dataset, members[k]), shape, po);
    const EpochSampler inOrder(static_cast<int64_t>(members[k].size()), /*shuffle=*/false, 0);
    const EpochPlan plan = planner.plan(inOrder.order(0), inOrder, 0);
    PaddingReport r = plan.report(shape);
    if (nodePairs) {
      const int64_t side = shape.maxGraphNodes();
      r.totalNodePairs = r.batches * shape.numGraphs * side * side;
      for (const auto& batch : plan.batches)
        for (const PlannedGraph& g : batch) r.realNodePairs += g.numNodes * g.numNodes;
    }
    total.merge(r);
  }
  return total;
}

}  // namespace gnn
