// MinAggregation: the elementwise minimum of the messages (PyG's MinAggregation, `aggr="min"`); 0 where none
// arrive. The gradient goes to the first message holding the minimum.
#pragma once
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class MinAggregation : public Aggregation {
 public:
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "min"; }
  std::unique_ptr<Module> clone() const override { return std::make_unique<MinAggregation>(); }
};

}  // namespace gnn
