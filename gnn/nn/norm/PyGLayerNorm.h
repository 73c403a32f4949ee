// PyGLayerNorm: torch_geometric.nn.norm.LayerNorm (PyG 2.3.1). Mode "graph" (the default) normalises each graph
// over all its real rows and features (one mean and one biased variance per graph), then weight and bias per
// feature; with no batch vector PyG computes (x - mean) / (std + eps) over the whole input, with one it computes
// (x - mean) / sqrt(var + eps) per graph, and so does this layer (NormBatch::batch undefined or given). Mode
// "node" is torch's LayerNorm of each row. Parameters "weight" (ones) and "bias" (zeros) when affine, PyG's keys.
// (gnn::LayerNorm is the per-row layer the library's own models use.)
//
//   PyGLayerNorm norm(64);                                   // mode "graph"
//   Variable y = norm.forward(x, NormBatch{b.batch, b.numGraphs, b.nodesMask});
#pragma once
#include <string>

#include "gnn/nn/norm/Normalization.h"

namespace gnn {

class PyGLayerNorm : public Normalization {
 public:
  /// mode "graph" or "node".
  explicit PyGLayerNorm(int64_t channels, double eps = 1e-5, bool affine = true, std::string mode = "graph",
                        DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels, eps, affine, mode); std::invalid_argument for any other.
  static std::unique_ptr<PyGLayerNorm> fromPyG(const nlohmann::json& args, DType dtype = DType::F32);
  Variable forward(const Variable& x, const NormBatch& b) override;
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t channels_;
  double eps_;
  bool affine_;
  std::string mode_;
  DType dtype_;
  Variable* weight_ = nullptr;
  Variable* bias_ = nullptr;
};

}  // namespace gnn
