#include "gnn/nn/Linear.h"

#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {

Linear::Linear(int64_t inFeatures, int64_t outFeatures, Generator& gen, bool bias, DType dtype)
    : in_(inFeatures), out_(outFeatures) {
  GNN_CHECK_ARG(inFeatures > 0 && outFeatures > 0, "Linear: sizes must be positive, got ", inFeatures, " -> ",
                outFeatures);
  weight_ = &registerParameter("weight", Tensor({out_, in_}, dtype));
  if (bias) bias_ = &registerParameter("bias", Tensor({out_}, dtype));
  resetParameters(gen);
}

void Linear::resetParameters(Generator& gen) {
  double bound = 1.0 / std::sqrt(static_cast<double>(in_));
  DType dt = weight_->dtype();
  weight_->value() = init::uniform({out_, in_}, -bound, bound, gen, dt);
  if (bias_) bias_->value() = init::uniform({out_}, -bound, bound, gen, dt);
}

void Linear::resetGlorot(Generator& gen) {
  DType dt = weight_->dtype();
  weight_->value() = init::glorotUniform({out_, in_}, in_, out_, gen, dt);
  if (bias_) bias_->value() = Tensor({out_}, dt);
}

std::unique_ptr<Module> Linear::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<Linear>(in_, out_, unused, bias_ != nullptr, weight_->dtype()));
}

Variable Linear::forward(const Variable& x) const {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_, "Linear(", in_, " -> ", out_, "): input has shape ",
                shapeString(x.shape()), ", expected [N, ", in_, "]");
  return linear(x, *weight_, bias_ ? *bias_ : Variable());
}

Variable Linear::forward(const SparseMatrix& x) const {
  GNN_CHECK_ARG(x.cols() == in_, "Linear(", in_, " -> ", out_, "): sparse input has ", x.cols(), " columns");
  Variable y = spmm(x, transpose(*weight_, 0, 1));
  return bias_ ? add(y, *bias_) : y;
}

}  // namespace gnn
