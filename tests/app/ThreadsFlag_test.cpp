// --threads holds the whole process to its count: the contexts that a device program runs its stages on and the
// loader's prefetch thread are other threads' contexts, which once took the process default (every core).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "app/TrainingFlags.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn::app {
namespace {

// Restores the process defaults whatever the test did.
struct RestoreThreads {
  ~RestoreThreads() {
    setNumThreads(0);
    setDefaultThreads(0);
    setCoreSlots(0);
  }
};

// What a loop of many chunks ran on: the OpenMP threads seen and the most bodies running at once.
struct LoopWitness {
  std::mutex mu;
  std::set<int> ompThreads;
  std::atomic<int> inside{0}, most{0};

  void run() {
    parallelFor(64, 1, [&](int64_t, int64_t) {
      const int now = ++inside;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      volatile double x = 0;
      for (int i = 0; i < 200000; ++i) x = x + i * 1e-9;
      {
        std::lock_guard<std::mutex> lock(mu);
        ompThreads.insert(omp_get_thread_num());
      }
      --inside;
    });
  }
};

TEST(ThreadsFlag, OneThreadHoldsOtherThreadsContextsToOneCore) {
  if (machineCores() < 2) GTEST_SKIP() << "needs two cores to tell one thread from two";
  RestoreThreads restore;
  applyThreads(1);
  EXPECT_EQ(numThreads(), 1);
  LoopWitness w;
  int budget = 0;
  // A new thread with a context of its own, as a device program's stage or a prefetch thread has.
  std::thread other([&] {
    ExecutionContext ctx;
    ContextScope use(ctx);
    budget = numThreads();
    w.run();
  });
  other.join();
  EXPECT_EQ(budget, 1);
  EXPECT_EQ(w.ompThreads.size(), 1u) << "the loop ran on more than one OpenMP thread";
  EXPECT_EQ(w.most.load(), 1);
  EXPECT_EQ(coreSlots(), 1);
}

TEST(ThreadsFlag, OneThreadRunsTwoThreadsLoopsOneAtATime) {
  if (machineCores() < 2) GTEST_SKIP() << "needs two cores to tell one thread from two";
  RestoreThreads restore;
  applyThreads(1);
  LoopWitness w;
  // Two stages running at once (pipelined or replicated): their loops share the one core slot.
  std::thread a([&] { w.run(); }), b([&] { w.run(); });
  a.join();
  b.join();
  EXPECT_EQ(w.most.load(), 1) << "two loop bodies ran at once under --threads 1";
}

TEST(ThreadsFlag, ZeroLeavesTheProcessDefaultsAndARankShareIsNotRaised) {
  if (machineCores() < 2) GTEST_SKIP() << "needs two cores";
  RestoreThreads restore;
  const int defaults = defaultThreads(), slots = coreSlots();
  applyThreads(0);
  EXPECT_EQ(defaultThreads(), defaults);
  EXPECT_EQ(coreSlots(), slots);
  // An MPI rank given one core of the host (Program sets the slots to its share) keeps it.
  setCoreSlots(1);
  applyThreads(2);
  EXPECT_EQ(coreSlots(), 1);
  EXPECT_EQ(numThreads(), 2);
}

TEST(ThreadsFlag, MoreThreadsThanCoresOrANegativeCountIsRefused) {
  RestoreThreads restore;
  EXPECT_THROW(applyThreads(-1), std::exception);
  EXPECT_THROW(applyThreads(machineCores() + 1), std::exception);
}

}  // namespace
}  // namespace gnn::app
