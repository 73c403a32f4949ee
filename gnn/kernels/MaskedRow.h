// Copies of rows a few dozen elements long whose length is known only at run time: the fused attention's
// loads of one head's columns and its stores of [T, T] blocks (T = 31 for Graphormer's molecules). Loops over
// such rows compile to a vector body, a narrower vector epilogue and a scalar tail, which cost more than the
// arithmetic between them; with AVX-512 each 16 floats (8 doubles) is one masked load and one masked store
// instead. Neither path reads or writes past the elements named, and both compute the same values.
#pragma once
#include <cstdint>

#include "gnn/kernels/Avx512.h"

namespace gnn::kernels {

// Native AVX-512 builds only: a portable build's fused attention runs its plain loops.
#if GNN_AVX512_KERNELS && !GNN_AVX512_AT_RUN_TIME

/// dst[j] = (j < n ? src[j] : 0) * scale for j < width: reads src[0, n) and writes dst[0, width) only.
inline void copyRowMasked(const float* src, int64_t n, float* dst, int64_t width, float scale = 1.0f) {
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t j = 0; j < width; j += 16) {
    const __m512 v = _mm512_maskz_loadu_ps(detail::prefix16(n - j), src + j);
    _mm512_mask_storeu_ps(dst + j, detail::prefix16(width - j), _mm512_mul_ps(v, s));
  }
}
inline void copyRowMasked(const double* src, int64_t n, double* dst, int64_t width, double scale = 1.0) {
  const __m512d s = _mm512_set1_pd(scale);
  for (int64_t j = 0; j < width; j += 8) {
    const __m512d v = _mm512_maskz_loadu_pd(detail::prefix8(n - j), src + j);
    _mm512_mask_storeu_pd(dst + j, detail::prefix8(width - j), _mm512_mul_pd(v, s));
  }
}
/// dst[j] += src[j] for j < n.
inline void addRowPrefix(const float* src, int64_t n, float* dst) {
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = detail::prefix16(n - j);
    _mm512_mask_storeu_ps(
        dst + j, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dst + j), _mm512_maskz_loadu_ps(m, src + j)));
  }
}
inline void addRowPrefix(const double* src, int64_t n, double* dst) {
  for (int64_t j = 0; j < n; j += 8) {
    const __mmask8 m = detail::prefix8(n - j);
    _mm512_mask_storeu_pd(
        dst + j, m, _mm512_add_pd(_mm512_maskz_loadu_pd(m, dst + j), _mm512_maskz_loadu_pd(m, src + j)));
  }
}
#else
template <class T>
inline void copyRowMasked(const T* src, int64_t n, T* dst, int64_t width, T scale = T(1)) {
  for (int64_t j = 0; j < width; ++j) dst[j] = (j < n ? src[j] : T(0)) * scale;
}
template <class T>
inline void addRowPrefix(const T* src, int64_t n, T* dst) {
  for (int64_t j = 0; j < n; ++j) dst[j] += src[j];
}
#endif

}  // namespace gnn::kernels
