// EpochSampler: the order in which a loader visits n items in epoch e: identity, or a seeded Fisher-Yates
// shuffle drawn from gnn::Generator. The order depends only on (seed, epoch), never on threads or on how many
// epochs were visited before, so epoch 7 can be replayed on its own (resuming from a checkpoint).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "gnn/Random.h"

namespace gnn {

class EpochSampler {
 public:
  EpochSampler(int64_t size, bool shuffle, uint64_t seed) : size_(size), shuffle_(shuffle), seed_(seed) {}
  std::vector<int64_t> order(int64_t epoch) const;
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
};

/// Fisher-Yates shuffle of v in place with draws from g.
template <class T>
void shuffleInPlace(std::vector<T>& v, Generator& g) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[g.nextBelow(i)]);
}

}  // namespace gnn
