// NodeBatchLoader: what a node-level training loop asks of a loader that cuts one large graph into fixed-size
// batches (ClusterLoader's METIS clusters, FixedSizeNeighborLoader's sampled neighbourhoods): an epoch's batches in
// order, how many there are, and how much of them was padding or trimmed.
//
//   std::unique_ptr<NodeBatchLoader> loader = ...;
//   loader->startEpoch(epoch);
//   for (Batch b; loader->next(b);) step(b);   // loss over b.trainMask
#pragma once
#include <cstdint>

#include "loaders/Batch.h"
#include "loaders/PaddingReport.h"

namespace gnn {

class NodeBatchLoader {
 public:
  virtual ~NodeBatchLoader() = default;
  /// Starts epoch `epoch`'s pass (its order depends only on the loader's seed and the epoch).
  virtual void startEpoch(int64_t epoch) = 0;
  /// The pass's next batch; false once every batch was handed out.
  virtual bool next(Batch& out) = 0;
  virtual int64_t numBatches() const = 0;
  /// The batches handed out so far in this pass.
  virtual const PaddingReport& report() const = 0;
};

}  // namespace gnn
