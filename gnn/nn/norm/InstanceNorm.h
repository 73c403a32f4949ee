// InstanceNorm: torch_geometric.nn.norm.InstanceNorm (PyG 2.3.1): each graph's real rows normalised per feature
// with the graph's mean and biased variance, (x - mean) / sqrt(var + eps), then weight and bias when affine.
// Without running statistics (the default) instance statistics are used in evaluation too. With
// track_running_stats, training updates running_mean and running_var with the average over the batch's graphs of
// their means and unbiased variances (momentum), and evaluation normalises with them, as PyG does.
// Keys as PyG's (torch's _InstanceNorm): "weight", "bias" (affine); "running_mean", "running_var",
// "num_batches_tracked" (int64 [], which PyG's InstanceNorm never advances) with track_running_stats.
//
//   InstanceNorm norm(64);
//   Variable y = norm.forward(x, NormBatch{b.batch, b.numGraphs, b.nodesMask});
#pragma once
#include "gnn/nn/norm/Normalization.h"

namespace gnn {

struct InstanceNormOptions {
  double eps = 1e-5;
  double momentum = 0.1;
  bool affine = false;
  bool trackRunningStats = false;
  DType dtype = DType::F32;
};

class InstanceNorm : public Normalization {
 public:
  explicit InstanceNorm(int64_t channels, InstanceNormOptions options = {});
  /// From PyG's keyword arguments (in_channels, eps, momentum, affine, track_running_stats); std::invalid_argument
  /// for any other, and for momentum=None with track_running_stats (PyG's update would fail on it).
  static std::unique_ptr<InstanceNorm> fromPyG(const nlohmann::json& args, DType dtype = DType::F32);
  Variable forward(const Variable& x, const NormBatch& b) override;
  std::unique_ptr<Module> clone() const override;

 private:
  void updateRunningStats(const Tensor& mean, const Tensor& var, const Tensor& ptr, const NormBatch& b);

  int64_t channels_;
  InstanceNormOptions opt_;
  Variable* weight_ = nullptr;
  Variable* bias_ = nullptr;
  Variable* runningMean_ = nullptr;
  Variable* runningVar_ = nullptr;
};

}  // namespace gnn
