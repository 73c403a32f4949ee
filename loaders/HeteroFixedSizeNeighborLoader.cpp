#include "loaders/HeteroFixedSizeNeighborLoader.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "gnn/system/Check.h"

namespace gnn {

namespace {

void checkHeteroOptions(const HeteroFixedSizeNeighborLoader::Options& o) {
  GNN_CHECK_ARG(o.batchSize >= 1, "HeteroFixedSizeNeighborLoader: batchSize = ", o.batchSize, " must be >= 1");
  GNN_CHECK_ARG(o.overSize == OverSizeStrategy::TrimNodesAndEdges || o.overSize == OverSizeStrategy::Error,
                "HeteroFixedSizeNeighborLoader: over-size strategy must be TrimNodesAndEdges or Error");
}

}  // namespace

HeteroFixedSizeNeighborLoader::HeteroFixedSizeNeighborLoader(std::shared_ptr<const HeteroGraph> graph,
                                                             std::shared_ptr<const HeteroNeighborSampler> sampler,
                                                             std::string inputType, std::vector<int64_t> inputNodes,
                                                             Options options, Sizes sizes)
    : graph_(std::move(graph)),
      sampler_(std::move(sampler)),
      inputType_(std::move(inputType)),
      inputNodes_(std::move(inputNodes)),
      options_(std::move(options)),
      sizes_(std::move(sizes)),
      order_(static_cast<int64_t>(inputNodes_.size()), options_.shuffle, options_.seed) {
  GNN_CHECK_ARG(graph_ && sampler_, "HeteroFixedSizeNeighborLoader: no graph or no sampler");
  checkHeteroOptions(options_);
  GNN_CHECK_ARG(graph_->nodeTypes() == sampler_->nodeTypes() && graph_->edgeTypes() == sampler_->edgeTypes(),
                "HeteroFixedSizeNeighborLoader: the sampler's graph has other types than this graph");
  const int64_t input = sampler_->nodeTypeIndex(inputType_);
  sampler_->fanouts(options_.numNeighbors);  // refuses bad fan-outs now rather than in the first batch
  rows_ = heteroBatchRows(*graph_, sizes_, "HeteroFixedSizeNeighborLoader");
  const int64_t seeds = std::min<int64_t>(options_.batchSize, static_cast<int64_t>(inputNodes_.size()));
  GNN_CHECK_ARG(rows_.nodes[static_cast<size_t>(input)] - 1 >= seeds, "HeteroFixedSizeNeighborLoader: ",
                rows_.nodes[static_cast<size_t>(input)], " rows of '", inputType_, "' leave no room for ", seeds,
                " seeds and the padding row: set sizes.numNodes[\"", inputType_, "\"] >= ", seeds + 1);
  const int64_t n = sampler_->numNodes(input);
  std::vector<uint8_t> seen(static_cast<size_t>(n), 0);
  for (int64_t v : inputNodes_) {
    GNN_CHECK_ARG(v >= 0 && v < n, "HeteroFixedSizeNeighborLoader: input node ", v, " is outside node type '",
                  inputType_, "''s ", n, " nodes");
    GNN_CHECK_ARG(!seen[static_cast<size_t>(v)], "HeteroFixedSizeNeighborLoader: input node ", v, " is listed twice");
    seen[static_cast<size_t>(v)] = 1;
  }
}

HeteroFixedSizeNeighborLoader::~HeteroFixedSizeNeighborLoader() { prefetcher_.stop(); }

HeteroFixedSizeNeighborLoader::Sizes HeteroFixedSizeNeighborLoader::worstCase(const HeteroNeighborSampler& sampler,
                                                                              const std::string& inputType,
                                                                              const Options& options) {
  checkHeteroOptions(options);
  const auto [nodes, edges] = sampler.worstCase(inputType, options.batchSize, options.numNeighbors);
  Sizes s;
  for (size_t t = 0; t < nodes.size(); ++t) s.numNodes[sampler.nodeTypes()[t]] = nodes[t] + 1;
  for (size_t e = 0; e < edges.size(); ++e) s.numEdges[sampler.edgeTypes()[e]] = edges[e] + 1;
  return s;
}

HeteroFixedSizeNeighborLoader::Sizes HeteroFixedSizeNeighborLoader::fromLoader(
    const HeteroNeighborSampler& sampler, const std::string& inputType, const std::vector<int64_t>& inputNodes,
    const Options& options, int64_t sampleLimit, double margin) {
  checkHeteroOptions(options);
  GNN_CHECK_ARG(sampleLimit >= 1 && margin >= 0, "HeteroFixedSizeNeighborLoader::fromLoader: sampleLimit = ",
                sampleLimit, ", margin = ", margin);
  const std::vector<int64_t> epochOrder =
      EpochSampler(static_cast<int64_t>(inputNodes.size()), options.shuffle, options.seed).order(0);
  const int64_t batches = (static_cast<int64_t>(inputNodes.size()) + options.batchSize - 1) / options.batchSize;
  const int64_t count = std::min(batches, sampleLimit);
  return heteroSizesOfBatches(
      count, sampler.nodeTypes(), sampler.edgeTypes(),
      [&](int64_t i) {
        return sampler.sample(inputType, batchOfOrder(inputNodes, epochOrder, options.batchSize, i).first,
                              options.numNeighbors, options.seed, 0, options.replace);
      },
      worstCase(sampler, inputType, options), margin);
}

int64_t HeteroFixedSizeNeighborLoader::numBatches() const {
  return (static_cast<int64_t>(inputNodes_.size()) + options_.batchSize - 1) / options_.batchSize;
}

void HeteroFixedSizeNeighborLoader::startEpoch(int64_t epoch) {
  prefetcher_.stop();
  epoch_ = epoch;
  epochOrder_ = order_.order(epoch);
  report_ = PaddingReport();
  prefetcher_.start(numBatches(), [this](int64_t i) { return makeItem(i); }, options_.prefetch);
}

std::vector<int64_t> HeteroFixedSizeNeighborLoader::batchSeeds(int64_t i) const {
  GNN_CHECK_ARG(!epochOrder_.empty() || inputNodes_.empty(), "HeteroFixedSizeNeighborLoader: call startEpoch() first");
  GNN_CHECK_ARG(i >= 0 && i < numBatches(), "HeteroFixedSizeNeighborLoader: batch ", i, " of ", numBatches());
  return batchOfOrder(inputNodes_, epochOrder_, options_.batchSize, i).first;
}

std::pair<int64_t, int64_t> HeteroFixedSizeNeighborLoader::fitToSizes(HeteroSampledSubgraph& sub, int64_t i) const {
  if (options_.overSize == OverSizeStrategy::Error && heteroSubgraphOverSize(sub, rows_))
    invalidArgument("HeteroFixedSizeNeighborLoader: batch ", i, " of epoch ", epoch_, " sampled",
                    heteroOverSizeReport(sub, rows_), " raise those sizes (worstCase() never trims) or trim");
  // Each type keeps its first rows (the deepest hop's go first; the seeds, first of all, never go).
  return trimHeteroSubgraph(sub, rows_);
}

CollatedHeteroBatch HeteroFixedSizeNeighborLoader::makeItem(int64_t i) const {
  GNN_CHECK_ARG(!epochOrder_.empty() || inputNodes_.empty(), "HeteroFixedSizeNeighborLoader: call startEpoch() first");
  auto [seeds, inputIds] = batchOfOrder(inputNodes_, epochOrder_, options_.batchSize, i);
  HeteroSampledSubgraph sub =
      sampler_->sample(inputType_, seeds, options_.numNeighbors, options_.seed, epoch_, options_.replace);
  CollatedHeteroBatch item;
  std::tie(item.trimmedNodes, item.trimmedEdges) = fitToSizes(sub, i);
  item.batch = collateHeteroBatch(*graph_, sub, rows_, sizes_);
  item.batch.inputId = std::move(inputIds);
  return item;
}

HeteroBatch HeteroFixedSizeNeighborLoader::collateBatch(int64_t i) const { return makeItem(i).batch; }

bool HeteroFixedSizeNeighborLoader::next(HeteroBatch& out) { return handOutHeteroBatch(prefetcher_, report_, out); }

}  // namespace gnn
