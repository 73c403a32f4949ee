#include "gnn/tensor/HalfPrecision.h"

#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "gnn/system/Parallel.h"

namespace gnn {
namespace {
inline float clampHalf(float x, int64_t& bad) {
  if (std::isnan(x)) {
    ++bad;
    return x;
  }
  if (x > kHalfMax) {
    ++bad;
    return kHalfMax;
  }
  if (x < -kHalfMax) {
    ++bad;
    return -kHalfMax;
  }
  return x;
}

inline float halfBitsToFloat(uint16_t b) {
  Eigen::half h;
  h.x = b;
  return static_cast<float>(h);
}

inline uint16_t halfBits(float x) { return Eigen::half(x).x; }

// The next half above h (toward +infinity), h finite and below the largest half.
inline float nextHalfUp(float h) {
  const uint16_t b = halfBits(h);
  if ((b & 0x7fff) == 0) return halfBitsToFloat(0x0001);  // +-0 -> smallest positive subnormal
  return halfBitsToFloat((b & 0x8000) ? static_cast<uint16_t>(b - 1) : static_cast<uint16_t>(b + 1));
}

inline float stochastic(float x, double u) {
  const float h = static_cast<float>(Eigen::half(x));
  if (h == x || std::isnan(x)) return h;
  float lo, hi;
  if (h < x) {
    lo = h;
    hi = nextHalfUp(h);
  } else {
    hi = h;
    lo = -nextHalfUp(-h);
  }
  // Exact in double: lo, hi and x are floats.
  const double p = (static_cast<double>(x) - lo) / (static_cast<double>(hi) - lo);
  return u < p ? hi : lo;
}

template <class T>
int64_t roundRange(T* v, int64_t lo, int64_t hi, Rounding mode, const Generator* gen) {
  if constexpr (std::is_same_v<T, float>) {
    if (mode == Rounding::Half) {
      // The common case in one vectorised pass (Eigen converts packets to half and back), once no value
      // needs saturating.
      Eigen::Map<Eigen::ArrayXf> a(v + lo, hi - lo);
      if (!((a.abs() > kHalfMax) || (a != a)).any()) {
        a = a.template cast<Eigen::half>().template cast<float>();
        return 0;
      }
    }
  }
  int64_t bad = 0;
  for (int64_t i = lo; i < hi; ++i) {
    const float x = clampHalf(static_cast<float>(v[i]), bad);
    v[i] = static_cast<T>(mode == Rounding::StochasticHalf ? stochastic(x, gen->uniformDoubleAt(static_cast<uint64_t>(i)))
                                                           : static_cast<float>(Eigen::half(x)));
  }
  return bad;
}
}  // namespace

float roundToHalf(float x) {
  int64_t bad = 0;
  return static_cast<float>(Eigen::half(clampHalf(x, bad)));
}

float roundToHalfStochastic(float x, double u) {
  int64_t bad = 0;
  return stochastic(clampHalf(x, bad), u);
}

int64_t roundTensorToHalf(Tensor& t, Rounding mode, const Generator* gen) {
  if (mode == Rounding::None || !t.defined() || t.numel() == 0) return 0;
  if (t.dtype() != DType::F32 && t.dtype() != DType::F64) return 0;
  GNN_CHECK_ARG(mode != Rounding::StochasticHalf || gen, "stochastic rounding needs a random stream");
  const int64_t n = t.numel();
  std::atomic<int64_t> bad{0};
  auto run = [&](auto* p) {
    parallelElements(n, [&](int64_t lo, int64_t hi) { bad.fetch_add(roundRange(p, lo, hi, mode, gen)); });
  };
  if (t.dtype() == DType::F32) run(t.data<float>());
  else run(t.data<double>());
  return bad.load();
}

}  // namespace gnn
