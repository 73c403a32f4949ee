// Generator: a seeded, counter-based random stream. Element i of a draw depends only on (seed, position of
// the draw in the stream, i), never on the thread that computes it, so dropout masks and initialisations are
// bit-identical for any thread count. The state is two integers, saved in checkpoints.
#pragma once
#include <cstdint>

namespace gnn {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) { setState(seed, 0); }

  /// Reserves n consecutive values and returns the first counter; use with uniformDoubleAt/normalAt/bits.
  uint64_t reserve(uint64_t n) {
    uint64_t first = offset_;
    offset_ += n;
    return first;
  }
  /// Uniform in [0, 1) with 53-bit resolution.
  double uniformDoubleAt(uint64_t c) const { return static_cast<double>(bits(c) >> 11) * (1.0 / 9007199254740992.0); }
  /// Dropout draws: 16-bit uniforms, four per 64-bit counter (element i of a draw uses bits 16*(i%4) of
  /// counter first + i/4), so a draw of n elements reserves dropoutCounters(n). An element is kept when its
  /// value is >= dropoutThreshold(p) (p resolved to 1/65536).
  static uint64_t dropoutCounters(uint64_t n) { return (n + 3) / 4; }
  static uint32_t dropoutThreshold(double p) { return static_cast<uint32_t>(p * 65536.0 + 0.5); }
  /// Writes the 16-bit values of elements [begin, end) of the draw starting at `first` to out[0..end-begin);
  /// begin must be a multiple of 4.
  void uniform16(uint64_t first, int64_t begin, int64_t end, uint16_t* out) const {
    int64_t i = begin;
    for (; i + 4 <= end; i += 4) {
      uint64_t r = bits(first + static_cast<uint64_t>(i) / 4);
      for (int j = 0; j < 4; ++j) out[i - begin + j] = static_cast<uint16_t>(r >> (16 * j));
    }
    if (i < end) {
      uint64_t r = bits(first + static_cast<uint64_t>(i) / 4);
      for (int j = 0; i + j < end; ++j) out[i - begin + j] = static_cast<uint16_t>(r >> (16 * j));
    }
  }
  /// Standard normal for counter c (Box-Muller on two independent streams).
  double normalAt(uint64_t c) const;
  /// Raw 64 random bits for counter c: a SplitMix64 finaliser (Steele, Lea & Flood 2014) of the counter
  /// mixed with a key derived from the seed. Inline: dropout calls it once per element.
  uint64_t bits(uint64_t c) const { return mix64(key_ ^ (c * 0x9e3779b97f4a7c15ULL)); }
  static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

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
    key_ = mix64(seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
  }

 private:
  uint64_t seed_ = 0;
  uint64_t offset_ = 0;
  uint64_t key_ = 0;
};

}  // namespace gnn
