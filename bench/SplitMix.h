// SplitMix: the dataset generators' random stream (bench/ProductsLikeGraph.h, bench/MagLikeGraph.h). Their files must
// be the same bytes for the same options on any machine, so they draw from their own generator rather than <random>,
// whose distributions differ between standard libraries.
//
//   SplitMix r = detail::stream(seed, 3);   // one stream per purpose
//   double u = r.uniform();                 // [0, 1)
//   uint64_t k = r.below(10);               // 0 .. 9
#pragma once
#include <cmath>
#include <cstdint>

namespace gnn::bench::detail {

// splitmix64 (Steele, Lea & Flood, OOPSLA 2014): one 64-bit state, passes BigCrush, trivially reproducible.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  uint64_t below(uint64_t n) { return static_cast<uint64_t>(uniform() * static_cast<double>(n)); }
  // Box-Muller; the second value is dropped so a draw is always two words of the stream.
  double normal() {
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }

 private:
  uint64_t s_;
};

// A stream per purpose, so changing one part of the recipe leaves the others' draws as they were.
inline SplitMix stream(uint64_t seed, uint64_t purpose) { return SplitMix(seed * 0x100000001B3ull + purpose * 7919); }

// A stream per row of one purpose (a node's features), so any row can be drawn again on its own. The start is a
// splitmix output, not seed + row: streams started a multiple of the step apart would be shifted copies of each other.
inline SplitMix rowStream(uint64_t seed, uint64_t purpose, uint64_t row) {
  SplitMix start(seed * 0x100000001B3ull + purpose * 7919 + row * 0xD1B54A32D192ED03ull);
  return SplitMix(start.next());
}

}  // namespace gnn::bench::detail
