#include "gnn/nn/aggr/Aggregation.h"

#include "gnn/nn/aggr/MaxAggregation.h"
#include "gnn/nn/aggr/MeanAggregation.h"
#include "gnn/nn/aggr/MinAggregation.h"
#include "gnn/nn/aggr/StdAggregation.h"
#include "gnn/nn/aggr/SumAggregation.h"
#include "gnn/nn/aggr/VarAggregation.h"
#include "gnn/ops/Ops.h"

namespace gnn {

Variable SumAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  return scatterSum(x, index, dimSize);
}

Variable MeanAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  return scatterMean(x, index, dimSize);
}

Variable MaxAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  return scatterMax(x, index, dimSize);
}

Variable MinAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  return scatterMin(x, index, dimSize);
}

Variable VarAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  return scatterVar(x, index, dimSize);
}

Variable StdAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  return scatterStd(x, index, dimSize, kEps);
}

std::unique_ptr<Aggregation> aggregationFromName(const std::string& name) {
  if (name == "sum" || name == "add") return std::make_unique<SumAggregation>();
  if (name == "mean") return std::make_unique<MeanAggregation>();
  if (name == "max") return std::make_unique<MaxAggregation>();
  if (name == "min") return std::make_unique<MinAggregation>();
  if (name == "var") return std::make_unique<VarAggregation>();
  if (name == "std") return std::make_unique<StdAggregation>();
  throw std::invalid_argument("aggregation '" + name + "' is not one of sum (add), mean, max, min, var, std");
}

}  // namespace gnn
