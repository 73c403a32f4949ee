// Threading: OpenMP inside ops, with work split into fixed-size chunks that do not depend on the number of
// threads, so every result is bit-identical for any thread count (a chunk is always computed whole, in the
// same order, by whichever thread gets it).
//
// Threads are budgeted at two levels. Each ExecutionContext has a thread budget (setNumThreads sets the current
// context's). And the process has a fixed number of core slots (default: the machine's cores): a parallel loop
// takes one slot for its calling thread (waiting if none is free) and as many more as are free, up to its
// context's budget, and returns them when it ends. So any number of threads running ops (pipeline stages,
// replicas) never keep more threads busy than there are cores, and none of them waits on another's team.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "gnn/system/ExecutionContext.h"

namespace gnn {

/// Threads ops use in the current execution context (its budget, else the process default).
int numThreads();
/// Sets the current context's thread budget; n <= 0 restores the process default.
void setNumThreads(int n);
/// The cores this process may run on (its CPU affinity mask).
int machineCores();
/// The budget of contexts that set none: the machine's cores (or what setDefaultThreads set).
int defaultThreads();
void setDefaultThreads(int n);
/// Threads that may run loop bodies at once in the whole process (default: the machine's cores); n <= 0
/// restores the default. Changing it while loops run is allowed: it applies to slots taken afterwards.
int coreSlots();
void setCoreSlots(int n);
/// Most slots ever held at once since the last reset (for tests of the budget).
int peakCoreSlotsInUse();
void resetPeakCoreSlotsInUse();

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

namespace detail {
/// True on a thread that holds a core slot (inside a parallel loop's body, or its caller while it runs).
bool& holdsCoreSlot();
/// Takes at least one core slot (waiting for it) and up to `want`; gives them back when destroyed.
class CoreLease {
 public:
  explicit CoreLease(int want);
  ~CoreLease();
  CoreLease(const CoreLease&) = delete;
  CoreLease& operator=(const CoreLease&) = delete;
  int count() const { return count_; }

 private:
  int count_;
};
/// A worker thread of a loop: runs under the caller's context and counts as holding a slot.
class WorkerScope {
 public:
  explicit WorkerScope(ExecutionContext* ctx) : previous_(currentContextSlot()), held_(holdsCoreSlot()) {
    currentContextSlot() = ctx;
    holdsCoreSlot() = true;
  }
  ~WorkerScope() {
    currentContextSlot() = previous_;
    holdsCoreSlot() = held_;
  }
  WorkerScope(const WorkerScope&) = delete;
  WorkerScope& operator=(const WorkerScope&) = delete;

 private:
  ExecutionContext* previous_;
  bool held_;
};
}  // namespace detail

/// Calls f(begin, end) over [0, n) in chunks of `chunk` items, in parallel when there is more than one
/// chunk, more than one thread in the budget and a free core slot. Chunk boundaries depend only on n and chunk.
template <class F>
void parallelFor(int64_t n, int64_t chunk, F&& f) {
  if (n <= 0) return;
  chunk = std::max<int64_t>(chunk, 1);
  const int64_t chunks = (n + chunk - 1) / chunk;
  auto serial = [&] {
    for (int64_t c = 0; c < chunks; ++c) f(c * chunk, std::min(n, (c + 1) * chunk));
  };
  // Nested inside another loop's body (or another OpenMP region): that loop's threads are already counted.
  if (detail::holdsCoreSlot() || omp_in_parallel()) return serial();
  const int want = static_cast<int>(std::min<int64_t>(chunks, std::max(1, numThreads())));
  detail::CoreLease lease(want);
  if (lease.count() == 1) return serial();
  ExecutionContext* ctx = &ExecutionContext::current();
#pragma omp parallel num_threads(lease.count())
  {
    detail::WorkerScope worker(ctx);
    // nowait: the region's closing barrier is the only one needed (a second one at the loop's end cost about
    // 7% of a GIN step in spinning threads).
#pragma omp for schedule(static) nowait
    for (int64_t c = 0; c < chunks; ++c) f(c * chunk, std::min(n, (c + 1) * chunk));
  }
}

/// Elementwise (memory-bound) loops: f(begin, end) over [0, n) elements in chunks of about kGrainWork elements.
/// An element's result never depends on the chunk it falls in, so the cut may follow the thread budget: the
/// chunks are made a multiple of the threads in number and equal in size (multiples of 16 elements), so that
/// none is left with a second chunk while the others wait (3 equal chunks over 2 threads take as long as 4).
/// With workPerElement: elements that cost that many FLOPs each (an exp, a log) get chunks of as much work, so
/// that a transcendental over a [448, 128] tensor (SchNet's atoms) runs on every thread rather than on one.
template <class F>
void parallelElements(int64_t n, int64_t workPerElement, F&& f) {
  if (n <= 0) return;
  const int64_t threads = std::max(1, numThreads());
  const int64_t work = n * std::max<int64_t>(1, workPerElement);
  int64_t chunks = std::min<int64_t>((work + kGrainWork - 1) / kGrainWork, (n + 15) / 16);
  if (chunks > 1 && threads > 1) chunks = (chunks + threads - 1) / threads * threads;
  parallelFor(n, evenChunk(n, (n + chunks - 1) / chunks, 16), std::forward<F>(f));
}
template <class F>
void parallelElements(int64_t n, F&& f) {
  parallelElements(n, 1, std::forward<F>(f));
}

/// Rows per chunk of a row loop whose rows cost `workPerRow` each: grainFor's chunks made equal, and cut to a
/// quarter grain when there would be fewer than 8 (a loop a few grains long otherwise leaves one thread two
/// chunks while another has one). It depends on the shape only, so it may also cut per-chunk partial sums
/// (their bits stay thread-independent).
inline int64_t rowChunk(int64_t rows, int64_t workPerRow) {
  const int64_t grain = grainFor(workPerRow);
  return evenChunk(rows, rows >= 8 * grain ? grain : std::max<int64_t>(1, grain / 4));
}

}  // namespace gnn
