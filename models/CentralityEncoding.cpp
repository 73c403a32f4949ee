#include "models/CentralityEncoding.h"

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "models/AtomEncoder.h"

namespace gnn {

CentralityEncoding::CentralityEncoding(int64_t dim, Generator& gen, DType dtype, int64_t degrees)
    : dim_(dim), degrees_(degrees), dtype_(dtype), dims_(AtomEncoder::featureDims()) {
  GNN_CHECK_ARG(dim >= 1 && degrees >= 1, "CentralityEncoding: dim and degrees must be >= 1");
  dims_.push_back(degrees);
  int64_t rows = 0;
  for (int64_t d : dims_) {
    offsets_.push_back(rows);
    rows += d;
  }
  weight_ = &registerParameter("weight", init::normal({rows, dim_}, 0.02, gen, dtype));
}

std::unique_ptr<Module> CentralityEncoding::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<CentralityEncoding>(dim_, unused, dtype_, degrees_));
}

Variable CentralityEncoding::forward(const Tensor& x, const Tensor& degree, const Tensor& nodesMask) const {
  const int64_t atomCols = static_cast<int64_t>(dims_.size()) - 1, cols = atomCols + 1;
  GNN_CHECK_ARG(x.dtype() == DType::I64 && x.rank() == 2 && x.dim(1) == atomCols,
                "CentralityEncoding: x must be int64 [N, ", atomCols, "] (OGB atom features), got ",
                dtypeName(x.dtype()), " ", shapeString(x.shape()));
  const int64_t n = x.dim(0);
  GNN_CHECK_ARG(degree.defined() && degree.dtype() == DType::I64 && degree.numel() == n,
                "CentralityEncoding: degrees must be int64 [", n,
                "] (build the dataset with Graphormer encodings), got ",
                degree.defined() ? dtypeName(degree.dtype()) : "none",
                degree.defined() ? shapeString(degree.shape()) : "");
  GNN_CHECK_ARG(!nodesMask.defined() || (nodesMask.dtype() == DType::U8 && nodesMask.numel() == n),
                "CentralityEncoding: nodesMask must be uint8 [", n, "]");
  Tensor idx({n, cols}, DType::I64);
  const int64_t* xp = x.data<int64_t>();
  const int64_t* deg = degree.data<int64_t>();
  const uint8_t* mask = nodesMask.defined() ? nodesMask.data<uint8_t>() : nullptr;
  int64_t* ip = idx.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const bool real = !mask || mask[i];
    for (int64_t k = 0; k < cols; ++k) {
      const int64_t v = !real ? 0 : k < atomCols ? xp[i * atomCols + k] : deg[i];
      GNN_CHECK_ARG(v >= 0 && v < dims_[k], "CentralityEncoding: node ", i,
                    (k < atomCols ? " atom feature " + std::to_string(k) : std::string(" degree")), " is ", v,
                    ", outside [0, ", dims_[k], ")");
      ip[i * cols + k] = offsets_[k] + v;
    }
  }
  return embeddingBag(*weight_, idx);
}

}  // namespace gnn
