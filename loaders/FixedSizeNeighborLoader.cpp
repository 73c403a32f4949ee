#include "loaders/FixedSizeNeighborLoader.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "gnn/system/Parallel.h"
#include "loaders/BatchFields.h"

namespace gnn {

namespace {

void checkOptions(const FixedSizeNeighborLoader::Options& o) {
  GNN_CHECK_ARG(o.batchSize >= 1, "FixedSizeNeighborLoader: batchSize = ", o.batchSize, " must be >= 1");
  GNN_CHECK_ARG(!o.numNeighbors.empty(), "FixedSizeNeighborLoader: numNeighbors needs one fan-out per hop");
  for (int64_t f : o.numNeighbors)
    GNN_CHECK_ARG(f >= -1, "FixedSizeNeighborLoader: fan-out ", f, " (a count of neighbours, or -1 for all)");
  GNN_CHECK_ARG(o.overSize == OverSizeStrategy::TrimNodesAndEdges || o.overSize == OverSizeStrategy::Error,
                "FixedSizeNeighborLoader: over-size strategy must be TrimNodesAndEdges or Error");
}

}  // namespace

Graph sampledGraph(const Graph& graph, const SampledSubgraph& sub) {
  Graph g = selectSubgraph(graph, sub.nodes, sub.edgeIds, edgeIndexOf(sub.src, sub.dst), /*nodeLevelTargets=*/true);
  // The loss and the metrics read the seeds only (PyG: out[:batch_size]).
  for (Tensor* m : {&g.trainMask, &g.validMask, &g.testMask})
    if (m->defined()) {
      uint8_t* p = m->data<uint8_t>();
      std::fill(p + std::min(sub.numSeeds, g.numNodes), p + g.numNodes, uint8_t{0});
    }
  return g;
}

FixedSizeNeighborLoader::FixedSizeNeighborLoader(std::shared_ptr<const Graph> graph,
                                                 std::shared_ptr<const NeighborSampler> sampler,
                                                 std::vector<int64_t> inputNodes, Options options,
                                                 FixedSizeOptions fixed)
    : graph_(std::move(graph)),
      sampler_(std::move(sampler)),
      inputNodes_(std::move(inputNodes)),
      options_(std::move(options)),
      fixed_(fixed),
      order_(static_cast<int64_t>(inputNodes_.size()), options_.shuffle, options_.seed),
      collator_(fixed, /*nodeLevelTargets=*/true) {
  GNN_CHECK_ARG(graph_ && sampler_, "FixedSizeNeighborLoader: no graph or no sampler");
  // (A graph whose edge list was released once the sampler indexed it holds no edges of its own.)
  GNN_CHECK_ARG(sampler_->numNodes() == graph_->numNodes &&
                    (!graph_->edgeIndex.defined() || sampler_->numEdges() == graph_->numEdges()),
                "FixedSizeNeighborLoader: the sampler's graph (", sampler_->numNodes(), " nodes, ",
                sampler_->numEdges(), " edges) is not this graph (", graph_->numNodes, ", ", graph_->numEdges(), ")");
  checkOptions(options_);
  GNN_CHECK_ARG(fixed_.numGraphs == 2, "FixedSizeNeighborLoader: numGraphs = ", fixed_.numGraphs,
                " but a neighbour batch is one sampled graph plus one padding graph: set numGraphs = 2");
  GNN_CHECK_ARG(fixed_.nodeBudget(1) >= std::min<int64_t>(options_.batchSize, static_cast<int64_t>(inputNodes_.size())),
                "FixedSizeNeighborLoader: ", fixed_.numNodes, " nodes per batch leave no room for ", options_.batchSize,
                " seeds and the padding node");
  std::vector<uint8_t> seen(static_cast<size_t>(graph_->numNodes), 0);
  for (int64_t v : inputNodes_) {
    GNN_CHECK_ARG(v >= 0 && v < graph_->numNodes, "FixedSizeNeighborLoader: input node ", v, " is outside the graph's ",
                  graph_->numNodes, " nodes");
    GNN_CHECK_ARG(!seen[static_cast<size_t>(v)], "FixedSizeNeighborLoader: input node ", v, " is listed twice");
    seen[static_cast<size_t>(v)] = 1;
  }
}

FixedSizeNeighborLoader::~FixedSizeNeighborLoader() { prefetcher_.stop(); }

FixedSizeOptions FixedSizeNeighborLoader::worstCase(const NeighborSampler& sampler, const Options& options) {
  checkOptions(options);
  const auto [nodes, edges] = sampler.worstCase(options.batchSize, options.numNeighbors);
  FixedSizeOptions f;
  f.numGraphs = 2;
  f.numNodes = f.rowsNeeded(std::max<int64_t>(nodes, 1), 1);
  f.numEdges = f.rowsNeeded(std::max<int64_t>(edges, 1), 1);
  return f;
}

FixedSizeOptions FixedSizeNeighborLoader::fromLoader(const NeighborSampler& sampler,
                                                     const std::vector<int64_t>& inputNodes, const Options& options,
                                                     int64_t sampleLimit, double margin) {
  checkOptions(options);
  GNN_CHECK_ARG(sampleLimit >= 1 && margin >= 0, "FixedSizeNeighborLoader::fromLoader: sampleLimit = ", sampleLimit,
                ", margin = ", margin);
  const EpochSampler order(static_cast<int64_t>(inputNodes.size()), options.shuffle, options.seed);
  const std::vector<int64_t> epochOrder = order.order(0);
  const int64_t batches = (static_cast<int64_t>(inputNodes.size()) + options.batchSize - 1) / options.batchSize;
  const int64_t count = std::min(batches, sampleLimit);
  std::vector<int64_t> nodes(static_cast<size_t>(count)), edges(static_cast<size_t>(count));
  parallelFor(count, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const SampledSubgraph s = sampler.sample(batchOfOrder(inputNodes, epochOrder, options.batchSize, i).first,
                                               options.numNeighbors, options.seed, 0, options.replace);
      nodes[static_cast<size_t>(i)] = static_cast<int64_t>(s.nodes.size());
      edges[static_cast<size_t>(i)] = static_cast<int64_t>(s.src.size());
    }
  });
  const int64_t maxNodes = count ? *std::max_element(nodes.begin(), nodes.end()) : 1;
  const int64_t maxEdges = count ? *std::max_element(edges.begin(), edges.end()) : 1;
  const FixedSizeOptions bound = worstCase(sampler, options);
  FixedSizeOptions f;
  f.numGraphs = 2;
  auto withMargin = [&](int64_t v) { return static_cast<int64_t>(std::ceil(static_cast<double>(std::max<int64_t>(v, 1)) * (1 + margin))); };
  f.numNodes = std::min(bound.numNodes, f.rowsNeeded(withMargin(maxNodes), 1));
  f.numEdges = std::min(bound.numEdges, f.rowsNeeded(withMargin(maxEdges), 1));
  return f;
}

