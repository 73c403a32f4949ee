#include "gnn/nn/norm/MessageNorm.h"

#include "gnn/ops/Ops.h"

namespace gnn {

MessageNorm::MessageNorm(bool learnScale, DType dtype) : learn_(learnScale), dtype_(dtype) {
  // A Parameter with requires_grad=learn_scale in PyG: a buffer here when it does not learn.
  const Tensor one = Tensor::full({1}, 1.0, dtype_);
  scale_ = learn_ ? &registerParameter("scale", one) : &registerBuffer("scale", one);
}

std::unique_ptr<Module> MessageNorm::clone() const { return cloneInto(std::make_unique<MessageNorm>(learn_, dtype_)); }

Variable MessageNorm::forward(const Variable& x, const Variable& msg) const {
  GNN_CHECK_ARG(x.value().rank() == 2 && msg.value().rank() == 2 && x.dim(0) == msg.dim(0), "MessageNorm: x ",
                shapeString(x.shape()), " and messages ", shapeString(msg.shape()), " must be [N, *] alike");
  const Variable xNorm = sqrt(sumAxis(mul(x, x), 1, /*keepDim=*/true));  // [N, 1]
  const Variable out = mul(normalizeRows(msg), xNorm);
  return scaleByScalar(out, *scale_);
}

}  // namespace gnn
