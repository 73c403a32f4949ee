// sliceRows: a block of rows as a copy, with its gradient written back into those rows (zeros elsewhere). What
// PyTorch does with x[a:b] (PyG's trim_to_layer keeps the first rows of a neighbour batch for each layer).
#include <algorithm>
#include <cstring>

#include "gnn/ops/Ops.h"

namespace gnn {

Variable sliceRows(const Variable& a, int64_t begin, int64_t end) {
  const Tensor& A = a.value();
  GNN_CHECK_ARG(A.rank() >= 1 && A.isFloating(), "sliceRows: expected a float tensor, got ", dtypeName(A.dtype()),
                " ", shapeString(A.shape()));
  GNN_CHECK_ARG(0 <= begin && begin <= end && end <= A.dim(0), "sliceRows: rows [", begin, ", ", end,
                ") are not within the ", A.dim(0), " rows of ", shapeString(A.shape()));
  if (begin == 0 && end == A.dim(0)) return a;
  const int64_t rowBytes = A.dim(0) > 0 ? static_cast<int64_t>(A.nbytes()) / A.dim(0) : 0;
  Shape shape = A.shape();
  shape[0] = end - begin;
  Tensor Y = Tensor::empty(shape, A.dtype());
  std::memcpy(Y.raw(), static_cast<const char*>(A.raw()) + begin * rowBytes, static_cast<size_t>((end - begin) * rowBytes));
  const int64_t bytes = (end - begin) * rowBytes;
  OpInfo info{"sliceRows", 0, bytes, bytes, 0};
  const Shape as = A.shape();
  return Variable::record(info, Y, {a}, {}, [as, begin, rowBytes](const Tensor& gy, std::vector<GradInput>& in,
                                                                  const std::vector<Tensor>&) {
    Tensor G(as, gy.dtype());  // zeros outside the block
    std::memcpy(static_cast<char*>(G.raw()) + begin * rowBytes, gy.raw(), gy.nbytes());
    in[0].addGrad(G);
  });
}

}  // namespace gnn
