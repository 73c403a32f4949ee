// HeteroClusterLoader: Cluster-GCN batches of a heterogeneous graph, as OGB's ogbn-mag example
// (examples/nodeproppred/mag/cluster_gcn.py) makes them, padded to fixed rows per node type and per edge type
// (loaders/HeteroBatch.h) so a compiled step sees one shape. The clusters of a HeteroClusterData (METIS over all
// nodes of all types) are shuffled each epoch by (seed, epoch) and taken clustersPerBatch at a time; a batch is the
// subgraph those clusters induce, node and edge types kept:
//
//   per node type   real rows = the clusters' nodes of that type (in the target type, the batch's input nodes
//                   first: they are the seeds, seedMask marks them, inputId gives their places in inputNodes), x
//                   gathered (a featureless type has only nodeId, for its embedding), then padding rows
//   per edge type   every edge between the batch's nodes, then padding edges between the first padding rows
//
// so the loss over seedMask is cluster_gcn.py's loss over the batch's training papers. Every node is in exactly
// one batch an epoch. Sizes: worstCase() holds any clustersPerBatch clusters (never trims); fromLoader() is the
// largest batch of epoch 0 per type with a margin. A batch larger than the sizes in some type is trimmed type by
// type (each keeps its first rows: the seeds go last; each edge type the edges between kept rows, in order) and
// counted in report(), or refused (OverSizeStrategy::Error), as HeteroFixedSizeNeighborLoader does.
//
//   auto clusters = std::make_shared<HeteroClusterData>(*graph, 64);
//   HeteroClusterLoader::Options o;  o.clustersPerBatch = 8;
//   HeteroClusterLoader loader(graph, clusters, "paper", trainIdx, o, clusters->worstCase(8));
//   loader.startEpoch(epoch);
//   for (HeteroBatch b; loader.next(b);) step(b);
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/HeteroGraph.h"
#include "loaders/EpochSampler.h"
#include "loaders/HeteroBatchCollate.h"
#include "loaders/HeteroBatchLoader.h"
#include "loaders/HeteroClusterData.h"
#include "loaders/OverSizeStrategy.h"
#include "loaders/Prefetcher.h"

namespace gnn {

class HeteroClusterLoader : public HeteroBatchLoader {
 public:
  struct Options {
    int64_t clustersPerBatch = 1;
    bool shuffle = true;
    uint64_t seed = 0;
    int64_t prefetch = 1;  // batches made ahead on the loader's thread (0: on the caller's)
    /// TrimNodesAndEdges (the default: sizes below the worst case bound memory) or Error.
    OverSizeStrategy overSize = OverSizeStrategy::TrimNodesAndEdges;
  };

  /// graph: the graph `clusters` partitioned; inputNodes: distinct ids of inputType's nodes whose loss is taken (a
  /// split's ids). Throws std::invalid_argument for an unknown type, a size missing or below one row, an input node
  /// out of range or listed twice, or bad options.
  HeteroClusterLoader(std::shared_ptr<const HeteroGraph> graph, std::shared_ptr<const HeteroClusterData> clusters,
                      std::string inputType, std::vector<int64_t> inputNodes, Options options, HeteroBatchSizes sizes);
  ~HeteroClusterLoader() override;

  /// Room for any batch: HeteroClusterData::worstCase.
  static HeteroBatchSizes worstCase(const HeteroClusterData& clusters, const Options& options);
  /// Per type, the largest count over the batches of epoch 0, times 1 + margin, plus the padding row; never above
  /// worstCase().
  static HeteroBatchSizes fromLoader(const HeteroClusterData& clusters, const std::string& inputType,
                                     const Options& options, double margin = 0.05);

  void startEpoch(int64_t epoch) override;
  bool next(HeteroBatch& out) override;
  int64_t numBatches() const override;
  /// Batch i of the current epoch, made on the calling thread (thread-safe).
  HeteroBatch collateBatch(int64_t i) const;
  /// The clusters of batch i of the current epoch.
  std::vector<int64_t> batchClusters(int64_t i) const;
  /// The most seeds a batch holds (its input nodes, within the target type's rows): a model computing the target
  /// type's first maxSeeds() rows computes every seed.
  int64_t maxSeeds() const { return maxSeeds_; }
  const PaddingReport& report() const override { return report_; }
  const HeteroBatchSizes& sizes() const override { return sizes_; }
  const Options& options() const { return options_; }

 private:
  CollatedHeteroBatch makeItem(int64_t i) const;

  std::shared_ptr<const HeteroGraph> graph_;
  std::shared_ptr<const HeteroClusterData> clusters_;
  std::string inputType_;
  int64_t input_ = 0;  // inputType_'s position
  std::vector<int64_t> inputNodes_;
  std::vector<int64_t> inputPos_;  // per node of inputType: its place in inputNodes_, -1 when not an input
  std::vector<uint8_t> isInput_;
  Options options_;
  HeteroBatchSizes sizes_;
  HeteroBatchRows rows_;
  int64_t maxSeeds_ = 0;
  EpochSampler order_;
  int64_t epoch_ = 0;
  std::vector<int64_t> epochOrder_;
  PaddingReport report_;
  Prefetcher<CollatedHeteroBatch> prefetcher_;
};

}  // namespace gnn
