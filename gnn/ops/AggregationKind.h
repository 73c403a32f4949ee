// The reductions a multi-aggregation op runs per target (PyG's aggregator names), shared by
// scatterMultiAggregate (MultiAggregateOps.cpp) and pnaAggregate (PnaAggregateOps.cpp). Internal to gnn/ops.
#pragma once
#include <stdexcept>
#include <string>

namespace gnn::ops {

enum AggregationKind : int64_t { kSum, kMean, kMax, kMin, kVar, kStd };

/// The kind named by PyG's aggregator name ("add" is "sum"); an unknown name is refused naming op.
inline AggregationKind aggregationKind(const char* op, const std::string& name) {
  if (name == "sum" || name == "add") return kSum;
  if (name == "mean") return kMean;
  if (name == "max") return kMax;
  if (name == "min") return kMin;
  if (name == "var") return kVar;
  if (name == "std") return kStd;
  throw std::invalid_argument(std::string(op) + ": unknown reduction '" + name +
                              "' (sum, add, mean, max, min, var, std)");
}

}  // namespace gnn::ops
