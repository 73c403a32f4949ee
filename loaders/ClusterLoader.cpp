#include "loaders/ClusterLoader.h"

#include <algorithm>

#include "loaders/GraphTrim.h"

namespace gnn {

ClusterLoader::ClusterLoader(std::shared_ptr<const ClusterData> clusters, FixedSizeOptions fixed, Options options)
    : clusters_(std::move(clusters)),
      fixed_(fixed),
      options_(options),
      sampler_(clusters_ ? clusters_->numClusters() : 0, options.shuffle, options.seed),
      collator_(fixed, /*nodeLevelTargets=*/true) {
  GNN_CHECK_ARG(clusters_ != nullptr, "ClusterLoader: no ClusterData");
  GNN_CHECK_ARG(fixed_.numGraphs == 2, "ClusterLoader: numGraphs = ", fixed_.numGraphs,
                " but a cluster batch is one merged graph plus one padding graph: set numGraphs = 2");
  GNN_CHECK_ARG(options_.clustersPerBatch >= 1 && options_.clustersPerBatch <= clusters_->numClusters(),
                "ClusterLoader: clustersPerBatch = ", options_.clustersPerBatch, " must be in [1, ",
                clusters_->numClusters(), "]");
}

ClusterLoader::~ClusterLoader() { prefetcher_.stop(); }

int64_t ClusterLoader::numBatches() const {
  int64_t k = clusters_->numClusters(), c = options_.clustersPerBatch;
  return (k + c - 1) / c;
}

void ClusterLoader::startEpoch(int64_t epoch) {
  prefetcher_.stop();
  epoch_ = epoch;
  order_ = sampler_.order(epoch);
  report_ = PaddingReport();
  prefetcher_.start(numBatches(), [this](int64_t i) { return makeItem(i); }, options_.prefetch);
}

ClusterLoader::Item ClusterLoader::makeItem(int64_t i) const {
  GNN_CHECK_ARG(!order_.empty(), "ClusterLoader: call startEpoch() first");
  size_t begin = static_cast<size_t>(i * options_.clustersPerBatch);
  size_t end = std::min(order_.size(), begin + static_cast<size_t>(options_.clustersPerBatch));
  std::vector<int64_t> ids(order_.begin() + static_cast<std::ptrdiff_t>(begin),
                           order_.begin() + static_cast<std::ptrdiff_t>(end));
  std::vector<int64_t> nodeIds;
  Graph g = clusters_->subgraph(ids, &nodeIds);
  Item item;
  if (!fixed_.fitsGraph(g.numNodes, g.numEdges())) {
    GNN_CHECK_ARG(options_.overSize != OverSizeStrategy::Error && options_.overSize != OverSizeStrategy::Skip,
                  "ClusterLoader: clusters of batch ", i, " hold ", g.numNodes, " nodes and ", g.numEdges(),
                  " edges but a batch holds ", fixed_.graphLimits(),
                  ": raise the sizes (ClusterData::worstCaseOptions) or trim");
    Generator gen = sampler_.generator(epoch_, 2);
    gen.setState(gen.seed(), gen.offset() + static_cast<uint64_t>(i) * 1048576);
    std::vector<int64_t> kept;  // subgraph-local ids of the nodes that survive
    g = trimGraph(g, fixed_.maxGraphNodes(), fixed_.maxGraphEdges(), options_.overSize, gen,
                  /*nodeLevelTargets=*/true, "cluster batch " + std::to_string(i), &kept);
    for (int64_t& v : kept) v = nodeIds[static_cast<size_t>(v)];
    nodeIds = std::move(kept);
    item.trimmed = true;
  }
  item.batch = collator_.collate({&g}, ids.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{ids.front()});
  item.batch.graphIndex = ids;
  item.batch.nodeIndex = std::move(nodeIds);
  if (options_.prepare) options_.prepare(item.batch);
  return item;
}

Batch ClusterLoader::collateBatch(int64_t i) const { return makeItem(i).batch; }

bool ClusterLoader::next(Batch& out) {
  Item item;
  if (!prefetcher_.next(item)) return false;
  report_.add(item.batch);
  report_.trimmed += item.trimmed ? 1 : 0;
  out = std::move(item.batch);
  return true;
}

}  // namespace gnn
