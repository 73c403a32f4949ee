#include "loaders/HeteroClusterLoader.h"

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <utility>

#include "gnn/system/Check.h"

namespace gnn {

namespace {

void checkClusterOptions(const HeteroClusterData& clusters, const HeteroClusterLoader::Options& o) {
  GNN_CHECK_ARG(o.clustersPerBatch >= 1 && o.clustersPerBatch <= clusters.numClusters(),
                "HeteroClusterLoader: clustersPerBatch = ", o.clustersPerBatch, " must be in [1, ",
                clusters.numClusters(), "] (the clusters)");
  GNN_CHECK_ARG(o.overSize == OverSizeStrategy::TrimNodesAndEdges || o.overSize == OverSizeStrategy::Error,
                "HeteroClusterLoader: over-size strategy must be TrimNodesAndEdges or Error");
}

int64_t batchesOf(const HeteroClusterData& clusters, const HeteroClusterLoader::Options& o) {
  return (clusters.numClusters() + o.clustersPerBatch - 1) / o.clustersPerBatch;
}

// Batch i of an epoch visiting the clusters in `order`.
std::vector<int64_t> clustersOfBatch(const std::vector<int64_t>& order, int64_t perBatch, int64_t i) {
  const auto begin = static_cast<size_t>(std::min<int64_t>(i * perBatch, static_cast<int64_t>(order.size())));
  const auto end = static_cast<size_t>(std::min<int64_t>((i + 1) * perBatch, static_cast<int64_t>(order.size())));
  return std::vector<int64_t>(order.begin() + static_cast<std::ptrdiff_t>(begin),
                              order.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace

HeteroClusterLoader::HeteroClusterLoader(std::shared_ptr<const HeteroGraph> graph,
                                         std::shared_ptr<const HeteroClusterData> clusters, std::string inputType,
                                         std::vector<int64_t> inputNodes, Options options, HeteroBatchSizes sizes)
    : graph_(std::move(graph)),
      clusters_(std::move(clusters)),
      inputType_(std::move(inputType)),
      inputNodes_(std::move(inputNodes)),
      options_(options),
      sizes_(std::move(sizes)),
      order_(clusters_ ? clusters_->numClusters() : 0, options_.shuffle, options_.seed) {
  GNN_CHECK_ARG(graph_ && clusters_, "HeteroClusterLoader: no graph or no clusters");
  checkClusterOptions(*clusters_, options_);
  GNN_CHECK_ARG(graph_->nodeTypes() == clusters_->nodeTypes() && graph_->edgeTypes() == clusters_->edgeTypes(),
                "HeteroClusterLoader: the clusters' graph has other types than this graph");
  input_ = clusters_->nodeTypeIndex(inputType_);
  rows_ = heteroBatchRows(*graph_, sizes_, "HeteroClusterLoader");
  const int64_t n = clusters_->numNodes(input_);
  GNN_CHECK_ARG(graph_->numNodes(inputType_) == n, "HeteroClusterLoader: the clusters' graph has ", n, " nodes of '",
                inputType_, "', this one ", graph_->numNodes(inputType_));
  inputPos_.assign(static_cast<size_t>(n), -1);
  isInput_.assign(static_cast<size_t>(n), 0);
  for (size_t k = 0; k < inputNodes_.size(); ++k) {
    const int64_t v = inputNodes_[k];
    GNN_CHECK_ARG(v >= 0 && v < n, "HeteroClusterLoader: input node ", v, " is outside node type '", inputType_,
                  "''s ", n, " nodes");
    GNN_CHECK_ARG(!isInput_[static_cast<size_t>(v)], "HeteroClusterLoader: input node ", v, " is listed twice");
    isInput_[static_cast<size_t>(v)] = 1;
    inputPos_[static_cast<size_t>(v)] = static_cast<int64_t>(k);
  }
  maxSeeds_ = std::min(clusters_->mostMarked(options_.clustersPerBatch, input_, isInput_),
                       rows_.nodes[static_cast<size_t>(input_)] - 1);
}

HeteroClusterLoader::~HeteroClusterLoader() { prefetcher_.stop(); }

HeteroBatchSizes HeteroClusterLoader::worstCase(const HeteroClusterData& clusters, const Options& options) {
  checkClusterOptions(clusters, options);
  return clusters.worstCase(options.clustersPerBatch);
}

HeteroBatchSizes HeteroClusterLoader::fromLoader(const HeteroClusterData& clusters, const std::string& inputType,
                                                 const Options& options, double margin) {
  checkClusterOptions(clusters, options);
  GNN_CHECK_ARG(margin >= 0, "HeteroClusterLoader::fromLoader: margin = ", margin);
  const int64_t input = clusters.nodeTypeIndex(inputType);
  const std::vector<int64_t> order = EpochSampler(clusters.numClusters(), options.shuffle, options.seed).order(0);
  const int64_t count = batchesOf(clusters, options);
  return heteroSizesOfBatches(
      count, clusters.nodeTypes(), clusters.edgeTypes(),
      [&](int64_t i) { return clusters.subgraph(clustersOfBatch(order, options.clustersPerBatch, i), input, {}); },
      clusters.worstCase(options.clustersPerBatch), margin);
}

int64_t HeteroClusterLoader::numBatches() const { return batchesOf(*clusters_, options_); }

void HeteroClusterLoader::startEpoch(int64_t epoch) {
  prefetcher_.stop();
  epoch_ = epoch;
  epochOrder_ = order_.order(epoch);
  report_ = PaddingReport();
  prefetcher_.start(numBatches(), [this](int64_t i) { return makeItem(i); }, options_.prefetch);
}

std::vector<int64_t> HeteroClusterLoader::batchClusters(int64_t i) const {
  GNN_CHECK_ARG(!epochOrder_.empty(), "HeteroClusterLoader: call startEpoch() first");
  GNN_CHECK_ARG(i >= 0 && i < numBatches(), "HeteroClusterLoader: batch ", i, " of ", numBatches());
  return clustersOfBatch(epochOrder_, options_.clustersPerBatch, i);
}

CollatedHeteroBatch HeteroClusterLoader::makeItem(int64_t i) const {
  HeteroSampledSubgraph sub = clusters_->subgraph(batchClusters(i), input_, isInput_);
  if (options_.overSize == OverSizeStrategy::Error && heteroSubgraphOverSize(sub, rows_))
    invalidArgument("HeteroClusterLoader: batch ", i, " of epoch ", epoch_, " holds", heteroOverSizeReport(sub, rows_),
                    " raise those sizes (worstCase() never trims) or trim");
  CollatedHeteroBatch item;
  // Each type keeps its first rows; in the target type the seeds come first, so they go last.
  std::tie(item.trimmedNodes, item.trimmedEdges) = trimHeteroSubgraph(sub, rows_);
  item.batch = collateHeteroBatch(*graph_, sub, rows_, sizes_);
  const std::vector<int64_t>& targets = sub.nodes[static_cast<size_t>(input_)];
  for (int64_t k = 0; k < sub.numSeeds; ++k)
    item.batch.inputId.push_back(inputPos_[static_cast<size_t>(targets[static_cast<size_t>(k)])]);
  return item;
}

HeteroBatch HeteroClusterLoader::collateBatch(int64_t i) const { return makeItem(i).batch; }

bool HeteroClusterLoader::next(HeteroBatch& out) { return handOutHeteroBatch(prefetcher_, report_, out); }

}  // namespace gnn
