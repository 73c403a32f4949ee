#include "app/HeteroNodeBatches.h"

#include <algorithm>
#include <cstdio>

#include "gnn/system/SystemInfo.h"
#include "loaders/HeteroBatchToHomogeneous.h"

namespace gnn::app {

void buildHeteroSampler(HeteroNodeData& data, const NodeSettings& s) {
  if (!s.neighborLoader()) return;
  Stopwatch sw;
  data.sampler = std::make_shared<const HeteroNeighborSampler>(data.dataset.graph);
  data.samplerMs = sw.ms();
}

std::string defaultHeteroFanouts(int64_t layers) {
  std::string out;
  for (int64_t l = 0; l < layers; ++l) out += (l ? "," : "") + std::to_string(l == 0 ? 15 : l == 1 ? 10 : 5);
  return out;
}

HeteroNodeBatches::HeteroNodeBatches(const NodeSettings& s, const HeteroNodeData& data, uint64_t seed) : d_(data) {
  HeteroFixedSizeNeighborLoader::Options o;
  o.numNeighbors = HeteroNumNeighbors(s.fanouts());
  o.batchSize = s.batchSize;
  o.seed = seed;
  o.prefetch = 1;  // one batch sampled ahead on the loader's thread, beside the step
  targetRows_ = std::min<int64_t>(s.batchSize, static_cast<int64_t>(data.trainIdx.size()));
  Stopwatch sw;
  sizes_ = s.fixedSizes == "worst"
               ? HeteroFixedSizeNeighborLoader::worstCase(*data.sampler, data.targetType, o)
               : HeteroFixedSizeNeighborLoader::fromLoader(*data.sampler, data.targetType, data.trainIdx, o, 1000,
                                                           s.sizeMargin);
  if (!s.training.quiet)
    std::fprintf(stderr, "neighbour batches: %s (%s, %.0f ms)\n", sizes_.toString().c_str(),
                 s.fixedSizes == "worst" ? "the worst case" : "epoch 0's largest batch + margin", sw.ms());
  // The graph lives in `data`, which outlives every seed's loader: shared without ownership.
  const std::shared_ptr<const HeteroGraph> graph(std::shared_ptr<const HeteroGraph>(), &data.dataset.graph);
  loader_ = std::make_unique<HeteroFixedSizeNeighborLoader>(graph, data.sampler, data.targetType, data.trainIdx, o,
                                                            sizes_);
}

bool HeteroNodeBatches::next(HeteroNodeStep& out) {
  Stopwatch sw;
  HeteroBatch b;
  const bool more = loader_->next(b);
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
  // The target type's first rows: the seeds, then (in a short last batch) rows the seed mask leaves out.
  out.y = b.y.slice(0, targetRows_).clone().reshape({targetRows_});
  out.seedMask = b.seedMask.slice(0, targetRows_).clone();
  return true;
}

nlohmann::json HeteroNodeBatches::json() const {
  return {{"fixed_num_nodes", sizes_.numNodes},
          {"fixed_num_edges", [&] {
             nlohmann::json j;
             for (const auto& [type, n] : sizes_.numEdges) j[type.str()] = n;
             return j;
           }()},
          {"target_rows", targetRows_},
          {"batches_per_epoch", loader_->numBatches()},
          {"last_epoch", loader_->report().toJson()},
          {"last_epoch_wait_ms", waitMs}};
}

}  // namespace gnn::app
