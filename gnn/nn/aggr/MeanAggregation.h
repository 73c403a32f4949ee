// MeanAggregation: the mean of the messages (PyG's MeanAggregation, `aggr="mean"`); 0 where none arrive.
#pragma once
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class MeanAggregation : public Aggregation {
 public:
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "mean"; }
  std::unique_ptr<Module> clone() const override { return std::make_unique<MeanAggregation>(); }
};

}  // namespace gnn
