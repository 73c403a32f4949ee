// LayerNorm: normalisation over the last dimension with learnable gamma (ones) and beta (zeros),
// as torch.nn.LayerNorm.
#pragma once
#include "gnn/nn/Module.h"

namespace gnn {

class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t features, double eps = 1e-5, DType dtype = DType::F32);
  Variable forward(const Variable& x) const;
  /// relu(forward(x)), fused.
  Variable forwardRelu(const Variable& x) const;
  std::unique_ptr<Module> clone() const override;

 private:
  double eps_;
  Variable* gamma_;
  Variable* beta_;
};

}  // namespace gnn
