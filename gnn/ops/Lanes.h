// Lanes: sixteen floats as one value, with the arithmetic and the exp and tanh of the ops' elementwise math, in
// GCC's vector extensions. A loop compiled for several CPU levels (GNN_CPU_CLONES) runs them on that level's
// vectors: one AVX-512 register, two AVX2 ones or four SSE ones. Eigen's packet math would not do: its vector width
// is fixed when the library is compiled (SSE2 in a portable build, whatever the CPU it then runs on).
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__GNUC__) && !defined(__clang__)
// Sixteen floats are passed in memory below AVX-512; every function here is inlined, so no such call is made.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace gnn::ops {

#define GNN_LANES_INLINE inline __attribute__((always_inline))

/// Sixteen floats. Arithmetic is elementwise IEEE (each operation rounded once); a * b + c is fused where the
/// code's target has FMA and contracts: a native build's, and the AVX2 and AVX-512 clones of a portable one
/// (gnn/system/CpuClones.h), not its baseline clone.
struct Lanes {
  typedef float Vector __attribute__((vector_size(64)));
  typedef int32_t Ints __attribute__((vector_size(64)));
  static constexpr int64_t kWidth = 16;

  Vector v;

  static GNN_LANES_INLINE Lanes load(const float* p) {
    Lanes r;
    std::memcpy(&r.v, p, sizeof r.v);
    return r;
  }
  GNN_LANES_INLINE void store(float* p) const { std::memcpy(p, &v, sizeof v); }
  static GNN_LANES_INLINE Lanes splat(float x) { return {Vector{} + x}; }

  GNN_LANES_INLINE Lanes operator-() const { return {-v}; }
  GNN_LANES_INLINE Lanes square() const { return {v * v}; }
  GNN_LANES_INLINE Lanes inverse() const { return {1.0f / v}; }
  GNN_LANES_INLINE Lanes abs() const {
    Ints bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= 0x7fffffff;
    Lanes r;
    std::memcpy(&r.v, &bits, sizeof bits);
    return r;
  }
  /// max(x, y) per lane as std::max(x, y) (x where they compare equal or y is NaN).
  GNN_LANES_INLINE Lanes max(Lanes y) const { return {v < y.v ? y.v : v}; }
  GNN_LANES_INLINE Lanes max(float y) const { return max(splat(y)); }
  GNN_LANES_INLINE Lanes min(Lanes y) const { return {y.v < v ? y.v : v}; }
  GNN_LANES_INLINE Lanes min(float y) const { return min(splat(y)); }

  GNN_LANES_INLINE Lanes exp() const;
  GNN_LANES_INLINE Lanes tanh() const;

 private:
  typedef uint32_t Bits __attribute__((vector_size(64)));
  // 2^k for integers k in [-126, 127], from the exponent field.
  static GNN_LANES_INLINE Vector twoTo(Ints k) {
    const Bits bits = __builtin_convertvector(k + 127, Bits) << 23;
    Vector r;
    std::memcpy(&r, &bits, sizeof r);
    return r;
  }
};

GNN_LANES_INLINE Lanes operator+(Lanes a, Lanes b) { return {a.v + b.v}; }
GNN_LANES_INLINE Lanes operator-(Lanes a, Lanes b) { return {a.v - b.v}; }
GNN_LANES_INLINE Lanes operator*(Lanes a, Lanes b) { return {a.v * b.v}; }
GNN_LANES_INLINE Lanes operator/(Lanes a, Lanes b) { return {a.v / b.v}; }
// With a scalar of any arithmetic type on either side (the ops' lambdas write T(1), 1, T(0.5) * xs).
template <class S, class = decltype(static_cast<float>(S{}))>
GNN_LANES_INLINE Lanes operator+(Lanes a, S s) { return a + Lanes::splat(static_cast<float>(s)); }
template <class S, class = decltype(static_cast<float>(S{}))>
GNN_LANES_INLINE Lanes operator+(S s, Lanes a) { return Lanes::splat(static_cast<float>(s)) + a; }
template <class S, class = decltype(static_cast<float>(S{}))>
GNN_LANES_INLINE Lanes operator-(Lanes a, S s) { return a - Lanes::splat(static_cast<float>(s)); }
template <class S, class = decltype(static_cast<float>(S{}))>
GNN_LANES_INLINE Lanes operator-(S s, Lanes a) { return Lanes::splat(static_cast<float>(s)) - a; }
template <class S, class = decltype(static_cast<float>(S{}))>
GNN_LANES_INLINE Lanes operator*(Lanes a, S s) { return a * Lanes::splat(static_cast<float>(s)); }
template <class S, class = decltype(static_cast<float>(S{}))>
GNN_LANES_INLINE Lanes operator*(S s, Lanes a) { return Lanes::splat(static_cast<float>(s)) * a; }
template <class S, class = decltype(static_cast<float>(S{}))>
GNN_LANES_INLINE Lanes operator/(Lanes a, S s) { return a / Lanes::splat(static_cast<float>(s)); }
template <class S, class = decltype(static_cast<float>(S{}))>
GNN_LANES_INLINE Lanes operator/(S s, Lanes a) { return Lanes::splat(static_cast<float>(s)) / a; }

