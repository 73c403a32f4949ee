// TargetScaling: per-target standardisation for regression, fitted on the training split: the model learns
// (y - mean) / std and its outputs are mapped back with pred * std + mean, so targets of different scales
// weigh alike in the loss. Missing labels (mask 0) are left out of the fit. A constant target gets std 1.
//
//   TargetScaling s = TargetScaling::fit(dataset, trainPositions, tasks);
//   Tensor yz = s.standardize(batch.y);           // for the loss
//   Tensor pred = s.restore(model.forward(b).value());
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "data/Dataset.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

struct TargetScaling {
  std::vector<double> mean, std;  // one per target; empty = identity

  static TargetScaling identity() { return {}; }
  /// Mean and population standard deviation of each target over the labelled graphs at `positions`.
  static TargetScaling fit(const Dataset& dataset, const std::vector<int64_t>& positions, int tasks);
  bool enabled() const { return !mean.empty(); }
  /// y [G, T] float32 -> (y - mean) / std.
  Tensor standardize(const Tensor& y) const;
  /// pred [G, T] float32 -> pred * std + mean.
  Tensor restore(const Tensor& pred) const;

  nlohmann::json toJson() const;
  static TargetScaling fromJson(const nlohmann::json& j);
};

}  // namespace gnn
