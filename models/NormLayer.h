// NormLayer: the norm a GIN or GCN layer applies, chosen by GraphModelOptions::norm: LayerNorm (row by row; the
// default) or BatchNorm with statistics over the batch's real rows (OGB's and pretrain-gnns' choice;
// gnn/nn/norm/BatchNorm.h). It holds one of the two and registers it under the caller's name, so parameter names stay
// those of the norm itself ("mlp.1.weight", "norms.0.running_mean").
//
//   NormLayer norm(NormKind::Batch, 300, DType::F32);
//   registerModule("norms.0", norm.module());                  // inside the owner's constructor
//   Variable h = norm.forward(c, batch.nodesMask, /*withRelu=*/true);
#pragma once
#include <memory>
#include <string>

#include "gnn/nn/norm/BatchNorm.h"
#include "gnn/nn/norm/LayerNorm.h"

namespace gnn {

enum class NormKind { Layer, Batch };

/// "layer" | "batch"; std::invalid_argument naming the choices otherwise.
NormKind parseNormKind(const std::string& name);
const char* normKindName(NormKind kind);

class NormLayer {
 public:
  NormLayer(NormKind kind, int64_t features, DType dtype);
  /// The norm's module, to register under a name in its owner.
  Module& module();
  /// x [M, F]; rowMask uint8 [M] marks the real rows (read by BatchNorm only; undefined = every row).
  Variable forward(const Variable& x, const Tensor& rowMask, bool withRelu);

 private:
  std::unique_ptr<LayerNorm> layer_;
  std::unique_ptr<BatchNorm> batch_;
};

}  // namespace gnn