/// e^x: Cephes' expf as Eigen's generic pexp_float computes it (clamp to +-88.723, m = floor(x log2(e) + 1/2),
/// r = x - m ln 2 in two parts, a degree-5 polynomial, times 2^m as four factors that are normal floats); NaN
/// stays NaN, and below -88.723 the result is e^-88.723 (2.9e-39). Within 2 ulp of e^x elsewhere
/// (tests/gnn/ops/Lanes_test.cpp).
GNN_LANES_INLINE Lanes Lanes::exp() const {
  const Vector x = v < -88.723f ? Vector{} - 88.723f : (v > 88.723f ? Vector{} + 88.723f : v);
  const Vector t = x * 1.44269504088896341f + 0.5f;
  // floor(t): truncation toward zero, one less where that rounded up (t < 0 and not whole); |t| < 129.
  const Ints ti = __builtin_convertvector(t, Ints);
  Vector m = __builtin_convertvector(ti, Vector);
  m = m > t ? m - 1.0f : m;
  Vector r = m * -0.693359375f + x;
  r = m * 2.12194440e-4f + r;
  const Vector r2 = r * r, r3 = r2 * r;
  Vector y = 1.9875691500E-4f * r + 1.3981999507E-3f;
  Vector y1 = 4.1665795894E-2f * r + 1.6666665459E-1f;
  const Vector y2 = r + 1.0f;
  y = y * r + 8.3334519073E-3f;
  y1 = y1 * r + 5.0000001201E-1f;
  y = y * r3 + y1;
  y = y * r2 + y2;
  // y * 2^m as y * 2^b * 2^b * 2^b * 2^(m - 3b), b = floor(m / 4): each factor a normal float.
  const Ints e = __builtin_convertvector(m, Ints);
  const Ints b = e >> 2;
  Vector out = y * twoTo(b);
  out = out * twoTo(b);
  out = out * twoTo(b);
  out = out * twoTo(e - b - b - b);
  // max(out, x) as Eigen's pexp (x = +inf gives inf). A NaN x gives NaN through the arithmetic above (no
  // comparison for it: GCC scalarises an unordered one in a loop cloned per CPU level).
  return {out < v ? v : out};
}

/// tanh(x): the rational approximation of Eigen's generic_fast_tanh_float (its coefficients and its clamp at
/// +-7.90531110763549805 for builds without FMA), x itself below |x| < 0.0004. Within a few ulp of tanh(x).
GNN_LANES_INLINE Lanes Lanes::tanh() const {
  const float clamp = 7.90531110763549805f;
  const Vector x = v < -clamp ? Vector{} - clamp : (v > clamp ? Vector{} + clamp : v);
  const Vector x2 = x * x;
  Vector p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = x2 * p + -8.60467152213735e-11f;
  p = x2 * p + 5.12229709037114e-08f;
  p = x2 * p + 1.48572235717979e-05f;
  p = x2 * p + 6.37261928875436e-04f;
  p = x2 * p + 4.89352455891786e-03f;
  p = x * p;
  Vector q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = x2 * q + 2.26843463243900e-03f;
  q = x2 * q + 4.89352518554385e-03f;
  const Vector tiny = abs().v;
  return {tiny < 0.0004f ? x : p / q};
}

}  // namespace gnn::ops

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
