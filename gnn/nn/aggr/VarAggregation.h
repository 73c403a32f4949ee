// VarAggregation: the elementwise variance of the messages, mean(x^2) - mean(x)^2 (PyG 2.3.1's VarAggregation,
// `aggr="var"`, semi_grad=False); 0 where none arrive.
#pragma once
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class VarAggregation : public Aggregation {
 public:
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "var"; }
  std::unique_ptr<Module> clone() const override { return std::make_unique<VarAggregation>(); }
};

}  // namespace gnn
