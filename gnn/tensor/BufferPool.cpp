#include "gnn/tensor/BufferPool.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace gnn {
namespace {
// Buffers from 64 KiB on are kept by size class: steps of an eighth of the power of two below the size (at
// most 12.5% more than asked). Batches whose edge or pair counts differ from step to step (SchNet's pairs
// within the cutoff) ask for slightly different sizes at every step; with exact sizes each new one missed the
// pool and had its pages faulted in afresh. Smaller buffers: whole 64-byte lines, exactly.
constexpr size_t kClassedFrom = size_t{64} << 10;
constexpr size_t kClassesPerOctave = 8;

struct Pool {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free;
  // The class each pooled-size buffer was allocated with: a request takes a buffer of its class or of the
  // next, and the buffer goes back under its own.
  std::unordered_map<void*, size_t> classOf;
  size_t held = 0;
  size_t capacity = size_t{1} << 30;
  uint64_t hits = 0, misses = 0;
  ~Pool() {
    for (auto& [n, v] : free)
      for (void* p : v) std::free(p);
  }
};
Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: tensors may be freed during static destruction
  return *p;
}
size_t lines(size_t bytes) { return ((bytes + 63) / 64) * 64 + (bytes == 0 ? 64 : 0); }
size_t classStep(size_t n) { return (size_t{1} << (63 - __builtin_clzll(n))) / kClassesPerOctave; }
// The size a buffer for `bytes` is allocated with.
size_t rounded(size_t bytes) {
  const size_t n = lines(bytes);
  if (n < kClassedFrom) return n;
  const size_t step = classStep(n);
  return (n + step - 1) / step * step;
}
}  // namespace

void* BufferPool::acquire(size_t bytes) {
  const size_t n = rounded(bytes);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    const size_t next = n >= kClassedFrom ? n + classStep(n) : n;
    for (size_t c : {n, next}) {
      auto it = p.free.find(c);
      if (it != p.free.end() && !it->second.empty()) {
        void* b = it->second.back();
        it->second.pop_back();
        p.held -= c;
        ++p.hits;
        return b;
      }
      if (next == n) break;
    }
    ++p.misses;
  }
  void* b = std::aligned_alloc(64, n);
  if (!b) throw std::bad_alloc();
  if (n >= kClassedFrom) {
    std::lock_guard<std::mutex> lock(p.mu);
    p.classOf[b] = n;
  }
  return b;
}

void BufferPool::release(void* b, size_t bytes) {
  if (!b) return;
  size_t n = rounded(bytes);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (n >= kClassedFrom) {
      auto it = p.classOf.find(b);
      if (it != p.classOf.end()) n = it->second;
    }
    if (p.held + n <= p.capacity) {
      p.free[n].push_back(b);
      p.held += n;
      return;
    }
    p.classOf.erase(b);
  }
  std::free(b);
}

size_t BufferPool::pooledBytes() {
  std::lock_guard<std::mutex> lock(pool().mu);
  return pool().held;
}

void BufferPool::setCapacity(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(pool().mu);
    pool().capacity = bytes;
  }
  if (pooledBytes() > bytes) clear();
}

void BufferPool::clear() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  for (auto& [n, v] : p.free)
    for (void* b : v) {
      p.classOf.erase(b);
      std::free(b);
    }
  p.free.clear();
  p.held = 0;
}

uint64_t BufferPool::hits() {
  std::lock_guard<std::mutex> lock(pool().mu);
  return pool().hits;
}
uint64_t BufferPool::misses() {
  std::lock_guard<std::mutex> lock(pool().mu);
  return pool().misses;
}

}  // namespace gnn
