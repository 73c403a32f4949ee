#include "gnn/nn/GaussianSmearing.h"

#include <cmath>

#include "gnn/ops/Ops.h"
#include "gnn/system/Check.h"

namespace gnn {

GaussianSmearing::GaussianSmearing(double start, double stop, int64_t count) {
  GNN_CHECK_ARG(count >= 2 && std::isfinite(start) && std::isfinite(stop) && stop > start,
                "GaussianSmearing: needs at least 2 centres on a finite interval start < stop, got ", count, " on [",
                start, ", ", stop, "]");
  // torch.linspace's values: start + k * step, the last one exactly stop.
  const double step = (stop - start) / static_cast<double>(count - 1);
  for (int64_t k = 0; k < count; ++k) offsets_.push_back(k + 1 == count ? stop : start + static_cast<double>(k) * step);
  coeff_ = -0.5 / ((offsets_[1] - offsets_[0]) * (offsets_[1] - offsets_[0]));
}

Variable GaussianSmearing::forward(const Variable& dist) const { return gaussianSmearing(dist, offsets_, coeff_); }

}  // namespace gnn
