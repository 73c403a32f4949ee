// Generator: a seeded, counter-based random stream. Element i of a draw depends only on (seed, position of
// the draw in the stream, i), never on the thread that computes it, so dropout masks and initialisations are
// bit-identical for any thread count. The state is two integers, saved in checkpoints.
#pragma once
#include <cstdint>

namespace gnn {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}

  /// Reserves n consecutive values and returns the first counter; use with uniformAt/normalAt.
  uint64_t reserve(uint64_t n) {
    uint64_t first = offset_;
    offset_ += n;
    return first;
  }
  /// Uniform in [0, 1) for counter c (24-bit resolution, exact in float).
  float uniformAt(uint64_t c) const { return static_cast<float>(bits(c) >> 40) * (1.0f / 16777216.0f); }
  /// Uniform in [0, 1) with 53-bit resolution.
  double uniformDoubleAt(uint64_t c) const { return static_cast<double>(bits(c) >> 11) * (1.0 / 9007199254740992.0); }
  /// Standard normal for counter c (Box-Muller on two independent streams).
  double normalAt(uint64_t c) const;
  /// Raw 64 random bits for counter c.
  uint64_t bits(uint64_t c) const;

  /// Next value of the stream, for scalar use (shuffles, sampling).
  uint64_t next() { return bits(offset_++); }
  double nextUniform() { return uniformDoubleAt(offset_++); }
  /// Uniform integer in [0, n).
  uint64_t nextBelow(uint64_t n);

  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  void setState(uint64_t seed, uint64_t offset) {
    seed_ = seed;
    offset_ = offset;
  }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

}  // namespace gnn
