// BufferPool: recycles tensor buffers by exact size. With fixed-shape batches every step allocates the
// same sizes, so after the first step all buffers come from the pool (no malloc, no page faults): the
// "allocate once, replay" property of static graphs without a separate planner. Bounded; thread-safe.
#pragma once
#include <cstddef>
#include <cstdint>

namespace gnn {

class BufferPool {
 public:
  /// 64-byte-aligned buffer of at least `bytes` bytes.
  static void* acquire(size_t bytes);
  static void release(void* p, size_t bytes);
  /// Bytes currently held for reuse, and the cap (default 1 GiB; 0 disables pooling).
  static size_t pooledBytes();
  static void setCapacity(size_t bytes);
  /// Frees every pooled buffer.
  static void clear();
  /// Allocations served from the pool / from the system since start (for benchmarks and tests).
  static uint64_t hits();
  static uint64_t misses();
};

}  // namespace gnn
