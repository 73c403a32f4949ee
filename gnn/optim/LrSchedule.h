// Learning-rate schedules: a factor of the base rate as a function of the step (0-based), applied with
// schedule.apply(optimizer, baseLr). The device applies them itself each step.
#pragma once
#include <cstdint>
#include <memory>

namespace gnn {

class Optimizer;

class LrSchedule {
 public:
  virtual ~LrSchedule() = default;
  virtual double factor(int64_t step) const = 0;
  /// Sets optimizer.lr = baseLr * factor(step).
  void apply(Optimizer& opt, double baseLr, int64_t step) const;
};

/// Constant rate.
class ConstantLr : public LrSchedule {
 public:
  double factor(int64_t) const override { return 1.0; }
};

/// Multiplies by gamma every stepSize steps (torch StepLR).
class StepLr : public LrSchedule {
 public:
  StepLr(int64_t stepSize, double gamma);
  double factor(int64_t step) const override;

 private:
  int64_t stepSize_;
  double gamma_;
};

/// Cosine decay from 1 to minFactor over totalSteps (torch CosineAnnealingLR), optionally after a linear
/// warmup from 0 over warmupSteps.
class CosineLr : public LrSchedule {
 public:
  CosineLr(int64_t totalSteps, double minFactor = 0.0, int64_t warmupSteps = 0);
  double factor(int64_t step) const override;

 private:
  int64_t total_, warmup_;
  double min_;
};

/// Linear warmup from 0 to 1 over warmupSteps, then linear decay to endFactor at totalSteps (the
/// Graphormer / BERT "polynomial decay, power 1" schedule).
class WarmupLinearLr : public LrSchedule {
 public:
  WarmupLinearLr(int64_t warmupSteps, int64_t totalSteps, double endFactor = 0.0);
  double factor(int64_t step) const override;

 private:
  int64_t warmup_, total_;
  double end_;
};

/// Chemprop's NoamLR: linear from startFactor to 1 over warmupSteps, then exponential decay to endFactor at
/// totalSteps (Chemprop's defaults: init_lr 1e-4, max_lr 1e-3, final_lr 1e-4, warmup_epochs 2, so 0.1 and 0.1
/// of the base rate).
class NoamLr : public LrSchedule {
 public:
  NoamLr(int64_t warmupSteps, int64_t totalSteps, double startFactor = 0.1, double endFactor = 0.1);
  double factor(int64_t step) const override;

 private:
  int64_t warmup_, total_;
  double start_, end_;
};

/// torch's ReduceLROnPlateau (threshold 1e-4 relative, no cooldown): the factor falls by `gamma` (at least to
/// minFactor) after more than `patience` epochs in a row whose validation metric was not better than the best
/// by the threshold, and is constant within an epoch. Its state is owned by the caller (a trainer checkpoints it
/// with the rest of its own), and observe() is called once per epoch with that epoch's validation metric.
class PlateauLr : public LrSchedule {
 public:
  struct State {
    double factor = 1.0;
    double best = 0.0;
    int64_t badEpochs = 0;
    bool seen = false;  // an epoch observed, so `best` holds
  };
  PlateauLr(State& state, double gamma, int64_t patience, double minFactor, bool higherIsBetter);
  double factor(int64_t) const override { return state_.factor; }
  /// The end of an epoch whose validation metric is `metric` (a NaN counts as no improvement).
  void observe(double metric);

 private:
  State& state_;
  double gamma_, minFactor_;
  int64_t patience_;
  bool higher_;
};

}  // namespace gnn
