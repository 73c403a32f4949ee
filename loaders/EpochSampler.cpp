#include "loaders/EpochSampler.h"

#include <numeric>

namespace gnn {

Generator EpochSampler::generator(int64_t epoch, uint64_t purpose) const {
  // Each (epoch, purpose) gets its own counter range of 2^40 draws: far more than any epoch uses.
  Generator g(seed_);
  g.setState(seed_, (static_cast<uint64_t>(epoch) * 16 + purpose) << 40);
  return g;
}

std::vector<int64_t> EpochSampler::order(int64_t epoch) const {
  std::vector<int64_t> o(static_cast<size_t>(size_));
  std::iota(o.begin(), o.end(), int64_t{0});
  if (shuffle_) {
    Generator g = generator(epoch, 0);
    shuffleInPlace(o, g);
  }
  return o;
}

}  // namespace gnn
