// MaxAggregation: the elementwise maximum of the messages (PyG's MaxAggregation, `aggr="max"`); 0 where none arrive.
// The gradient goes to the first message holding the maximum.
#pragma once
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class MaxAggregation : public Aggregation {
 public:
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "max"; }
  std::unique_ptr<Module> clone() const override { return std::make_unique<MaxAggregation>(); }
};

}  // namespace gnn
