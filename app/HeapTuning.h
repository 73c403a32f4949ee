// HeapTuning: glibc malloc settings for the two memory patterns of the programs. One home for them, so the
// thresholds (and the reasons) are stated once.
#pragma once
#include <atomic>
#include <cstddef>
#include <thread>

namespace gnn::app {

/// Training and inference loops: every step allocates the same activation sizes, so freed blocks stay in the
/// heap instead of going back to the kernel, which would zero fresh pages on every step (~12% of a step in perf
/// on a 2-core machine). Peak memory is unchanged: the same sizes are reused.
void keepFreedMemoryInHeap();

/// Streaming builds (build_dataset): a fixed mmap threshold of 256 KiB. glibc otherwise raises the threshold
/// after freeing a large block, and the large per-molecule buffers of big molecules (Graphormer's N^2 arrays)
/// then fragment the heap, so peak RSS would creep up with the input's length; with it, big buffers go
/// straight back to the system when freed.
void returnLargeBlocksToSystem();

/// Full-batch training on a heterogeneous graph (node_property --model rgcn): a fixed mmap threshold of 4 MiB. Each
/// step builds per-relation buffers of a dozen sizes between a few and tens of MiB; with glibc's rising threshold
/// those land in the heap, whose holes then grow the peak from epoch to epoch (R-GCN on a 100k-paper
/// ogbn-mag-shaped graph: 1.85 GB after 3 epochs, 2.23 GB after 20 and 2.30 after 50, against 1.66 GB after 20
/// here). The cost is the fresh pages of those buffers each step: the epochs ~20% slower.
void mapLargeBlocksForFullBatchTraining();

/// Faults in a block of the heap on a spare thread while a program reads its data, so that the first training
/// step's buffers land on resident pages. The first step otherwise faults in every page it allocates: a SchNet
/// step on QM7 (batch 32) faults in ~48 MB, 12k pages at ~1.5 us each on a 2-core VM, and took 30 ms against
/// 11 ms for the steps after it. The block is allocated on the calling thread (glibc serves each thread from
/// its own arena, and the steps allocate on the training thread) and freed there by release(), into a heap
/// that keepFreedMemoryInHeap keeps. release() stops the touching where it is: only time that overlapped the
/// reading is spent, nothing waits for it. Nothing happens on a single core (no spare thread to overlap).
class HeapWarmUp {
 public:
  /// A block of min(kBytes, physical memory / 16).
  HeapWarmUp();
  ~HeapWarmUp();
  HeapWarmUp(const HeapWarmUp&) = delete;
  HeapWarmUp& operator=(const HeapWarmUp&) = delete;
  /// Stops the thread, frees the block into the heap. Idempotent.
  void release();
  /// The block's size (0 when nothing is warmed: one core, or no memory for it).
  size_t bytes() const { return bytes_; }
  /// Bytes the thread has faulted in so far (in steps of a MiB; final after release).
  size_t touchedBytes() const { return touched_.load(); }

  /// About one training step of the shipped models' default batches (SchNet on QM7: ~48 MB; GIN 5x300 at
  /// batch 128: ~110 MB): an upper bound the steps of small runs reach, a head start for larger ones.
  static constexpr size_t kBytes = size_t{64} << 20;

 private:
  char* block_ = nullptr;
  size_t bytes_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> touched_{0};
  std::thread thread_;
};

}  // namespace gnn::app
