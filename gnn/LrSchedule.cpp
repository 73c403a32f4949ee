#include "gnn/LrSchedule.h"

#include <algorithm>
#include <cmath>

#include "gnn/Check.h"
#include "gnn/Optimizer.h"

namespace gnn {

void LrSchedule::apply(Optimizer& opt, double baseLr, int64_t step) const { opt.setLr(baseLr * factor(step)); }

StepLr::StepLr(int64_t stepSize, double gamma) : stepSize_(stepSize), gamma_(gamma) {
  GNN_CHECK_ARG(stepSize > 0, "StepLr: step size must be positive");
}
double StepLr::factor(int64_t step) const { return std::pow(gamma_, static_cast<double>(step / stepSize_)); }

CosineLr::CosineLr(int64_t totalSteps, double minFactor, int64_t warmupSteps)
    : total_(totalSteps), warmup_(warmupSteps), min_(minFactor) {
  GNN_CHECK_ARG(totalSteps > warmupSteps && warmupSteps >= 0, "CosineLr: need totalSteps > warmupSteps >= 0");
}
double CosineLr::factor(int64_t step) const {
  if (step < warmup_) return static_cast<double>(step + 1) / static_cast<double>(warmup_);
  double t = std::min(1.0, static_cast<double>(step - warmup_) / static_cast<double>(total_ - warmup_));
  return min_ + (1 - min_) * 0.5 * (1 + std::cos(M_PI * t));
}

WarmupLinearLr::WarmupLinearLr(int64_t warmupSteps, int64_t totalSteps, double endFactor)
    : warmup_(warmupSteps), total_(totalSteps), end_(endFactor) {
  GNN_CHECK_ARG(totalSteps > warmupSteps && warmupSteps >= 0, "WarmupLinearLr: need totalSteps > warmupSteps >= 0");
}
double WarmupLinearLr::factor(int64_t step) const {
  if (step < warmup_) return static_cast<double>(step + 1) / static_cast<double>(warmup_);
  double t = std::min(1.0, static_cast<double>(step - warmup_) / static_cast<double>(total_ - warmup_));
  return 1 + (end_ - 1) * t;
}

}  // namespace gnn
