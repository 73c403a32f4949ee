// BatchPlanner: decides, before any tensor is touched, which graphs go into each fixed-size batch of an epoch
// (PadToMax, StreamPack or PlannedPack) and which are skipped or trimmed. Planning needs only node and edge
// counts, so a whole epoch is planned in milliseconds; collation then only copies rows. The plan depends only on
// (seed, epoch), which is what makes loaders reproducible with or without prefetching.
#pragma once
#include <memory>
#include <vector>

#include "data/Dataset.h"
#include "loaders/EpochSampler.h"
#include "loaders/FixedSizeOptions.h"
#include "loaders/OverSizeStrategy.h"
#include "loaders/PackingStrategy.h"
#include "loaders/PaddingReport.h"

namespace gnn {

struct PlannedGraph {
  int64_t index = 0;                      // dataset index
  int64_t numNodes = 0, numEdges = 0;     // after trimming
  std::shared_ptr<const Graph> trimmed;   // set when the graph was trimmed (collate this instead)
};

struct EpochPlan {
  std::vector<std::vector<PlannedGraph>> batches;
  std::vector<int64_t> skipped;  // dataset indices left out (OverSizeStrategy::Skip)
  int64_t trimmed = 0;
  /// Padding report of the plan: exact, as the fixed sizes and the real counts are known.
  PaddingReport report(const FixedSizeOptions& options) const;
};

class BatchPlanner {
 public:
  struct Options {
    PackingStrategy strategy = PackingStrategy::PadToMax;
    OverSizeStrategy overSize = OverSizeStrategy::Error;
    /// PlannedPack: graphs per packing window (0 = the whole epoch). Smaller windows keep batches closer to
    /// the sampler order at some cost in padding.
    int64_t packWindow = 0;
    /// PadToMax: drop a last batch with fewer than numGraphs − 1 real graphs.
    bool dropLast = false;
    /// y has one row per node (trimming must cut it with the nodes).
    bool nodeLevelTargets = false;
  };

  BatchPlanner(std::shared_ptr<const Dataset> dataset, FixedSizeOptions fixed, Options options);
  /// The plan for epoch `epoch` of the given sampler order; trimming draws from sampler.generator(epoch, 2),
  /// the order of PlannedPack's batches from sampler.generator(epoch, 1).
  EpochPlan plan(const std::vector<int64_t>& order, const EpochSampler& sampler, int64_t epoch) const;

  const FixedSizeOptions& fixedSizeOptions() const { return fixed_; }
  const Options& options() const { return options_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  FixedSizeOptions fixed_;
  Options options_;
};

}  // namespace gnn
