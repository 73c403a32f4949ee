#include "models/SpatialEncoding.h"

#include <algorithm>

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {

SpatialEncoding::SpatialEncoding(int64_t heads, Generator& gen, DType dtype, int64_t distances)
    : heads_(heads), distances_(distances), dtype_(dtype) {
  GNN_CHECK_ARG(heads >= 1 && distances >= 2, "SpatialEncoding: heads >= 1 and distances >= 2");
  Tensor t = init::normal({distances, heads}, 0.02, gen, dtype);
  std::fill_n(static_cast<char*>(t.raw()), heads * dtypeSize(dtype), 0);  // padding row
  table_ = &registerParameter("weight", std::move(t));
}

std::unique_ptr<Module> SpatialEncoding::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<SpatialEncoding>(heads_, unused, dtype_, distances_));
}

Variable SpatialEncoding::forward(const Tensor& spatialPos) const {
  GNN_CHECK_ARG(spatialPos.defined() && spatialPos.dtype() == DType::I64 && spatialPos.rank() == 2 &&
                    spatialPos.dim(0) % std::max<int64_t>(spatialPos.dim(1), 1) == 0,
                "SpatialEncoding: spatialPos must be int64 [G·M, M] (build the dataset with Graphormer "
                "encodings), got ",
                spatialPos.defined() ? dtypeName(spatialPos.dtype()) : "none",
                spatialPos.defined() ? shapeString(spatialPos.shape()) : "");
  const int64_t m = spatialPos.dim(1), g = m ? spatialPos.dim(0) / m : 0, n = spatialPos.numel();
  Tensor idx({n}, DType::I64);
  const int64_t* sp = spatialPos.data<int64_t>();
  int64_t* ip = idx.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    GNN_CHECK_ARG(sp[i] >= -1 && sp[i] + 1 < distances_, "SpatialEncoding: distance ", sp[i], " at pair ", i,
                  " is outside [-1, ", distances_ - 2, "]");
    ip[i] = sp[i] + 1;
  }
  return reshape(embedding(*table_, idx), {g, m, m, heads_});
}

}  // namespace gnn
