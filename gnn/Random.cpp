#include "gnn/Random.h"

#include <cmath>

namespace gnn {
namespace {
// SplitMix64 finaliser (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", 2014):
// a bijective mix with full avalanche, used here as a keyed hash of the counter.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace

uint64_t Generator::bits(uint64_t c) const {
  return mix64(mix64(seed_ * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL) ^ (c * 0x9e3779b97f4a7c15ULL));
}

double Generator::normalAt(uint64_t c) const {
  // The second uniform comes from re-hashing the first draw's bits, so one counter gives one normal.
  uint64_t b = bits(c);
  double u1 = static_cast<double>(b >> 11) * (1.0 / 9007199254740992.0);
  double u2 = static_cast<double>(mix64(b + 0x9e3779b97f4a7c15ULL) >> 11) * (1.0 / 9007199254740992.0);
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

uint64_t Generator::nextBelow(uint64_t n) {
  // Rejection keeps the result unbiased.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do r = next();
  while (r >= limit);
  return r % n;
}

}  // namespace gnn
