// SumAggregation: the sum of the messages (PyG's SumAggregation, `aggr="sum"` or "add").
#pragma once
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class SumAggregation : public Aggregation {
 public:
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "sum"; }
  std::unique_ptr<Module> clone() const override { return std::make_unique<SumAggregation>(); }
};

}  // namespace gnn
