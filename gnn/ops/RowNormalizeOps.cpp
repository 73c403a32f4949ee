// L2 normalisation of rows (torch.nn.functional.normalize with p=2, dim=-1), as SAGEConv's `normalize` uses it.
// One op rather than sqrt(sumAxis(x * x)) and a division: a row of zeros (an isolated node without a root term)
// has a norm of 0, whose square root's derivative is infinite; torch clamps the norm from below by eps, so the
// gradient there is g / eps, which this op gives.
#include <algorithm>
#include <cmath>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

Variable normalizeRows(const Variable& x, double eps) {
  const Tensor& X = x.value();
  GNN_CHECK_ARG(X.rank() == 2 && X.isFloating(), "normalizeRows: expected a float [N, F] tensor, got ",
                dtypeName(X.dtype()), " ", shapeString(X.shape()));
  GNN_CHECK_ARG(eps > 0, "normalizeRows: eps must be positive, got ", eps);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t N = X.dim(0), F = X.dim(1);
    Tensor Y = Tensor::empty({N, F}, X.dtype());
    // Each row's divisor max(||x||, eps), kept for the backward (the gradient differs where it is eps).
    Tensor D = Tensor::empty({N}, X.dtype());
    const T* xp = X.data<T>();
    T* yp = Y.data<T>();
    T* dp = D.data<T>();
    const T e = static_cast<T>(eps);
    parallelFor(N, grainFor(3 * F), [&](int64_t b, int64_t end) GNN_CPU_CLONES {
      for (int64_t i = b; i < end; ++i) {
        const T* __restrict r = xp + i * F;
        T* __restrict o = yp + i * F;
        // The lane order depends on F alone: a row's bits do not depend on where it sits in the batch.
        const T sq = ops::laneSum<T>(F, [r](T& acc, int64_t j) { acc = ops::mulAdd(r[j], r[j], acc); });
        const T d = std::max(std::sqrt(sq), e);
        dp[i] = d;
        for (int64_t j = 0; j < F; ++j) o[j] = r[j] / d;
      }
    });
    const int64_t bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"normalizeRows", 3 * N * F + 2 * N, bytes, bytes + static_cast<int64_t>(D.nbytes()), 5 * N * F};
    return Variable::record(info, Y, {x}, {Y, D}, [e](const Tensor& gy, std::vector<GradInput>& in,
                                                       const std::vector<Tensor>& saved) {
      // y = x / n: dx = (g - y (g . y)) / n where n = ||x|| > eps; where the norm is clamped, the divisor is a
      // constant and dx = g / eps.
      const Tensor &Yv = saved[0], &Dv = saved[1];
      const int64_t rows = Yv.dim(0), cols = Yv.dim(1);
      Tensor G = Tensor::empty(Yv.shape(), Yv.dtype());
      const T* y = Yv.data<T>();
      const T* d = Dv.data<T>();
      const T* g = gy.data<T>();
      T* o = G.data<T>();
      parallelFor(rows, grainFor(4 * cols), [&](int64_t b, int64_t end) GNN_CPU_CLONES {
        for (int64_t i = b; i < end; ++i) {
          const T* __restrict yr = y + i * cols;
          const T* __restrict gr = g + i * cols;
          T* __restrict orow = o + i * cols;
          if (d[i] > e) {
            const T dot = ops::laneSum<T>(cols, [yr, gr](T& acc, int64_t j) { acc = ops::mulAdd(gr[j], yr[j], acc); });
            for (int64_t j = 0; j < cols; ++j) orow[j] = ops::mulAdd(-yr[j], dot, gr[j]) / d[i];
          } else {
            for (int64_t j = 0; j < cols; ++j) orow[j] = gr[j] / d[i];
          }
        }
      });
      in[0].addGrad(G);
    });
  });
}

}  // namespace gnn
