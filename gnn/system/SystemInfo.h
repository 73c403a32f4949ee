// Facts about the running process that tools report: peak memory, wall-clock timing.
#pragma once
#include <chrono>

namespace gnn {

/// Peak resident set size of this process so far, in MiB (getrusage).
double peakRssMb();

/// Wall-clock stopwatch in milliseconds.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  void reset() { start_ = std::chrono::steady_clock::now(); }
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gnn