int64_t FixedSizeNeighborLoader::numBatches() const {
  const int64_t n = static_cast<int64_t>(inputNodes_.size());
  return (n + options_.batchSize - 1) / options_.batchSize;
}

void FixedSizeNeighborLoader::startEpoch(int64_t epoch) {
  prefetcher_.stop();
  epoch_ = epoch;
  epochOrder_ = order_.order(epoch);
  report_ = PaddingReport();
  prefetcher_.start(numBatches(), [this](int64_t i) { return makeItem(i); }, options_.prefetch);
}

std::vector<int64_t> FixedSizeNeighborLoader::batchSeeds(int64_t i) const {
  GNN_CHECK_ARG(!epochOrder_.empty() || inputNodes_.empty(), "FixedSizeNeighborLoader: call startEpoch() first");
  GNN_CHECK_ARG(i >= 0 && i < numBatches(), "FixedSizeNeighborLoader: batch ", i, " of ", numBatches());
  return batchOfOrder(inputNodes_, epochOrder_, options_.batchSize, i).first;
}

FixedSizeNeighborLoader::Item FixedSizeNeighborLoader::makeItem(int64_t i) const {
  GNN_CHECK_ARG(!epochOrder_.empty() || inputNodes_.empty(), "FixedSizeNeighborLoader: call startEpoch() first");
  auto [seeds, inputIds] = batchOfOrder(inputNodes_, epochOrder_, options_.batchSize, i);
  SampledSubgraph sub = sampler_->sample(seeds, options_.numNeighbors, options_.seed, epoch_, options_.replace);
  Item item;
  const int64_t nodeRoom = fixed_.nodeBudget(1), edgeRoom = fixed_.edgeBudget(1);
  const int64_t n = static_cast<int64_t>(sub.nodes.size()), m = static_cast<int64_t>(sub.src.size());
  if (n > nodeRoom || m > edgeRoom) {
    GNN_CHECK_ARG(options_.overSize != OverSizeStrategy::Error, "FixedSizeNeighborLoader: batch ", i, " of epoch ",
                  epoch_, " sampled ", n, " nodes and ", m, " edges but a batch holds ", nodeRoom, " and ", edgeRoom,
                  " (plus the padding graph): raise the sizes (worstCase() never trims) or trim");
    // From the end: the nodes found last (the deepest hop) and their edges, then the edges sampled last. The
    // per-hop counts follow (each hop's nodes and edges stay contiguous).
    const int64_t keepNodes = std::min(n, nodeRoom);
    size_t w = 0, hop = 0;
    int64_t hopEnd = sub.edgesPerHop.empty() ? m : sub.edgesPerHop[0];
    std::vector<int64_t> keptPerHop(sub.edgesPerHop.size(), 0);
    for (size_t e = 0; e < sub.src.size(); ++e) {
      while (static_cast<int64_t>(e) >= hopEnd && hop + 1 < sub.edgesPerHop.size()) hopEnd += sub.edgesPerHop[++hop];
      if (sub.src[e] < keepNodes && sub.dst[e] < keepNodes && static_cast<int64_t>(w) < edgeRoom) {
        sub.src[w] = sub.src[e];
        sub.dst[w] = sub.dst[e];
        sub.edgeIds[w] = sub.edgeIds[e];
        ++w;
        if (!keptPerHop.empty()) ++keptPerHop[hop];
      }
    }
    sub.edgesPerHop = keptPerHop;
    int64_t left = keepNodes;
    for (int64_t& c : sub.nodesPerHop) {
      c = std::min(c, left);
      left -= c;
    }
    sub.src.resize(w);
    sub.dst.resize(w);
    sub.edgeIds.resize(w);
    sub.nodes.resize(static_cast<size_t>(keepNodes));
    item.trimmedNodes = n - keepNodes;
    item.trimmedEdges = m - static_cast<int64_t>(w);
  }
  const Graph g = sampledGraph(*graph_, sub);
  item.batch = collator_.collate({&g});
  item.batch.nodeIndex = std::move(sub.nodes);
  item.batch.numSeeds = sub.numSeeds;
  item.batch.inputId = std::move(inputIds);
  item.batch.nodesPerHop = std::move(sub.nodesPerHop);
  item.batch.edgesPerHop = std::move(sub.edgesPerHop);
  if (options_.prepare) options_.prepare(item.batch);
  return item;
}

Batch FixedSizeNeighborLoader::collateBatch(int64_t i) const { return makeItem(i).batch; }

bool FixedSizeNeighborLoader::next(Batch& out) {
  Item item;
  if (!prefetcher_.next(item)) return false;
  report_.add(item.batch);
  report_.trimmed += (item.trimmedNodes > 0 || item.trimmedEdges > 0) ? 1 : 0;
  report_.trimmedNodes += item.trimmedNodes;
  report_.trimmedEdges += item.trimmedEdges;
  out = std::move(item.batch);
  return true;
}

}  // namespace gnn
