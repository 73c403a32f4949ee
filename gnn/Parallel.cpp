#include "gnn/Parallel.h"

#include <Eigen/Core>
#include <condition_variable>
#include <mutex>

namespace gnn {
namespace {
std::atomic<int> gDefaultThreads{0};

// The machine's cores, read once: omp_get_num_procs() asks the kernel for the affinity mask on every call,
// and loops ask for it on every run.
int machineCores() {
  static const int cores = std::max(1, omp_get_num_procs());
  return cores;
}

struct CoreSlots {
  std::mutex mu;
  std::condition_variable freed;
  int capacity = 0;  // 0 = the machine's cores
  int inUse = 0;
  int peak = 0;
  int limit() const { return capacity > 0 ? capacity : machineCores(); }
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

int defaultThreads() {
  int n = gDefaultThreads.load(std::memory_order_relaxed);
  return n > 0 ? n : machineCores();
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

int coreSlots() {
  std::lock_guard<std::mutex> lock(slots().mu);
  return slots().limit();
}
void setCoreSlots(int n) {
  std::lock_guard<std::mutex> lock(slots().mu);
  slots().capacity = n > 0 ? n : 0;
  slots().freed.notify_all();
}
int peakCoreSlotsInUse() {
  std::lock_guard<std::mutex> lock(slots().mu);
  return slots().peak;
}
void resetPeakCoreSlotsInUse() {
  std::lock_guard<std::mutex> lock(slots().mu);
  slots().peak = slots().inUse;
}

namespace detail {
bool& holdsCoreSlot() {
  thread_local bool held = false;
  return held;
}

CoreLease::CoreLease(int want) {
  CoreSlots& s = slots();
  {
    std::unique_lock<std::mutex> lock(s.mu);
    s.freed.wait(lock, [&] { return s.inUse < s.limit(); });
    count_ = std::max(1, std::min(want, s.limit() - s.inUse));
    s.inUse += count_;
    s.peak = std::max(s.peak, s.inUse);
  }
  holdsCoreSlot() = true;
}

CoreLease::~CoreLease() {
  holdsCoreSlot() = false;
  CoreSlots& s = slots();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.inUse -= count_;
  }
  // Wake only as many waiters as slots came free: waking all of them would make every waiting thread
  // runnable at once just to find the slots taken.
  for (int i = 0; i < count_; ++i) s.freed.notify_one();
}
}  // namespace detail

}  // namespace gnn
