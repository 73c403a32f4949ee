#include <gtest/gtest.h>
#include <malloc.h>

#include <chrono>
#include <thread>

#include "app/HeapTuning.h"
#include "gnn/system/Parallel.h"

using gnn::app::HeapWarmUp;

// The warmed block ends up in the heap, free for the steps' allocations (not returned to the system).
TEST(HeapWarmUp, LeavesItsTouchedBlockFreeInTheHeap) {
  if (gnn::machineCores() < 2) GTEST_SKIP() << "one core: nothing is warmed";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator keeps no glibc heap to inspect";
#endif
  gnn::app::keepFreedMemoryInHeap();
  const size_t freeBefore = mallinfo2().fordblks;
  HeapWarmUp warm;
  ASSERT_GT(warm.bytes(), size_t{0});
  ASSERT_LE(warm.bytes(), HeapWarmUp::kBytes);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (warm.touchedBytes() < warm.bytes() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  warm.release();
  EXPECT_EQ(warm.touchedBytes(), warm.bytes());
  EXPECT_GE(mallinfo2().fordblks, freeBefore + warm.bytes());
  warm.release();  // idempotent
}

TEST(HeapWarmUp, ReleaseStopsTheTouchingWhereItIs) {
  HeapWarmUp warm;
  warm.release();
  EXPECT_LE(warm.touchedBytes(), warm.bytes());
}
