// GraphNorm: torch_geometric.nn.norm.GraphNorm (PyG 2.3.1; Cai et al., "GraphNorm: A Principled Approach to
// Accelerating Graph Neural Network Training", ICML 2021): per graph and feature,
//   out = weight * (x - mean_scale * mean) / sqrt(var + eps) + bias,  var = mean((x - mean_scale * mean)^2),
// over the graph's real rows, the same in training and evaluation. Parameters "weight" (ones), "bias" (zeros),
// "mean_scale" (ones), PyG's keys.
//
//   GraphNorm norm(64);
//   Variable y = norm.forward(x, NormBatch{b.batch, b.numGraphs, b.nodesMask});
#pragma once
#include "gnn/nn/norm/Normalization.h"

namespace gnn {

class GraphNorm : public Normalization {
 public:
  explicit GraphNorm(int64_t channels, double eps = 1e-5, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels, eps); std::invalid_argument for any other.
  static std::unique_ptr<GraphNorm> fromPyG(const nlohmann::json& args, DType dtype = DType::F32);
  Variable forward(const Variable& x, const NormBatch& b) override;
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t channels_;
  double eps_;
  Variable* weight_;
  Variable* bias_;
  Variable* meanScale_;
};

}  // namespace gnn
