// HeteroBatchLoader: what a node-level training loop asks of a loader that cuts one heterogeneous graph into
// fixed-size HeteroBatches (HeteroFixedSizeNeighborLoader's sampled neighbourhoods, HeteroClusterLoader's METIS
// clusters): an epoch's batches in order, how many there are, their fixed rows, and how much was padding or trimmed.
//
//   std::unique_ptr<HeteroBatchLoader> loader = ...;
//   loader->startEpoch(epoch);
//   for (HeteroBatch b; loader->next(b);) step(b);   // loss over b.seedMask
#pragma once
#include <cstdint>

#include "loaders/HeteroBatch.h"
#include "loaders/HeteroBatchCollate.h"
#include "loaders/PaddingReport.h"

namespace gnn {

class HeteroBatchLoader {
 public:
  virtual ~HeteroBatchLoader() = default;
  /// Starts epoch `epoch`'s pass (its batches depend only on the loader's seed and the epoch).
  virtual void startEpoch(int64_t epoch) = 0;
  /// The pass's next batch; false once every batch was handed out.
  virtual bool next(HeteroBatch& out) = 0;
  virtual int64_t numBatches() const = 0;
  /// The batches handed out so far in this pass: nodes and edges summed over the types (one graph per batch).
  virtual const PaddingReport& report() const = 0;
  virtual const HeteroBatchSizes& sizes() const = 0;
};

}  // namespace gnn
