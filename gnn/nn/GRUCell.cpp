#include "gnn/nn/GRUCell.h"

#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {

GRUCell::GRUCell(int64_t inputSize, int64_t hiddenSize, Generator& gen, bool bias, DType dtype)
    : in_(inputSize), hidden_(hiddenSize), bias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && hidden_ > 0, "GRUCell: sizes must be positive, got ", in_, " and ", hidden_);
  const double a = 1.0 / std::sqrt(static_cast<double>(hidden_));
  weightIh_ = &registerParameter("weight_ih", init::uniform({3 * hidden_, in_}, -a, a, gen, dtype_));
  weightHh_ = &registerParameter("weight_hh", init::uniform({3 * hidden_, hidden_}, -a, a, gen, dtype_));
  if (bias_) {
    biasIh_ = &registerParameter("bias_ih", init::uniform({3 * hidden_}, -a, a, gen, dtype_));
    biasHh_ = &registerParameter("bias_hh", init::uniform({3 * hidden_}, -a, a, gen, dtype_));
  }
}

std::unique_ptr<Module> GRUCell::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GRUCell>(in_, hidden_, unused, bias_, dtype_));
}

Variable GRUCell::forward(const Variable& x, const Variable& h) const {
  GNN_CHECK_ARG(x.defined() && x.value().rank() == 2 && x.dim(1) == in_ && h.defined() && h.value().rank() == 2 &&
                    h.dim(1) == hidden_ && h.dim(0) == x.dim(0),
                "GRUCell(", in_, ", ", hidden_, "): x ", x.defined() ? shapeString(x.shape()) : std::string("none"),
                " and h ", h.defined() ? shapeString(h.shape()) : std::string("none"), " do not fit");
  // The two [N, 3H] products, then the gates' arithmetic in one op (gruCell: the columns read in place).
  const Variable gi = linear(x, *weightIh_, biasIh_ ? *biasIh_ : Variable());
  const Variable gh = linear(h, *weightHh_, biasHh_ ? *biasHh_ : Variable());
  return gruCell(gi, gh, h);
}

}  // namespace gnn
