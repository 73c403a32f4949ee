// PowerMeanAggregation: the generalised mean of Li et al. (2020, "DeeperGCN") as PyG 2.3.1's
// PowerMeanAggregation,
//   out_i = clamp(mean_{e -> i} clamp(x_e, 0, 100)^p, 0, 100)^(1/p)     (p = 1: the plain mean),
// with PyG's clamps (the messages are taken as non-negative). p is fixed: PyG's learn=True (p a Parameter) is
// refused.
//
//   PowerMeanAggregation aggr(2.0);
//   Variable h = aggr.forward(messages, dst, numNodes);
#pragma once
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class PowerMeanAggregation : public Aggregation {
 public:
  explicit PowerMeanAggregation(double p = 1.0);
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "powermean"; }
  nlohmann::json spec() const override;
  std::unique_ptr<Module> clone() const override { return std::make_unique<PowerMeanAggregation>(p_); }

 private:
  double p_;
};

}  // namespace gnn
