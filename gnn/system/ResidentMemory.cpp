#include "gnn/system/ResidentMemory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace gnn {

ResidentMemory residentMemory() {
  ResidentMemory r;
  // fopen/fgets rather than iostreams: the sampler reads this 50 times a second.
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return r;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    long kb = 0;
    if (std::sscanf(line, "RssAnon: %ld", &kb) == 1) r.anonMb = static_cast<double>(kb) / 1024.0;
    else if (std::sscanf(line, "RssFile: %ld", &kb) == 1) r.fileMb = static_cast<double>(kb) / 1024.0;
    else if (std::sscanf(line, "RssShmem: %ld", &kb) == 1) r.shmemMb = static_cast<double>(kb) / 1024.0;
  }
  std::fclose(f);
  return r;
}

ResidentMemoryPeak::ResidentMemoryPeak(std::chrono::milliseconds every) {
  sample();
  thread_ = std::thread([this, every] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, every, [this] { return stop_; })) {
      lock.unlock();
      sample();
      lock.lock();
    }
  });
}

ResidentMemoryPeak::~ResidentMemoryPeak() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ResidentMemoryPeak::sample() {
  const ResidentMemory now = residentMemory();
  std::lock_guard<std::mutex> lock(mutex_);
  peak_.anonMb = std::max(peak_.anonMb, now.anonMb);
  peak_.fileMb = std::max(peak_.fileMb, now.fileMb);
  peak_.shmemMb = std::max(peak_.shmemMb, now.shmemMb);
}

ResidentMemory ResidentMemoryPeak::peak() {
  sample();
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_;
}

}  // namespace gnn
