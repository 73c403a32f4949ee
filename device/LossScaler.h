// LossScaler: fp16 loss scaling's state and its rule. The backward's seed is multiplied by scale(); the reduced
// gradients are divided by it before the update. Dynamic scaling (PyTorch GradScaler's policy) skips an update
// whose gradients overflowed and halves the scale, and doubles it after growthInterval clean updates in a row;
// static scaling applies every update and only counts the overflows.
//
//   LossScaler scaler(options, /*training=*/true);
//   if (scaler.skipUpdate(overflows)) return;   // dynamic: halved, nothing applied
//   scaler.unscale(grads);  opt.step(grads);  scaler.afterApplied();
#pragma once
#include <cstdint>
#include <vector>

#include "device/Device.h"
#include "device/IpuOptions.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

class LossScaler {
 public:
  LossScaler() = default;
  /// The options' resolved loss scaling (none for inference programs and fp32).
  LossScaler(const PrecisionOptions& precision, bool training);

  /// Scaling on (static or dynamic): overflows are counted and the gradients unscaled.
  bool active() const { return scaling_.mode != LossScaling::Mode::None; }
  /// The scale the next update's backward uses (1 without loss scaling).
  double scale() const { return scale_; }
  int64_t skipped() const { return skipped_; }
  int64_t overflows() const { return overflows_; }
  LossScaleState state() const { return {scale_, cleanUpdates_, skipped_, overflows_}; }
  /// From a checkpoint; throws std::invalid_argument when the state is out of range. Only a dynamic scale is
  /// state (a static one is the --loss-scale given); the counts are kept either way.
  void setState(const LossScaleState& st);

  /// After the gradients are reduced, with `overflows` the saturations seen: counts an overflowing update and,
  /// with dynamic scaling, returns true (skip it) after halving the scale.
  bool skipUpdate(int64_t overflows);
  /// Divides every defined gradient by the scale (nothing when inactive).
  void unscale(std::vector<Tensor>& grads) const;
  /// After an update was applied: dynamic scaling counts it and doubles the scale after growthInterval.
  void afterApplied();

 private:
  LossScaling scaling_;
  double scale_ = 1;
  int64_t cleanUpdates_ = 0, skipped_ = 0, overflows_ = 0;
};

}  // namespace gnn
