#include "gnn/optim/LrSchedule.h"

#include <algorithm>
#include <cmath>

#include "gnn/optim/Optimizer.h"
#include "gnn/system/Check.h"

namespace gnn {
namespace {
// Linear warmup to 1 over `warmup` steps, then the fraction t in [0, 1] of the remaining steps done.
bool inWarmup(int64_t step, int64_t warmup, double& factor) {
  if (step >= warmup) return false;
  factor = static_cast<double>(step + 1) / static_cast<double>(warmup);
  return true;
}
double progress(int64_t step, int64_t warmup, int64_t total) {
  return std::min(1.0, static_cast<double>(step - warmup) / static_cast<double>(total - warmup));
}
}  // namespace

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
  double f;
  if (inWarmup(step, warmup_, f)) return f;
  return min_ + (1 - min_) * 0.5 * (1 + std::cos(M_PI * progress(step, warmup_, total_)));
}

WarmupLinearLr::WarmupLinearLr(int64_t warmupSteps, int64_t totalSteps, double endFactor)
    : warmup_(warmupSteps), total_(totalSteps), end_(endFactor) {
  GNN_CHECK_ARG(totalSteps > warmupSteps && warmupSteps >= 0, "WarmupLinearLr: need totalSteps > warmupSteps >= 0");
}
double WarmupLinearLr::factor(int64_t step) const {
  double f;
  if (inWarmup(step, warmup_, f)) return f;
  return 1 + (end_ - 1) * progress(step, warmup_, total_);
}

NoamLr::NoamLr(int64_t warmupSteps, int64_t totalSteps, double startFactor, double endFactor)
    : warmup_(warmupSteps), total_(totalSteps), start_(startFactor), end_(endFactor) {
  GNN_CHECK_ARG(totalSteps > warmupSteps && warmupSteps >= 0, "NoamLr: need totalSteps > warmupSteps >= 0");
  GNN_CHECK_ARG(startFactor > 0 && endFactor > 0, "NoamLr: the start and end factors must be positive");
}
double NoamLr::factor(int64_t step) const {
  // Chemprop steps its scheduler after each batch from lr = init_lr: step 0 trains at the start factor.
  if (step < warmup_) return start_ + (1 - start_) * static_cast<double>(step) / static_cast<double>(warmup_);
  return std::pow(end_, std::min(1.0, progress(step, warmup_, total_)));
}

PlateauLr::PlateauLr(State& state, double gamma, int64_t patience, double minFactor, bool higherIsBetter)
    : state_(state), gamma_(gamma), minFactor_(minFactor), patience_(patience), higher_(higherIsBetter) {
  GNN_CHECK_ARG(gamma > 0 && gamma < 1, "PlateauLr: the decay factor must be in (0, 1), got ", gamma);
  GNN_CHECK_ARG(patience >= 0, "PlateauLr: patience must be >= 0, got ", patience);
  GNN_CHECK_ARG(minFactor >= 0 && minFactor <= 1, "PlateauLr: the smallest factor must be in [0, 1], got ", minFactor);
}

void PlateauLr::observe(double metric) {
  // torch's "rel" threshold mode: better means beyond best * (1 +- 1e-4), signs as torch computes them.
  constexpr double kThreshold = 1e-4;
  const double s = state_.best;
  const bool better = !std::isnan(metric) &&
                      (!state_.seen || (higher_ ? metric > s * (1 + kThreshold) : metric < s * (1 - kThreshold)));
  if (better) {
    state_.best = metric;
    state_.seen = true;
    state_.badEpochs = 0;
    return;
  }
  if (++state_.badEpochs > patience_) {
    state_.factor = std::max(state_.factor * gamma_, minFactor_);
    state_.badEpochs = 0;
  }
}

}  // namespace gnn
