// StageTimes: the measured seconds of each stage's forward and backward tasks, for the stage table's ms/mb.
#pragma once
#include <cstdint>
#include <vector>

#include "device/Trace.h"

namespace gnn {

class StageTimes {
 public:
  explicit StageTimes(int64_t stages = 0);
  void add(TaskKind kind, int64_t stage, double seconds);
  /// Mean seconds of the stage's forward plus its backward per micro-batch (0 for a pass that has not run).
  double perMicroBatch(int64_t stage) const;

 private:
  std::vector<double> forwardSeconds_, backwardSeconds_;
  std::vector<int64_t> forwards_, backwards_;
};

}  // namespace gnn
