// Threading: OpenMP inside ops, with work split into fixed-size chunks that do not depend on the number of
// threads, so every result is bit-identical for any thread count (a chunk is always computed whole, in the
// same order, by whichever thread gets it).
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace gnn {

/// Threads used by ops (default: OpenMP's default, normally the number of cores).
int numThreads();
/// Sets the threads used by ops (and by OpenMP in general); n <= 0 restores the default.
void setNumThreads(int n);

/// Work (roughly multiply-adds) worth a parallel chunk: below this, forking costs more than it saves.
constexpr int64_t kGrainWork = int64_t{1} << 16;

/// Items per chunk when each item costs `workPerItem`: at least `minItems`, at least kGrainWork in total.
inline int64_t grainFor(int64_t workPerItem, int64_t minItems = 1) {
  return std::max<int64_t>(minItems, kGrainWork / std::max<int64_t>(workPerItem, 1));
}

/// The same number of chunks as `chunk` gives over n items, with sizes as equal as possible (multiples of
/// `align`): the last chunk is not left short while the others are full, so threads finish together.
inline int64_t evenChunk(int64_t n, int64_t chunk, int64_t align = 1) {
  chunk = std::max<int64_t>(chunk, 1);
  const int64_t chunks = std::max<int64_t>(1, (n + chunk - 1) / chunk);
  const int64_t even = (n + chunks - 1) / chunks;
  return std::max<int64_t>(align, (even + align - 1) / align * align);
}

/// Calls f(begin, end) over [0, n) in chunks of `chunk` items, in parallel when there is more than one
/// chunk and more than one thread. Chunk boundaries depend only on n and chunk.
template <class F>
void parallelFor(int64_t n, int64_t chunk, F&& f) {
  if (n <= 0) return;
  chunk = std::max<int64_t>(chunk, 1);
  int64_t chunks = (n + chunk - 1) / chunk;
  if (chunks == 1 || omp_in_parallel() || numThreads() == 1) {
    for (int64_t c = 0; c < chunks; ++c) f(c * chunk, std::min(n, (c + 1) * chunk));
    return;
  }
#pragma omp parallel for schedule(static) num_threads(std::min<int64_t>(numThreads(), chunks))
  for (int64_t c = 0; c < chunks; ++c) f(c * chunk, std::min(n, (c + 1) * chunk));
}

/// Elementwise (memory-bound) loops: f(begin, end) over [0, n) elements in chunks of kGrainWork elements.
template <class F>
void parallelElements(int64_t n, F&& f) {
  parallelFor(n, kGrainWork, std::forward<F>(f));
}

}  // namespace gnn
