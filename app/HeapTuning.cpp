#include "app/HeapTuning.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "gnn/system/Parallel.h"

namespace gnn::app {

void keepFreedMemoryInHeap() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

HeapWarmUp::HeapWarmUp() {
  if (machineCores() < 2) return;
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  bytes_ = kBytes;
  if (pages > 0 && pageSize > 0) bytes_ = std::min(bytes_, static_cast<size_t>(pages) * static_cast<size_t>(pageSize) / 16);
  block_ = static_cast<char*>(std::malloc(bytes_));
  if (!block_) {
    bytes_ = 0;
    return;
  }
  thread_ = std::thread([this] {
    // One write per page faults it in (the kernel zeroes it); the stores are volatile so none is dropped.
    volatile char* p = block_;
    constexpr size_t kPage = 4096, kStep = size_t{1} << 20;
    for (size_t done = 0; done < bytes_ && !stop_.load(std::memory_order_relaxed); done += kStep) {
      const size_t end = std::min(bytes_, done + kStep);
      for (size_t i = done; i < end; i += kPage) p[i] = 0;
      touched_.store(end);
    }
  });
}

void HeapWarmUp::release() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  std::free(block_);
  block_ = nullptr;
}

HeapWarmUp::~HeapWarmUp() { release(); }

void returnLargeBlocksToSystem() { mallopt(M_MMAP_THRESHOLD, 256 * 1024); }

void mapLargeBlocksForFullBatchTraining() { mallopt(M_MMAP_THRESHOLD, 4 << 20); }

}  // namespace gnn::app
