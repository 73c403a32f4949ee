// HeteroNodeBatches: node_property --loader neighbor | cluster on a heterogeneous graph: one seed's fixed-size
// batches, either of --batch-size training nodes of the target type and their sampled neighbourhoods
// (loaders/HeteroFixedSizeNeighborLoader.h; --num-neighbors for every edge type, PyG's num_neighbors=[15, 10]) or
// of --clusters-per-batch of the --clusters METIS clusters of all nodes of all types with the typed edges between
// them (loaders/HeteroClusterLoader.h, OGB's ogbn-mag cluster_gcn.py; sizes the worst case, so nothing is trimmed;
// the batch's training nodes of the target type are its seeds). Each is laid out as one typed graph with the whole
// graph's relation numbers (loaders/HeteroBatchToHomogeneous.h), so the weights trained on batches are the ones
// full-batch evaluation reads. A step's model computes the target type's first targetRows rows (the seeds, then
// rows the seed mask leaves out: a fixed count however many seeds a batch holds). A cluster batch without training
// nodes has no loss and is passed over.
//
//   app::buildHeteroSampler(data, settings);                 // once: every edge type's incoming edges indexed
//   app::HeteroNodeBatches batches(settings, data, seed);    // the sizes from epoch 0's batches (--fixed-sizes)
//   batches.startEpoch(epoch);
//   for (app::HeteroNodeStep st; batches.next(st);)
//     loss = crossEntropy(model.forward(st.features, st.nodeIds, st.edgeIndex, st.edgeType, st.targetRows), st.y,
//                         st.seedMask);
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/HeteroNodeData.h"
#include "app/NodeFlags.h"
#include "loaders/HeteroBatchLoader.h"

namespace gnn::app {

/// One training step's inputs: per node type (the layout's order) its rows' features (featured types) or node ids
/// (the others), the typed graph, and the target rows' labels and seed mask.
struct HeteroNodeStep {
  std::vector<Tensor> features, nodeIds;
  Tensor edgeIndex, edgeType;
  int64_t targetRows = 0, numSeeds = 0;
  Tensor y, seedMask;  // int64 [targetRows] and uint8 [targetRows]
};

/// Indexes the graph for sampling (data.sampler, data.samplerMs) with --loader neighbor; partitions it (data.clusters,
/// data.partitionMs; METIS seeded by --seed) with --loader cluster.
void buildHeteroSampler(HeteroNodeData& data, const NodeSettings& s);
/// --num-neighbors's default for R-GCN's --layers: a fan-out per layer, the homogeneous default's 15, 10, 5 (5
/// for each further layer).
std::string defaultHeteroFanouts(int64_t layers);

class HeteroNodeBatches {
 public:
  /// The loader over data's training nodes of the target type, shuffled by `seed`; its sizes from the flags (the
  /// worst case with --loader cluster), said on stderr unless --quiet.
  HeteroNodeBatches(const NodeSettings& s, const HeteroNodeData& data, uint64_t seed);
  void startEpoch(int64_t epoch) {
    waitMs = 0;
    skipped_ = 0;
    loader_->startEpoch(epoch);
  }
  /// The epoch's next step; false after its last batch. The wait for the loader is counted in waitMs.
  bool next(HeteroNodeStep& out);
  int64_t numBatches() const { return loader_->numBatches(); }
  /// The JSON's loader_runs entry: fixed rows per type, batches, the last epoch's padding report and wait.
  nlohmann::json json() const;
  double waitMs = 0;  ///< this epoch's

 private:
  void makeNeighborLoader(const NodeSettings& s, uint64_t seed);
  void makeClusterLoader(const NodeSettings& s, uint64_t seed);

  const HeteroNodeData& d_;
  int64_t targetRows_ = 0;
  int64_t skipped_ = 0;  // this epoch's batches without training nodes
  std::string sizesFrom_;
  std::unique_ptr<HeteroBatchLoader> loader_;
};

}  // namespace gnn::app
