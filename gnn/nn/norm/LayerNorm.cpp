#include "gnn/nn/norm/LayerNorm.h"

#include "gnn/ops/Ops.h"

namespace gnn {

LayerNorm::LayerNorm(int64_t features, double eps, DType dtype) : eps_(eps) {
  gamma_ = &registerParameter("weight", Tensor::full({features}, 1.0, dtype));
  beta_ = &registerParameter("bias", Tensor({features}, dtype));
}

std::unique_ptr<Module> LayerNorm::clone() const {
  return cloneInto(std::make_unique<LayerNorm>(gamma_->dim(0), eps_, gamma_->dtype()));
}

Variable LayerNorm::forward(const Variable& x) const { return layerNorm(x, *gamma_, *beta_, eps_); }
Variable LayerNorm::forwardRelu(const Variable& x) const { return layerNormRelu(x, *gamma_, *beta_, eps_); }

}  // namespace gnn
