// FixedSizeDataLoader: an epoch of fixed-size batches (every batch exactly numNodes × numEdges × numGraphs
// rows), packed by PadToMax, StreamPack or PlannedPack, collated on a background thread (prefetch) and
// reproducible: the same seed gives the same batches in the same order, with or without prefetch.
//
//   FixedSizeDataLoader::Options lo;
//   lo.strategy = PackingStrategy::PlannedPack;
//   lo.seed = 7;
//   FixedSizeDataLoader loader(dataset, FixedSizeOptions{2048, 4608, 141}, lo);
//   for (int64_t epoch = 0; epoch < epochs; ++epoch) {
//     loader.startEpoch(epoch);
//     Batch b;
//     while (loader.next(b)) step(b);
//     std::cout << loader.report().toString() << "\n";
//   }
#pragma once
#include <memory>

#include "data/MappedReadAhead.h"
#include "loaders/Batch.h"
#include "loaders/BatchPlanner.h"
#include "loaders/EpochSampler.h"
#include "loaders/FixedSizeCollator.h"
#include "loaders/Prefetcher.h"
#include "loaders/RequestShard.h"

namespace gnn {

class FixedSizeDataLoader {
 public:
  struct Options {
    PackingStrategy strategy = PackingStrategy::PadToMax;
    OverSizeStrategy overSize = OverSizeStrategy::Error;
    bool shuffle = true;
    bool dropLast = false;
    uint64_t seed = 0;
    /// Batches prepared ahead on a background thread (0 = collate in next()).
    int64_t prefetch = 2;
    /// PlannedPack window in graphs (0 = whole epoch).
    int64_t packWindow = 0;
    bool nodeLevelTargets = false;
    /// Micro-batches per host request for nextRequest(): deviceIterations × replicas × gradientAccumulation.
    int64_t microBatchesPerRequest = 1;
    /// Replicas spread over processes (MPI): this process collates and returns only its replicas' batches
    /// (shard.perRequest must be microBatchesPerRequest). Default: every batch.
    RequestShard shard;
    /// Non-empty (one mark per graph, 1 = positive): each epoch balances the classes (EpochSampler).
    std::vector<uint8_t> classBalance;
    /// chunks.chunk > 0: epochs visit shuffled chunks of consecutive graphs, shuffled within windows of
    /// chunks (loaders/ChunkShuffle.h; not with classBalance); PlannedPack's window then defaults to one window.
    ChunkShuffle chunks;
    /// A memory-mapped dataset's page-cache advice (graph i of the loader is item i of readAhead): at each
    /// epoch's start the pages read before are released; with chunks, the prefetch thread reads the next window
    /// ahead (MADV_WILLNEED) and releases each window once its batches are collated; without, it releases every
    /// page read after each kReleaseEvery graphs and asks for no read-around (MADV_RANDOM). Batches are the
    /// same bits with or without it.
    std::shared_ptr<const MappedReadAhead> readAhead;
  };
  /// Graphs collated between two releases of a shuffled (unchunked) mapped dataset's pages.
  static constexpr int64_t kReleaseEvery = 16384;

  FixedSizeDataLoader(std::shared_ptr<const Dataset> dataset, FixedSizeOptions fixed, Options options);
  ~FixedSizeDataLoader();

  /// Plans epoch `epoch` (shuffle, packing, trimming) and starts prefetching its batches.
  void startEpoch(int64_t epoch);
  /// Next batch of the epoch started last; false at the end of the epoch.
  bool next(Batch& out);
  /// Next host request: microBatchesPerRequest batches stacked by stackMicroBatches (each keeps local
  /// indices). The epoch's last request may hold fewer: the device pads or drops it as the user chose and
  /// reports the count (never a silent drop, unlike PopTorch's DataLoader). With a shard, this process's
  /// batches of the request only, possibly none (an empty Batch: the device program must still run it).
  bool nextRequest(Batch& out);
  /// Micro-batches of the whole job's request nextRequest() returned last (every process's).
  int64_t lastRequestMicroBatches() const { return lastRequest_; }

  /// Batches in the current epoch (every process's).
  int64_t numBatches() const { return static_cast<int64_t>(plan_.batches.size()); }
  /// The current epoch's padding report (from its plan: exact before any batch is collated).
  PaddingReport report() const { return plan_.report(fixed_); }
  const EpochPlan& plan() const { return plan_; }
  /// Collates batch i of the current plan (thread-safe; what the prefetch thread calls).
  Batch collateBatch(int64_t i) const;
  /// The current epoch's chunks and windows (empty unless options().chunks is on).
  const ChunkShuffle::Epoch& chunkEpoch() const { return chunkEpoch_; }
  const FixedSizeOptions& fixedSizeOptions() const { return fixed_; }
  const Options& options() const { return options_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  FixedSizeOptions fixed_;
  Options options_;
  EpochSampler sampler_;
  BatchPlanner planner_;
  FixedSizeCollator collator_;
  EpochPlan plan_;
  Prefetcher<Batch> prefetcher_;
  // With a shard: the plan's batches this process collates, and per host request how many of them it holds and
  // how many the whole job's request holds.
  std::vector<int64_t> local_;
  std::vector<std::pair<int64_t, int64_t>> requestSizes_;
  size_t nextRequestIndex_ = 0;
  // Page-cache advice (prefetch thread): per planned batch the furthest epoch position of its graphs, the next
  // window to read ahead and to release, graphs since the last release.
  void adviseBefore(int64_t batch);
  ChunkShuffle::Epoch chunkEpoch_;
  std::vector<int64_t> batchReach_;
  size_t fetched_ = 0, released_ = 0;
  int64_t sinceRelease_ = 0;
  int64_t lastRequest_ = 0;
};

}  // namespace gnn
