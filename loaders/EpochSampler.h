// EpochSampler: the order in which a loader visits n items in epoch e: identity, or a seeded Fisher-Yates
// shuffle drawn from gnn::Generator. The order depends only on (seed, epoch), never on threads or on how many
// epochs were visited before, so epoch 7 can be replayed on its own (resuming from a checkpoint).
//
// With classes to balance it is Chemprop's ClassBalanceSampler (chemprop/data/samplers.py, v2; MoleculeSampler in
// v1): an epoch visits as many positives as negatives, min(P, N) of each, alternating positive, negative,
// positive, ...; shuffled, each epoch draws its own positives and negatives (so the larger class is seen a new
// subset at a time), unshuffled it takes the first min(P, N) of each in index order.
//
//   EpochSampler s(n, /*shuffle=*/true, seed, positive);   // positive[i] != 0: item i is a positive
//   s.order(epoch);                                         // 2 min(P, N) items, pos, neg, pos, neg, ...
//
// With chunks (setChunks, for data read from a large memory-mapped file; loaders/ChunkShuffle.h) an epoch visits
// shuffled chunks of consecutive items instead, shuffled within windows of chunks; class balancing keeps its own
// order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "gnn/system/Random.h"
#include "loaders/ChunkShuffle.h"

namespace gnn {

class EpochSampler {
 public:
  EpochSampler(int64_t size, bool shuffle, uint64_t seed) : size_(size), shuffle_(shuffle), seed_(seed) {}
  /// Balancing the classes `positive` marks (one entry per item; empty: no balancing).
  EpochSampler(int64_t size, bool shuffle, uint64_t seed, std::vector<uint8_t> positive);
  std::vector<int64_t> order(int64_t epoch) const;
  /// Epochs in shuffled chunks (chunks.chunk > 0; ignored when balancing). Draws from the shuffle stream, so
  /// without chunks (the default) every order is as before.
  void setChunks(ChunkShuffle chunks) { chunks_ = chunks; }
  const ChunkShuffle& chunks() const { return chunks_; }
  /// The epoch's chunks and windows; its order is order(epoch). Requires chunks().enabled() and no balancing.
  ChunkShuffle::Epoch chunkEpoch(int64_t epoch) const;
  /// Items an epoch visits: size(), or 2 min(P, N) when balancing.
  int64_t epochSize() const;
  bool balanced() const { return !positive_.empty(); }
  /// An independent random stream for (epoch, purpose): purpose 0 is the shuffle; loaders use others for
  /// packing order and trimming so that changing one does not move the other.
  Generator generator(int64_t epoch, uint64_t purpose) const;
  int64_t size() const { return size_; }
  bool shuffle() const { return shuffle_; }
  uint64_t seed() const { return seed_; }

 private:
  int64_t size_;
  bool shuffle_;
  uint64_t seed_;
  std::vector<uint8_t> positive_;
  ChunkShuffle chunks_;
};

/// Batch i of an epoch visiting `order` (positions into inputNodes) batchSize at a time: the batch's input nodes
/// and their positions (the last batch may be short, a batch past the end empty).
std::pair<std::vector<int64_t>, std::vector<int64_t>> batchOfOrder(const std::vector<int64_t>& inputNodes,
                                                                  const std::vector<int64_t>& order,
                                                                  int64_t batchSize, int64_t i);

/// Fisher-Yates shuffle of v in place with draws from g.
template <class T>
void shuffleInPlace(std::vector<T>& v, Generator& g) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[g.nextBelow(i)]);
}

}  // namespace gnn
