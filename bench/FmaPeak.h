// The machine's float32 multiply-add peak as the benchmarks' rooflines use it, measured: independent chains of
// FMAs held in registers, on the widest vectors the CPU has, chosen when it runs (not when it was compiled):
// AVX-512 (16 lanes, 12 chains in 32 registers), AVX2 with FMA (8 lanes, 10 chains in 16 registers: 12 chains of
// 16 lanes spill there, which reported 11 GFLOP/s on an AVX2-only CPU), or SSE (4 lanes, a multiply and an add).
//
//   const FmaPeak p = measureFmaPeak(threads);   // p.gflops, p.isa ("avx512", "avx2", "sse")
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace gnn::bench {

struct FmaPeak {
  double gflops = 0;  // summed over threads
  std::string isa;
};

namespace fma_detail {

// GFLOP/s of one thread: `Chains` accumulators of `Lanes` floats, acc * a + b each step (with the accumulator
// as a factor the product cannot be hoisted out of the loop, so every step is one multiply-add per lane).
using V16 = float __attribute__((vector_size(64)));
using V8 = float __attribute__((vector_size(32)));
using V4 = float __attribute__((vector_size(16)));

template <class V, int Lanes, int Chains>
__attribute__((always_inline)) inline double chains(int64_t iters) {
  V acc[Chains], a, b;
  for (int k = 0; k < Lanes; ++k) a[k] = 0.999f, b[k] = 1e-4f;
  for (int c = 0; c < Chains; ++c)
    for (int k = 0; k < Lanes; ++k) acc[c][k] = 0.1f * static_cast<float>(c);
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < Chains; ++c) acc[c] = acc[c] * a + b;
  // The loop touches no memory, so the compiler may move it past the clock reads; this barrier needs its results
  // in memory here, before the second clock read (and keeps them from being dropped).
  asm volatile("" : "+m"(acc) : : "memory");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * Lanes * Chains * static_cast<double>(iters) / s / 1e9;
}

__attribute__((target("avx512f"))) inline double avx512(int64_t iters) { return chains<V16, 16, 12>(iters); }
__attribute__((target("avx2,fma"))) inline double avx2(int64_t iters) { return chains<V8, 8, 10>(iters); }
inline double sse(int64_t iters) { return chains<V4, 4, 8>(iters); }

}  // namespace fma_detail

/// The widest path this CPU runs, or the one GNN_FMA_PEAK_ISA names (avx512, avx2, sse) when the CPU has it: to
/// measure the narrower paths on a wider CPU.
inline std::string fmaPeakIsa() {
  const bool has512 = __builtin_cpu_supports("avx512f"), has2 = __builtin_cpu_supports("avx2") &&
                                                                __builtin_cpu_supports("fma");
  const char* asked = std::getenv("GNN_FMA_PEAK_ISA");
  const std::string want = asked ? asked : "";
  if (want == "sse") return "sse";
  if (want == "avx2" && has2) return "avx2";
  return has512 ? "avx512" : has2 ? "avx2" : "sse";
}

/// The peak over `threads` threads, each timing `iters` steps of its chains.
inline FmaPeak measureFmaPeak(int threads, int64_t iters = 100'000'000) {
  FmaPeak p;
  p.isa = fmaPeakIsa();
  double (*run)(int64_t) = p.isa == "avx512" ? fma_detail::avx512
                           : p.isa == "avx2" ? fma_detail::avx2
                                             : fma_detail::sse;
  double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  total += run(iters);
  p.gflops = total;
  return p;
}

}  // namespace gnn::bench
