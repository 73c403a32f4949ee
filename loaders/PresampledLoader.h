// PresampledLoader: another node loader's batches, each epoch's all made before its first is handed out. The
// reference a sampler is measured against: the same batches, in the same order, with no loader thread beside the
// steps (bench/node_loaders.py times an epoch of each). Holds a whole epoch of batches: for measuring, not for
// graphs whose epoch does not fit in memory.
//
//   PresampledLoader loader(std::make_unique<FixedSizeNeighborLoader>(...));
//   loader.startEpoch(epoch);             // samples and collates the epoch's batches (lastPresampleMs())
//   for (Batch b; loader.next(b);) step(b);
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "loaders/NodeBatchLoader.h"

namespace gnn {

class PresampledLoader : public NodeBatchLoader {
 public:
  explicit PresampledLoader(std::unique_ptr<NodeBatchLoader> inner);

  /// Makes every batch of the epoch with the inner loader (its own prefetching included), then hands them out.
  void startEpoch(int64_t epoch) override;
  bool next(Batch& out) override;
  int64_t numBatches() const override { return inner_->numBatches(); }
  /// The inner loader's report over the epoch's batches handed out so far.
  const PaddingReport& report() const override { return report_; }
  /// Milliseconds the last startEpoch() spent making the batches.
  double lastPresampleMs() const { return presampleMs_; }
  NodeBatchLoader& inner() { return *inner_; }

 private:
  std::unique_ptr<NodeBatchLoader> inner_;
  std::vector<Batch> batches_;
  std::vector<PaddingReport> reports_;  // the inner report after each batch
  size_t next_ = 0;
  PaddingReport report_;
  double presampleMs_ = 0;
};

}  // namespace gnn
