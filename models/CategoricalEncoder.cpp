#include "models/CategoricalEncoder.h"

#include <cmath>

#include "gnn/ops/Ops.h"

namespace gnn {

CategoricalEncoder::CategoricalEncoder(std::vector<int64_t> dims, int64_t dim, Generator& gen, DType dtype)
    : dims_(std::move(dims)), dim_(dim) {
  GNN_CHECK_ARG(!dims_.empty() && dim_ > 0, "CategoricalEncoder: need at least one column and dim > 0");
  int64_t rows = 0;
  for (int64_t d : dims_) {
    GNN_CHECK_ARG(d > 0, "CategoricalEncoder: every column needs at least one category");
    offsets_.push_back(rows);
    rows += d;
  }
  Tensor w = Tensor::zeros({rows, dim_}, DType::F64);
  double* p = w.data<double>();
  for (size_t c = 0; c < dims_.size(); ++c) {
    // torch.nn.init.xavier_uniform_ on a [dims[c], D] table: bound sqrt(6 / (fan_in + fan_out)).
    double a = std::sqrt(6.0 / static_cast<double>(dims_[c] + dim_));
    uint64_t first = gen.reserve(static_cast<uint64_t>(dims_[c] * dim_));
    for (int64_t i = 0; i < dims_[c] * dim_; ++i)
      p[offsets_[c] * dim_ + i] = (2.0 * gen.uniformDoubleAt(first + static_cast<uint64_t>(i)) - 1.0) * a;
  }
  weight_ = &registerParameter("weight", w.to(dtype));
}

std::unique_ptr<Module> CategoricalEncoder::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<CategoricalEncoder>(dims_, dim_, unused, dtype()));
}

Variable CategoricalEncoder::forward(const Tensor& x) const {
  const int64_t c = static_cast<int64_t>(dims_.size());
  GNN_CHECK_ARG(x.dtype() == DType::I64 && x.rank() == 2 && x.dim(1) == c, "CategoricalEncoder: expected int64 [N, ",
                c, "], got ", dtypeName(x.dtype()), " ", shapeString(x.shape()));
  const int64_t n = x.dim(0);
  Tensor idx({n, c}, DType::I64);
  const int64_t* xp = x.data<int64_t>();
  int64_t* ip = idx.data<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c; ++k) {
      int64_t v = xp[i * c + k];
      GNN_CHECK_ARG(v >= 0 && v < dims_[k], "CategoricalEncoder: row ", i, " column ", k, " has category ", v,
                    " outside [0, ", dims_[k], ")");
      ip[i * c + k] = offsets_[k] + v;
    }
  return embeddingBag(*weight_, idx);
}

}  // namespace gnn
