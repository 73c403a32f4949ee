// A weighted sum of rows of H heads x C channels held in vector registers: acc[h*C + c] += w[h] v[h*C + c] over
// many rows v (the attention's sum over a target's sources, its backward's sum over a source's targets). Kept
// in memory, each row's accumulator is loaded and stored once per term, and every term waits on the previous
// one's store (GAT's Cora rows, 8 heads of 8 or 7 channels: a third of the step). Here the accumulator is
// NB vectors in registers, and each term's H weights are spread over their heads' lanes by one permute per
// vector: no head straddling a vector needs a scalar loop (7-channel heads do). The products and sums are
// those of the plain loop (w = a m rounded once, then one fused multiply-add per element, terms in order), so
// both give the same bits.
#pragma once
#include <cstdint>
#include <type_traits>

#include "gnn/kernels/Avx512.h"

namespace gnn::kernels {

/// No register accumulator for this type, width or target: callers take their plain loop.
struct NoHeadRowSum {
  static constexpr bool kRegisters = false;
};

#if GNN_AVX512_KERNELS
template <class T, int NB>
class HeadRowSum;

template <int NB>
class HeadRowSum<float, NB> {
 public:
  static constexpr bool kRegisters = true;
  static constexpr int64_t kLanes = 16;
  GNN_AVX512 HeadRowSum(int64_t H, int64_t C) {
    alignas(64) int32_t ix[kLanes * NB];
    for (int64_t j = 0; j < kLanes * NB; ++j) ix[j] = j < H * C ? static_cast<int32_t>(j / C) : 0;
    for (int b = 0; b < NB; ++b) idx_[b] = _mm512_load_si512(ix + kLanes * b);
    heads_ = detail::prefix16(H);
    tail_ = detail::prefix16(H * C - kLanes * (NB - 1));
  }
  GNN_AVX512 void zero() {
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) acc_[b] = _mm512_setzero_ps();
  }
  /// acc += (a m) (x) v, m only when Masked; a and m hold H weights, v H * C values.
  template <bool Masked>
  GNN_AVX512 void add(const float* a, const float* m, const float* v) {
    __m512 w = _mm512_maskz_loadu_ps(heads_, a);
    if constexpr (Masked) w = _mm512_mul_ps(w, _mm512_maskz_loadu_ps(heads_, m));
#pragma GCC unroll 8
    for (int b = 0; b + 1 < NB; ++b)
      acc_[b] = _mm512_fmadd_ps(detail::permute(idx_[b], w), _mm512_loadu_ps(v + kLanes * b), acc_[b]);
    acc_[NB - 1] = _mm512_fmadd_ps(detail::permute(idx_[NB - 1], w),
                                   _mm512_maskz_loadu_ps(tail_, v + kLanes * (NB - 1)), acc_[NB - 1]);
  }
  GNN_AVX512 void load(const float* o) {
#pragma GCC unroll 8
    for (int b = 0; b + 1 < NB; ++b) acc_[b] = _mm512_loadu_ps(o + kLanes * b);
    acc_[NB - 1] = _mm512_maskz_loadu_ps(tail_, o + kLanes * (NB - 1));
  }
  GNN_AVX512 void store(float* o) const {
#pragma GCC unroll 8
    for (int b = 0; b + 1 < NB; ++b) _mm512_storeu_ps(o + kLanes * b, acc_[b]);
    _mm512_mask_storeu_ps(o + kLanes * (NB - 1), tail_, acc_[NB - 1]);
  }

 private:
  __m512 acc_[NB];
  __m512i idx_[NB];
  __mmask16 heads_, tail_;
};

template <int NB>
class HeadRowSum<double, NB> {
 public:
  static constexpr bool kRegisters = true;
  static constexpr int64_t kLanes = 8;
  GNN_AVX512 HeadRowSum(int64_t H, int64_t C) {
    alignas(64) int64_t ix[kLanes * NB];
    for (int64_t j = 0; j < kLanes * NB; ++j) ix[j] = j < H * C ? j / C : 0;
    for (int b = 0; b < NB; ++b) idx_[b] = _mm512_load_si512(ix + kLanes * b);
    heads_ = detail::prefix8(H);
    tail_ = detail::prefix8(H * C - kLanes * (NB - 1));
  }
  GNN_AVX512 void zero() {
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) acc_[b] = _mm512_setzero_pd();
  }
  template <bool Masked>
  GNN_AVX512 void add(const double* a, const double* m, const double* v) {
    __m512d w = _mm512_maskz_loadu_pd(heads_, a);
    if constexpr (Masked) w = _mm512_mul_pd(w, _mm512_maskz_loadu_pd(heads_, m));
#pragma GCC unroll 8
    for (int b = 0; b + 1 < NB; ++b)
      acc_[b] = _mm512_fmadd_pd(detail::permute(idx_[b], w), _mm512_loadu_pd(v + kLanes * b), acc_[b]);
    acc_[NB - 1] = _mm512_fmadd_pd(detail::permute(idx_[NB - 1], w),
                                   _mm512_maskz_loadu_pd(tail_, v + kLanes * (NB - 1)), acc_[NB - 1]);
  }
  GNN_AVX512 void load(const double* o) {
#pragma GCC unroll 8
    for (int b = 0; b + 1 < NB; ++b) acc_[b] = _mm512_loadu_pd(o + kLanes * b);
    acc_[NB - 1] = _mm512_maskz_loadu_pd(tail_, o + kLanes * (NB - 1));
  }
  GNN_AVX512 void store(double* o) const {
#pragma GCC unroll 8
    for (int b = 0; b + 1 < NB; ++b) _mm512_storeu_pd(o + kLanes * b, acc_[b]);
    _mm512_mask_storeu_pd(o + kLanes * (NB - 1), tail_, acc_[NB - 1]);
  }

 private:
  __m512d acc_[NB];
  __m512i idx_[NB];
  __mmask8 heads_, tail_;
};
#endif

/// f(HeadRowSum<T, NB>(H, C)) when H heads of C channels fit in at most 8 vectors and a vector holds all H
/// weights (AVX-512: H * C <= 128 floats and H <= 16, or <= 64 doubles and H <= 8) and the AVX-512 kernels run
/// here (gnn/kernels/Avx512.h), else f(NoHeadRowSum{}). Always inlined: the row loops' clones take its plain path.
template <class T, class F>
__attribute__((always_inline)) inline void withHeadRowSum(int64_t H, int64_t C, F&& f) {
#if GNN_AVX512_KERNELS
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    constexpr int64_t lanes = 64 / static_cast<int64_t>(sizeof(T));
    const int64_t nb = (H * C + lanes - 1) / lanes;
    if (H >= 1 && H <= lanes && C >= 1 && avx512Kernels()) {
      switch (nb) {
        case 1: return callAvx512<HeadRowSum<T, 1>>(f, H, C);
        case 2: return callAvx512<HeadRowSum<T, 2>>(f, H, C);
        case 3: return callAvx512<HeadRowSum<T, 3>>(f, H, C);
        case 4: return callAvx512<HeadRowSum<T, 4>>(f, H, C);
        case 5: return callAvx512<HeadRowSum<T, 5>>(f, H, C);
        case 6: return callAvx512<HeadRowSum<T, 6>>(f, H, C);
        case 7: return callAvx512<HeadRowSum<T, 7>>(f, H, C);
        case 8: return callAvx512<HeadRowSum<T, 8>>(f, H, C);
        default: break;
      }
    }
  }
#endif
  (void)H;
  (void)C;
  f(NoHeadRowSum{});
}

}  // namespace gnn::kernels
