#include "device/LossScaler.h"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace gnn {

LossScaler::LossScaler(const PrecisionOptions& precision, bool training)
    : scaling_(training ? precision.resolvedLossScaling() : LossScaling{}),
      scale_(scaling_.mode == LossScaling::Mode::None ? 1.0 : scaling_.scale) {}

void LossScaler::setState(const LossScaleState& st) {
  if (!st.valid())
    throw std::invalid_argument("loss scaling state out of range (scale " + std::to_string(st.scale) + ", counts " +
                                std::to_string(st.cleanUpdates) + "/" + std::to_string(st.skipped) + "/" +
                                std::to_string(st.overflows) + ")");
  if (scaling_.mode == LossScaling::Mode::Dynamic) scale_ = st.scale;
  cleanUpdates_ = st.cleanUpdates;
  skipped_ = st.skipped;
  overflows_ = st.overflows;
}

bool LossScaler::skipUpdate(int64_t overflows) {
  if (!active()) return false;
  if (overflows > 0) ++overflows_;
  // PopTorch's automatic loss scaling decides from a histogram of the gradients instead: it halves the scale
  // when too large a share of them sits in the histogram's top bin (near the fp16 maximum) and doubles it
  // otherwise. Skipping keeps the optimizer's state, step count and so the learning-rate schedule as they were.
  if (overflows == 0 || scaling_.mode != LossScaling::Mode::Dynamic) return false;
  ++skipped_;
  scale_ /= 2;
  cleanUpdates_ = 0;
  return true;
}

void LossScaler::unscale(std::vector<Tensor>& grads) const {
  if (!active()) return;
  const double inv = 1.0 / scale_;
  for (Tensor& g : grads) {
    if (!g.defined()) continue;
    Tensor u = Tensor::empty(g.shape(), g.dtype());
    dispatchFloat(g.dtype(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      u.flat<T>() = g.flat<T>() * static_cast<T>(inv);
    });
    g = std::move(u);
  }
}

void LossScaler::afterApplied() {
  if (scaling_.mode == LossScaling::Mode::Dynamic && ++cleanUpdates_ >= scaling_.growthInterval) {
    scale_ *= 2;
    cleanUpdates_ = 0;
  }
}

}  // namespace gnn
