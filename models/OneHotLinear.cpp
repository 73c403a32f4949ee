#include "models/OneHotLinear.h"

#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {

OneHotLinear::OneHotLinear(std::vector<int64_t> dims, int64_t dense, int64_t out, Generator& gen, bool bias,
                           DType dtype)
    : dims_(std::move(dims)), dense_(dense), out_(out), bias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(!dims_.empty() && dense_ >= 0 && out_ > 0,
                "OneHotLinear: needs at least one categorical column, dense >= 0 and out > 0");
  int64_t rows = 0;
  for (int64_t d : dims_) {
    GNN_CHECK_ARG(d > 0, "OneHotLinear: every column needs at least one category");
    offsets_.push_back(rows);
    rows += d;
  }
  // nn.Linear(rows + dense, out): kaiming_uniform_(a = sqrt(5)) and the bias both give U(-1/sqrt(in), 1/sqrt(in)).
  const double bound = 1.0 / std::sqrt(static_cast<double>(rows + dense_));
  table_ = &registerParameter("table", init::uniform({rows, out_}, -bound, bound, gen, dtype_));
  if (dense_ > 0) weight_ = &registerParameter("weight", init::uniform({out_, dense_}, -bound, bound, gen, dtype_));
  if (bias_) biasParam_ = &registerParameter("bias", init::uniform({out_}, -bound, bound, gen, dtype_));
}

std::unique_ptr<Module> OneHotLinear::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<OneHotLinear>(dims_, dense_, out_, unused, bias_, dtype_));
}

Variable OneHotLinear::forward(const Tensor& categories, const Variable& dense) const {
  const int64_t c = static_cast<int64_t>(dims_.size());
  GNN_CHECK_ARG(categories.dtype() == DType::I64 && categories.rank() == 2 && categories.dim(1) == c,
                "OneHotLinear: expected int64 categories [M, ", c, "], got ", dtypeName(categories.dtype()), " ",
                shapeString(categories.shape()));
  const int64_t m = categories.dim(0);
  GNN_CHECK_ARG(dense_ == 0 ? !dense.defined()
                            : dense.defined() && dense.value().rank() == 2 && dense.dim(0) == m && dense.dim(1) == dense_,
                "OneHotLinear: expected dense features [", m, ", ", dense_, "], got ",
                dense.defined() ? shapeString(dense.shape()) : std::string("none"));
  Tensor rows({m, c}, DType::I64);
  const int64_t* cp = categories.data<int64_t>();
  int64_t* rp = rows.data<int64_t>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t k = 0; k < c; ++k) {
      const int64_t v = cp[i * c + k];
      GNN_CHECK_ARG(v >= 0 && v < dims_[k], "OneHotLinear: row ", i, " column ", k, " has category ", v,
                    " outside [0, ", dims_[k], ")");
      rp[i * c + k] = offsets_[k] + v;
    }
  Variable y = embeddingBag(*table_, rows);
  if (dense_ > 0) return add(y, linear(dense, *weight_, biasParam_ ? *biasParam_ : Variable()));
  return biasParam_ ? add(y, *biasParam_) : y;
}

}  // namespace gnn
