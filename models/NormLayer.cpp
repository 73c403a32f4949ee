#include "models/NormLayer.h"

#include "gnn/system/Check.h"

namespace gnn {

NormKind parseNormKind(const std::string& name) {
  if (name == "layer") return NormKind::Layer;
  if (name == "batch") return NormKind::Batch;
  invalidArgument("unknown norm '", name, "' (layer | batch)");
}

const char* normKindName(NormKind kind) { return kind == NormKind::Batch ? "batch" : "layer"; }

NormLayer::NormLayer(NormKind kind, int64_t features, DType dtype) {
  if (kind == NormKind::Batch)
    batch_ = std::make_unique<BatchNorm>(features, 1e-5, 0.1, dtype);
  else
    layer_ = std::make_unique<LayerNorm>(features, 1e-5, dtype);
}

Module& NormLayer::module() { return batch_ ? static_cast<Module&>(*batch_) : static_cast<Module&>(*layer_); }

Variable NormLayer::forward(const Variable& x, const Tensor& rowMask, bool withRelu) {
  if (batch_) return withRelu ? batch_->forwardRelu(x, rowMask) : batch_->forward(x, rowMask);
  return withRelu ? layer_->forwardRelu(x) : layer_->forward(x);
}

}  // namespace gnn
