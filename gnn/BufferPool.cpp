#include "gnn/BufferPool.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace gnn {
namespace {
struct Pool {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free;
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
size_t rounded(size_t bytes) { return ((bytes + 63) / 64) * 64 + (bytes == 0 ? 64 : 0); }
}  // namespace

void* BufferPool::acquire(size_t bytes) {
  size_t n = rounded(bytes);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    auto it = p.free.find(n);
    if (it != p.free.end() && !it->second.empty()) {
      void* b = it->second.back();
      it->second.pop_back();
      p.held -= n;
      ++p.hits;
      return b;
    }
    ++p.misses;
  }
  void* b = std::aligned_alloc(64, n);
  if (!b) throw std::bad_alloc();
  return b;
}

void BufferPool::release(void* b, size_t bytes) {
  if (!b) return;
  size_t n = rounded(bytes);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (p.held + n <= p.capacity) {
      p.free[n].push_back(b);
      p.held += n;
      return;
    }
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
    for (void* b : v) std::free(b);
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
