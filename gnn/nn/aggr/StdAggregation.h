// StdAggregation: the elementwise standard deviation of the messages, sqrt(clamp(var, min=1e-5)) (PyG 2.3.1's
// StdAggregation, `aggr="std"`, semi_grad=False). The clamp makes it sqrt(1e-5), not 0, where no message
// arrives or all are equal, and stops the gradient there, as in PyG.
#pragma once
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class StdAggregation : public Aggregation {
 public:
  /// PyG's clamp on the variance before the square root.
  static constexpr double kEps = 1e-5;
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "std"; }
  std::unique_ptr<Module> clone() const override { return std::make_unique<StdAggregation>(); }
};

}  // namespace gnn
