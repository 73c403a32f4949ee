// ClusterLoader: Cluster-GCN batches of fixed size. Each epoch the clusters of a ClusterData are shuffled
// (seeded) and taken clustersPerBatch at a time; their subgraph (with the edges between them) becomes the one
// real graph of a batch of FixedSizeOptions sizes (numGraphs == 2: the real graph and one padding graph),
// trimmed by OverSizeStrategy when it does not fit. Node-level targets and split masks travel with the nodes.
//
//   auto clusters = std::make_shared<ClusterData>(cora, 32);
//   ClusterLoader::Options lo;
//   lo.clustersPerBatch = 4;
//   ClusterLoader loader(clusters, clusters->worstCaseOptions(4), lo);
//   loader.startEpoch(epoch);
//   for (Batch b; loader.next(b);) step(b);   // b.nodeIndex maps rows back to the original nodes
#pragma once
#include <functional>
#include <memory>
#include <mutex>

#include "loaders/Batch.h"
#include "loaders/ClusterData.h"
#include "loaders/EpochSampler.h"
#include "loaders/FixedSizeCollator.h"
#include "loaders/NodeBatchLoader.h"
#include "loaders/OverSizeStrategy.h"
#include "loaders/PaddingReport.h"
#include "loaders/Prefetcher.h"

namespace gnn {

class ClusterLoader : public NodeBatchLoader {
 public:
  struct Options {
    int64_t clustersPerBatch = 1;
    bool shuffle = true;
    uint64_t seed = 0;
    int64_t prefetch = 2;
    /// A merged subgraph larger than the fixed sizes is trimmed (seeded) by default, as sizes chosen below the
    /// worst case are the usual way to bound memory; Error makes it an exception instead.
    OverSizeStrategy overSize = OverSizeStrategy::TrimNodesAndEdges;
    /// Called with each batch once it is collated, on the loader's thread when prefetching: work on a batch
    /// that can overlap the training of the previous one (NodeGCN::prepare builds its normalised adjacency).
    /// Must be thread-safe and must not write the batch.
    std::function<void(const Batch&)> prepare;
  };

  ClusterLoader(std::shared_ptr<const ClusterData> clusters, FixedSizeOptions fixed, Options options);
  ~ClusterLoader() override;

  void startEpoch(int64_t epoch) override;
  bool next(Batch& out) override;
  int64_t numBatches() const override;
  /// Batch i of the current epoch (thread-safe).
  Batch collateBatch(int64_t i) const;
  /// Report of the batches handed out so far in this epoch.
  const PaddingReport& report() const override { return report_; }

 private:
  std::shared_ptr<const ClusterData> clusters_;
  FixedSizeOptions fixed_;
  Options options_;
  EpochSampler sampler_;
  FixedSizeCollator collator_;
  int64_t epoch_ = 0;
  std::vector<int64_t> order_;
  PaddingReport report_;
  // Trimmed counts per batch are known only after collation; stored beside the batch.
  struct Item {
    Batch batch;
    bool trimmed = false;
  };
  Prefetcher<Item> prefetcher_;
  Item makeItem(int64_t i) const;
};

}  // namespace gnn
