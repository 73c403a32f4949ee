// Per-head dot products of one fixed row of H heads x C channels with many rows (the attention backward's
// gy[i] . V[source] over a target's terms; headDot's x[n] . att over the nodes): out[h] = sum_c x[h*C + c]
// y[h*C + c], each head's sum one chain of fused multiply-adds in increasing c, the bits of the plain loop. The
// plain loop runs the heads one after the other (or GCC transposes both rows into head-major vectors for every
// term); here the fixed row is transposed once (xt[c] holds channel c of every head, one head per lane), each
// other row's channel c is brought to its head's lane by one or two permutes, and the H sums are one vector,
// stored at once.
#pragma once
#include <cstdint>
#include <type_traits>

#include "gnn/kernels/Avx512.h"

namespace gnn::kernels {

/// No register kernel for this type, width or target: callers take their plain loop.
struct NoHeadRowDot {
  static constexpr bool kRegisters = false;
};

#if GNN_AVX512_KERNELS
/// H <= 16 heads of C < 16 channels, H * C <= 16 * NB floats, NB <= 4.
template <int NB>
class HeadRowDot {
 public:
  static constexpr bool kRegisters = true;
  static constexpr int64_t kLanes = 16, kMaxC = 16;
  GNN_AVX512 HeadRowDot(int64_t H, int64_t C) : C_(C) {
    static_assert(NB >= 1 && NB <= 4, "HeadRowDot: 1 to 4 vectors");
    heads_ = detail::prefix16(H);
    tail_ = detail::prefix16(H * C - kLanes * (NB - 1));
    for (int64_t c = 0; c < C; ++c) {
      alignas(64) int32_t ix[kLanes];
      __mmask16 upper = 0;
      for (int64_t h = 0; h < kLanes; ++h) {
        const int64_t j = h < H ? h * C + c : 0;
        ix[h] = static_cast<int32_t>(j % (2 * kLanes));  // within a pair of vectors
        if (j >= 2 * kLanes) upper = static_cast<__mmask16>(upper | (1u << h));
      }
      idx_[c] = _mm512_load_si512(ix);
      upper_[c] = upper;
    }
  }
  /// The fixed row x (H * C values).
  GNN_AVX512 void setFixed(const float* x) {
    __m512 v[NB];
    load(x, v);
#pragma GCC unroll 16
    for (int64_t c = 0; c < C_; ++c) xt_[c] = column(v, c);
  }
  /// The H dots of the fixed row with y, lanes h < H (the others 0).
  GNN_AVX512 __m512 dots(const float* y) const {
    __m512 v[NB];
    load(y, v);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t c = 0; c < C_; ++c) acc = _mm512_fmadd_ps(xt_[c], column(v, c), acc);
    return acc;
  }
  /// out[h] = the dot of head h (times scale[h] when Scaled), h < H.
  template <bool Scaled = false>
  GNN_AVX512 void dotsInto(const float* y, float* out, const float* scale = nullptr) const {
    __m512 d = dots(y);
    if constexpr (Scaled) d = _mm512_mul_ps(d, _mm512_maskz_loadu_ps(heads_, scale));
    _mm512_mask_storeu_ps(out, heads_, d);
  }

 private:
  GNN_AVX512 void load(const float* x, __m512* v) const {
#pragma GCC unroll 4
    for (int b = 0; b + 1 < NB; ++b) v[b] = _mm512_loadu_ps(x + kLanes * b);
    v[NB - 1] = _mm512_maskz_loadu_ps(tail_, x + kLanes * (NB - 1));
  }
  // Lane h: element h * C + c of the row held in v.
  GNN_AVX512 __m512 column(const __m512* v, int64_t c) const {
    if constexpr (NB == 1) {
      return detail::permute(idx_[c], v[0]);
    } else if constexpr (NB == 2) {
      return _mm512_permutex2var_ps(v[0], idx_[c], v[1]);
    } else {
      const __m512 lo = _mm512_permutex2var_ps(v[0], idx_[c], v[1]);
      const __m512 hi = _mm512_permutex2var_ps(v[2], idx_[c], v[NB == 4 ? 3 : 2]);
      return _mm512_mask_blend_ps(upper_[c], lo, hi);
    }
  }

  int64_t C_;
  __mmask16 heads_, tail_;
  __m512i idx_[kMaxC];
  __mmask16 upper_[kMaxC];
  __m512 xt_[kMaxC];
};
#endif

/// f(HeadRowDot<NB>(H, C)) for float rows of 2 <= H <= 16 heads of C < 16 channels in at most 4 vectors
/// where the AVX-512 kernels run (gnn/kernels/Avx512.h), else f(NoHeadRowDot{}). (One head: the plain loop's 8
/// partial sums use the lanes better; from 16 channels on the plain loop sums in 8 partial sums, other bits.)
template <class T, class F>
__attribute__((always_inline)) inline void withHeadRowDot(int64_t H, int64_t C, F&& f) {
#if GNN_AVX512_KERNELS
  if constexpr (std::is_same_v<T, float>) {
    if (H >= 2 && H <= 16 && C >= 1 && C < 16 && avx512Kernels()) {
      switch ((H * C + 15) / 16) {
        case 1: return callAvx512<HeadRowDot<1>>(f, H, C);
        case 2: return callAvx512<HeadRowDot<2>>(f, H, C);
        case 3: return callAvx512<HeadRowDot<3>>(f, H, C);
        case 4: return callAvx512<HeadRowDot<4>>(f, H, C);
        default: break;
      }
    }
  }
#endif
  (void)H;
  (void)C;
  f(NoHeadRowDot{});
}

}  // namespace gnn::kernels
