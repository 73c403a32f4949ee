#include "device/StageTimes.h"

namespace gnn {

StageTimes::StageTimes(int64_t stages)
    : forwardSeconds_(static_cast<size_t>(stages), 0.0),
      backwardSeconds_(static_cast<size_t>(stages), 0.0),
      forwards_(static_cast<size_t>(stages), 0),
      backwards_(static_cast<size_t>(stages), 0) {}

void StageTimes::add(TaskKind kind, int64_t stage, double seconds) {
  const auto s = static_cast<size_t>(stage);
  if (kind == TaskKind::Forward) {
    forwardSeconds_[s] += seconds;
    ++forwards_[s];
  } else {
    backwardSeconds_[s] += seconds;
    ++backwards_[s];
  }
}

double StageTimes::perMicroBatch(int64_t stage) const {
  const auto s = static_cast<size_t>(stage);
  if (s >= forwards_.size()) return 0.0;
  return (forwards_[s] ? forwardSeconds_[s] / static_cast<double>(forwards_[s]) : 0.0) +
         (backwards_[s] ? backwardSeconds_[s] / static_cast<double>(backwards_[s]) : 0.0);
}

}  // namespace gnn
