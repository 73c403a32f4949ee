// ResidentMemory: this process's resident memory split as /proc/self/status splits it: RssAnon (heap, stacks,
// what the program allocated) and RssFile (pages of mapped files, such as a memory-mapped dataset: the page cache
// holds them whether or not they are mapped, and the kernel reclaims them when memory is short). getrusage's
// peak (peak_rss_mb) counts both; a run that maps a large file reports the two apart.
//
//   ResidentMemoryPeak peak;                 // samples every 20 ms on a thread of its own until destroyed
//   ...
//   ResidentMemory now = residentMemory();   // now.anonMb, now.fileMb
//   peak.peak().anonMb;                      // the largest RssAnon seen (and fileMb, the largest RssFile)
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gnn {

struct ResidentMemory {
  double anonMb = -1, fileMb = -1, shmemMb = -1;  // -1: not reported by this system
};

/// This process's RssAnon, RssFile and RssShmem now, in MiB.
ResidentMemory residentMemory();

class ResidentMemoryPeak {
 public:
  explicit ResidentMemoryPeak(std::chrono::milliseconds every = std::chrono::milliseconds(20));
  ~ResidentMemoryPeak();
  ResidentMemoryPeak(const ResidentMemoryPeak&) = delete;
  ResidentMemoryPeak& operator=(const ResidentMemoryPeak&) = delete;
  /// The largest RssAnon and RssFile sampled so far (each at its own moment), a sample taken now included.
  ResidentMemory peak();

 private:
  void sample();
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  ResidentMemory peak_;
  std::thread thread_;
};

}  // namespace gnn
