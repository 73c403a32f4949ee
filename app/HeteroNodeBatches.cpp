#include "app/HeteroNodeBatches.h"

#include <algorithm>
#include <cstdio>

#include "app/Program.h"
#include "gnn/system/SystemInfo.h"
#include "loaders/HeteroBatchToHomogeneous.h"
#include "loaders/HeteroClusterLoader.h"
#include "loaders/HeteroFixedSizeNeighborLoader.h"

namespace gnn::app {

void buildHeteroSampler(HeteroNodeData& data, const NodeSettings& s) {
  Stopwatch sw;
  if (s.neighborLoader()) {
    data.sampler = std::make_shared<const HeteroNeighborSampler>(data.dataset.graph);
    data.samplerMs = sw.ms();
  } else if (s.clusterLoader()) {
    requireRange("--clusters", static_cast<double>(s.clusters), 1, static_cast<double>(data.graph.numNodes));
    data.clusters = std::make_shared<const HeteroClusterData>(data.dataset.graph, s.clusters, s.training.seed);
    data.partitionMs = sw.ms();
  }
}

std::string defaultHeteroFanouts(int64_t layers) {
  std::string out;
  for (int64_t l = 0; l < layers; ++l) out += (l ? "," : "") + std::to_string(l == 0 ? 15 : l == 1 ? 10 : 5);
  return out;
}

HeteroNodeBatches::HeteroNodeBatches(const NodeSettings& s, const HeteroNodeData& data, uint64_t seed) : d_(data) {
  Stopwatch sw;
  if (s.clusterLoader())
    makeClusterLoader(s, seed);
  else
    makeNeighborLoader(s, seed);
  if (!s.training.quiet)
    std::fprintf(stderr, "%s batches: %s (%s, %.0f ms)\n", s.clusterLoader() ? "cluster" : "neighbour",
                 loader_->sizes().toString().c_str(), sizesFrom_.c_str(), sw.ms());
}

void HeteroNodeBatches::makeNeighborLoader(const NodeSettings& s, uint64_t seed) {
  HeteroFixedSizeNeighborLoader::Options o;
  o.numNeighbors = HeteroNumNeighbors(s.fanouts());
  o.batchSize = s.batchSize;
  o.seed = seed;
  o.prefetch = 1;  // one batch sampled ahead on the loader's thread, beside the step
  targetRows_ = std::min<int64_t>(s.batchSize, static_cast<int64_t>(d_.trainIdx.size()));
  const bool worst = s.fixedSizes == "worst";
  const HeteroBatchSizes sizes =
      worst ? HeteroFixedSizeNeighborLoader::worstCase(*d_.sampler, d_.targetType, o)
            : HeteroFixedSizeNeighborLoader::fromLoader(*d_.sampler, d_.targetType, d_.trainIdx, o, 1000, s.sizeMargin);
  sizesFrom_ = worst ? "the worst case" : "epoch 0's largest batch + margin";
  // The graph lives in `data`, which outlives every seed's loader: shared without ownership.
  const std::shared_ptr<const HeteroGraph> graph(std::shared_ptr<const HeteroGraph>(), &d_.dataset.graph);
  loader_ = std::make_unique<HeteroFixedSizeNeighborLoader>(graph, d_.sampler, d_.targetType, d_.trainIdx, o, sizes);
}

void HeteroNodeBatches::makeClusterLoader(const NodeSettings& s, uint64_t seed) {
  HeteroClusterLoader::Options o;
  o.clustersPerBatch = s.clustersPerBatch;
  o.seed = seed;
  o.prefetch = 1;  // one batch made ahead on the loader's thread, beside the step
  sizesFrom_ = "room for any " + std::to_string(s.clustersPerBatch) + " clusters";
  const std::shared_ptr<const HeteroGraph> graph(std::shared_ptr<const HeteroGraph>(), &d_.dataset.graph);
  auto loader = std::make_unique<HeteroClusterLoader>(graph, d_.clusters, d_.targetType, d_.trainIdx, o,
                                                      HeteroClusterLoader::worstCase(*d_.clusters, o));
  targetRows_ = std::max<int64_t>(loader->maxSeeds(), 1);
  loader_ = std::move(loader);
}

bool HeteroNodeBatches::next(HeteroNodeStep& out) {
  Stopwatch sw;
  HeteroBatch b;
  bool more = loader_->next(b);
  for (; more && b.numSeeds == 0; more = loader_->next(b)) ++skipped_;  // no training node: no loss
  waitMs += sw.ms();
  if (!more) return false;
  const HomogeneousGraph typed = heteroBatchToHomogeneous(b, d_.graph.edgeTypeNames);
  out.features.clear();
  out.nodeIds.clear();
  for (const HeteroBatch::NodeRows& n : b.nodes) {
    out.features.push_back(n.x);
    out.nodeIds.push_back(n.x.defined() ? Tensor() : n.nodeId);
  }
  out.edgeIndex = typed.edgeIndex;
  out.edgeType = typed.edgeType;
  out.targetRows = targetRows_;
  out.numSeeds = b.numSeeds;
  // The target type's first rows: the seeds, then (in a short batch) rows the seed mask leaves out.
  out.y = b.y.slice(0, targetRows_).clone().reshape({targetRows_});
  out.seedMask = b.seedMask.slice(0, targetRows_).clone();
  return true;
}

nlohmann::json HeteroNodeBatches::json() const {
  const HeteroBatchSizes& sizes = loader_->sizes();
  return {{"fixed_num_nodes", sizes.numNodes},
          {"fixed_num_edges", [&] {
             nlohmann::json j;
             for (const auto& [type, n] : sizes.numEdges) j[type.str()] = n;
             return j;
           }()},
          {"target_rows", targetRows_},
          {"batches_per_epoch", loader_->numBatches()},
          {"last_epoch", loader_->report().toJson()},
          {"last_epoch_batches_without_seeds", skipped_},
          {"last_epoch_wait_ms", waitMs}};
}

}  // namespace gnn::app
