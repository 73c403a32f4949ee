#include "gnn/system/Random.h"

#include <cmath>

namespace gnn {

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
