#include "gnn/system/Parallel.h"

#include <Eigen/Core>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

namespace gnn {
namespace {
std::atomic<int> gDefaultThreads{0};

// Slots in use are an atomic count, so taking and returning free slots costs two atomic operations; only a
// thread that finds none free takes the mutex and sleeps until one is returned.
struct CoreSlots {
  std::atomic<int> capacity{0};  // 0 = the machine's cores
  std::atomic<int> inUse{0};
  std::atomic<int> peak{0};
  std::atomic<int> waiting{0};
  std::mutex mu;
  std::condition_variable freed;
  int limit() const {
    const int c = capacity.load(std::memory_order_relaxed);
    return c > 0 ? c : machineCores();
  }
  // Takes between 1 and want slots if any is free; returns how many (0: none free).
  int tryTake(int want) {
    int cur = inUse.load(std::memory_order_relaxed);
    for (;;) {
      const int room = limit() - cur;
      if (room <= 0) return 0;
      const int take = std::max(1, std::min(want, room));
      if (inUse.compare_exchange_weak(cur, cur + take, std::memory_order_acquire, std::memory_order_relaxed)) {
        const int now = cur + take;
        int p = peak.load(std::memory_order_relaxed);
        while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
        }
        return take;
      }
    }
  }
};
CoreSlots& slots() {
  static auto* s = new CoreSlots();  // never destroyed: loops may run during static destruction
  return *s;
}

// Eigen's own threading would make its blocking (and hence rounding) depend on the thread count; our matmul
// splits rows into fixed blocks itself.
const bool kEigenSingleThreaded = [] {
  Eigen::setNbThreads(1);
  return true;
}();
}  // namespace

// Read once: omp_get_num_procs() asks the kernel for the affinity mask on every call, and loops ask for it on
// every run.
int machineCores() {
  static const int cores = std::max(1, omp_get_num_procs());
  return cores;
}

int defaultThreads() {
  int n = gDefaultThreads.load(std::memory_order_relaxed);
  if (n > 0) return n;
  // GNN_OP_THREADS caps the threads of one op without changing the cores that stages and replicas of a device
  // run on: the ThreadSanitizer suite runs ops on one thread (libgomp's barriers are invisible to it) while a
  // device's workers still run concurrently.
  static const int env = [] {
    const char* v = std::getenv("GNN_OP_THREADS");
    return v ? std::atoi(v) : 0;
  }();
  return env > 0 ? std::min(env, machineCores()) : machineCores();
}
void setDefaultThreads(int n) { gDefaultThreads.store(n > 0 ? n : 0, std::memory_order_relaxed); }

int numThreads() { return ExecutionContext::current().threads(); }
void setNumThreads(int n) {
  (void)kEigenSingleThreaded;
  Eigen::setNbThreads(1);
  ExecutionContext::current().setThreads(n);
  // OpenMP regions outside ops (dataset builds, METIS input) follow the same count on this thread.
  if (n > 0) omp_set_num_threads(n);
}

int coreSlots() { return slots().limit(); }
void setCoreSlots(int n) {
  slots().capacity.store(n > 0 ? n : 0);
  std::lock_guard<std::mutex> lock(slots().mu);
  slots().freed.notify_all();
}
int peakCoreSlotsInUse() { return slots().peak.load(); }
void resetPeakCoreSlotsInUse() { slots().peak.store(slots().inUse.load()); }

namespace detail {
bool& holdsCoreSlot() {
  thread_local bool held = false;
  return held;
}

CoreLease::CoreLease(int want) {
  CoreSlots& s = slots();
  count_ = s.tryTake(want);
  if (count_ == 0) {
    std::unique_lock<std::mutex> lock(s.mu);
    s.waiting.fetch_add(1);
    s.freed.wait(lock, [&] { return (count_ = s.tryTake(want)) > 0; });
    s.waiting.fetch_sub(1);
  }
  holdsCoreSlot() = true;
}

CoreLease::~CoreLease() {
  holdsCoreSlot() = false;
  CoreSlots& s = slots();
  s.inUse.fetch_sub(count_, std::memory_order_release);
  if (s.waiting.load() > 0) {
    // Under the mutex, so a waiter between its check and its sleep cannot miss the wake-up; only as many
    // waiters as slots came free are woken.
    std::lock_guard<std::mutex> lock(s.mu);
    for (int i = 0; i < count_; ++i) s.freed.notify_one();
  }
}
}  // namespace detail

}  // namespace gnn
