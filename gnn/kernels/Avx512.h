// Where the AVX-512 register kernels (HeadRowSum, HeadRowDot; MaskedRow in native builds only) exist and how
// they are reached. A native build for an AVX-512 CPU compiles them for its own target and always takes them. A portable build
// (no -march=native, the row loops cloned per CPU level: gnn/system/CpuClones.h) compiles them for AVX-512
// alone and takes them when the running CPU is x86-64-v4: callAvx512 builds the kernel and runs its caller's
// loop inside one function compiled for x86-64-v4 (every call in it inlined), so the loop is the AVX-512
// clone's code, multiply-adds fused as there. Without this, the portable build ran GAT's per-head sums and
// dots as plain loops: GATConv's training step at 0.76x the native build's.
#pragma once
#include <cstdint>

#include "gnn/system/CpuClones.h"

#if defined(__AVX512F__) && defined(__FMA__)
#define GNN_AVX512_KERNELS 1
#define GNN_AVX512_AT_RUN_TIME 0
#elif defined(GNN_HAVE_CPU_CLONES) && !defined(GNN_CLONES_UP_TO_V3)
#define GNN_AVX512_KERNELS 1
#define GNN_AVX512_AT_RUN_TIME 1
#else
#define GNN_AVX512_KERNELS 0
#define GNN_AVX512_AT_RUN_TIME 0
#endif

#if GNN_AVX512_KERNELS
#include <immintrin.h>  // every intrinsic is declared whatever the build's target (GCC)
#endif

#if GNN_AVX512_AT_RUN_TIME
// A kernel's member functions: compiled for AVX-512; inlined only into code compiled for x86-64-v4.
#define GNN_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))
#else
#define GNN_AVX512
#endif

namespace gnn::kernels {

/// Whether the AVX-512 kernels run here: always in a native AVX-512 build, on an x86-64-v4 CPU in a portable
/// one (the same test that makes the loader pick the row loops' AVX-512 clones), never otherwise.
inline bool avx512Kernels() {
#if GNN_AVX512_AT_RUN_TIME
  static const bool has = __builtin_cpu_supports("x86-64-v4");
  return has;
#else
  return GNN_AVX512_KERNELS != 0;
#endif
}

#if GNN_AVX512_KERNELS
namespace detail {
// The first k lanes (none for k <= 0, all from 16 / 8 on). Branches: the rows of one call take the same ones.
GNN_AVX512 inline __mmask16 prefix16(int64_t k) {
  return k >= 16 ? static_cast<__mmask16>(0xffff) : k <= 0 ? 0 : static_cast<__mmask16>((1u << k) - 1);
}
GNN_AVX512 inline __mmask8 prefix8(int64_t k) {
  return k >= 8 ? static_cast<__mmask8>(0xff) : k <= 0 ? 0 : static_cast<__mmask8>((1u << k) - 1);
}
// v's lanes in the order idx gives (vpermps / vpermpd). Through the zero-masking form with every lane kept, which
// compiles to the same instruction: the plain intrinsic's _mm512_undefined_ps() trips GCC 12's false
// -Wmaybe-uninitialized (GCC bug 105593) wherever it is inlined into code built without -march=native.
GNN_AVX512 inline __m512 permute(__m512i idx, __m512 v) {
  return _mm512_maskz_permutexvar_ps(static_cast<__mmask16>(0xffff), idx, v);
}
GNN_AVX512 inline __m512d permute(__m512i idx, __m512d v) {
  return _mm512_maskz_permutexvar_pd(static_cast<__mmask8>(0xff), idx, v);
}
}  // namespace detail

#if GNN_AVX512_AT_RUN_TIME
/// f(K(a...)) compiled for x86-64-v4, every call inside inlined (flatten), multiply-adds fused as in the
/// AVX-512 clone of the caller. Only called where avx512Kernels() holds.
template <class K, class F, class... A>
__attribute__((target("arch=x86-64-v4"), flatten, optimize("fp-contract=fast"))) void callAvx512(F& f, A... a) {
  K k(a...);
  f(k);
}
#else
template <class K, class F, class... A>
__attribute__((always_inline)) inline void callAvx512(F& f, A... a) {
  f(K(a...));
}
#endif
#endif

}  // namespace gnn::kernels
