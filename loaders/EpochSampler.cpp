#include "loaders/EpochSampler.h"

#include <algorithm>
#include <numeric>

#include "gnn/system/Check.h"

namespace gnn {

Generator EpochSampler::generator(int64_t epoch, uint64_t purpose) const {
  // Each (epoch, purpose) gets its own counter range of 2^40 draws: far more than any epoch uses.
  Generator g(seed_);
  g.setState(seed_, (static_cast<uint64_t>(epoch) * 16 + purpose) << 40);
  return g;
}

EpochSampler::EpochSampler(int64_t size, bool shuffle, uint64_t seed, std::vector<uint8_t> positive)
    : size_(size), shuffle_(shuffle), seed_(seed), positive_(std::move(positive)) {
  GNN_CHECK_ARG(positive_.empty() || static_cast<int64_t>(positive_.size()) == size_, "EpochSampler: ",
                positive_.size(), " class marks for ", size_, " items");
}

int64_t EpochSampler::epochSize() const {
  if (positive_.empty()) return size_;
  int64_t p = 0;
  for (uint8_t v : positive_) p += v != 0;
  return 2 * std::min(p, size_ - p);
}

ChunkShuffle::Epoch EpochSampler::chunkEpoch(int64_t epoch) const {
  GNN_CHECK_ARG(chunks_.enabled() && positive_.empty(), "EpochSampler::chunkEpoch: no chunks set, or balancing");
  Generator g = generator(epoch, 0);
  return chunks_.plan(size_, g, shuffle_);
}

std::vector<int64_t> EpochSampler::order(int64_t epoch) const {
  if (chunks_.enabled() && positive_.empty()) return chunkEpoch(epoch).order;
  if (!positive_.empty()) {
    std::vector<int64_t> pos, neg;
    for (int64_t i = 0; i < size_; ++i) (positive_[static_cast<size_t>(i)] ? pos : neg).push_back(i);
    if (shuffle_) {
      // Both classes from the epoch's shuffle stream, positives first (as Chemprop shuffles them).
      Generator g = generator(epoch, 0);
      shuffleInPlace(pos, g);
      shuffleInPlace(neg, g);
    }
    std::vector<int64_t> o;
    const size_t pairs = std::min(pos.size(), neg.size());
    o.reserve(2 * pairs);
    for (size_t k = 0; k < pairs; ++k) {
      o.push_back(pos[k]);
      o.push_back(neg[k]);
    }
    return o;
  }
  std::vector<int64_t> o(static_cast<size_t>(size_));
  std::iota(o.begin(), o.end(), int64_t{0});
  if (shuffle_) {
    Generator g = generator(epoch, 0);
    shuffleInPlace(o, g);
  }
  return o;
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> batchOfOrder(const std::vector<int64_t>& inputNodes,
                                                                  const std::vector<int64_t>& order,
                                                                  int64_t batchSize, int64_t i) {
  const int64_t n = static_cast<int64_t>(order.size());
  const int64_t b = std::min(n, i * batchSize), e = std::min(n, b + batchSize);
  std::vector<int64_t> ids, pos;
  ids.reserve(static_cast<size_t>(e - b));
  pos.reserve(static_cast<size_t>(e - b));
  for (int64_t k = b; k < e; ++k) {
    const int64_t p = order[static_cast<size_t>(k)];
    pos.push_back(p);
    ids.push_back(inputNodes[static_cast<size_t>(p)]);
  }
  return {ids, pos};
}

}  // namespace gnn
