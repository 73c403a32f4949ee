// sliceCols: a block of columns of a matrix as a copy, with its gradient written back into those columns.
// What PyTorch does with x[:, a:b] (PNAConv's towers over divided input, a weight's column blocks).
#include <algorithm>

#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

Variable sliceCols(const Variable& a, int64_t begin, int64_t end) {
  const Tensor& A = a.value();
  GNN_CHECK_ARG(A.rank() == 2 && A.isFloating(), "sliceCols: expected a float [M, C] tensor, got ",
                dtypeName(A.dtype()), " ", shapeString(A.shape()));
  GNN_CHECK_ARG(0 <= begin && begin <= end && end <= A.dim(1), "sliceCols: columns [", begin, ", ", end,
                ") are not within the ", A.dim(1), " columns of ", shapeString(A.shape()));
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t M = A.dim(0), C = A.dim(1), W = end - begin;
    Tensor Y = Tensor::empty({M, W}, A.dtype());
    const T* x = A.data<T>();
    T* y = Y.data<T>();
    parallelFor(M, grainFor(W), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      for (int64_t r = b; r < e; ++r) std::copy(x + r * C + begin, x + r * C + end, y + r * W);
    });
    const int64_t bytes = M * W * static_cast<int64_t>(sizeof(T));
    OpInfo info{"sliceCols", 0, bytes, bytes, 0};
    Shape as = A.shape();
    return Variable::record(info, Y, {a}, {}, [as, begin, end](const Tensor& gy, std::vector<GradInput>& in,
                                                              const std::vector<Tensor>&) {
      const int64_t M = as[0], C = as[1], W = end - begin;
      Tensor G(as, gy.dtype());  // zeros outside the block
      const T* g = gy.data<T>();
      T* gx = G.data<T>();
      parallelFor(M, grainFor(W), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
        for (int64_t r = b; r < e; ++r) std::copy(g + r * W, g + (r + 1) * W, gx + r * C + begin);
      });
      in[0].addGrad(G);
    });
  });
}

}  // namespace gnn
