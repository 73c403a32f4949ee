// DataLoader: variable-size mini-batches of batchSize graphs (PyG's DataLoader): seeded shuffle, dropLast,
// optional prefetch on a background thread. Batches are plain concatenations (masks all ones); use
// FixedSizeDataLoader when every batch must have the same shape.
//
//   DataLoader::Options o;
//   o.batchSize = 128;
//   DataLoader loader(dataset, o);
//   loader.startEpoch(0);
//   for (Batch b; loader.next(b);) step(b);
#pragma once
#include <memory>

#include "data/Dataset.h"
#include "loaders/Batch.h"
#include "loaders/EpochSampler.h"
#include "loaders/Prefetcher.h"

namespace gnn {

class DataLoader {
 public:
  struct Options {
    int64_t batchSize = 32;
    bool shuffle = true;
    bool dropLast = false;
    uint64_t seed = 0;
    int64_t prefetch = 2;
    bool nodeLevelTargets = false;
  };

  DataLoader(std::shared_ptr<const Dataset> dataset, Options options);
  ~DataLoader();

  void startEpoch(int64_t epoch);
  bool next(Batch& out);
  int64_t numBatches() const;
  /// Batch i of the current epoch (thread-safe).
  Batch collateBatch(int64_t i) const;

 private:
  std::shared_ptr<const Dataset> dataset_;
  Options options_;
  EpochSampler sampler_;
  std::vector<int64_t> order_;
  Prefetcher<Batch> prefetcher_;
};

}  // namespace gnn
