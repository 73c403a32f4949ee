// A tensor times a learned scalar, e.g. GINConv's (1 + eps) x with train_eps: scale() takes a constant, and
// mul() broadcasts rows or columns, not a one-element tensor.
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

Variable scaleByScalar(const Variable& a, const Variable& s) {
  const Tensor &X = a.value(), &S = s.value();
  GNN_CHECK_ARG(X.isFloating() && S.dtype() == X.dtype() && S.numel() == 1 && S.rank() <= 1,
                "scaleByScalar: expected a float tensor and a one-element scalar of its dtype, got ",
                dtypeName(X.dtype()), " ", shapeString(X.shape()), " and ", dtypeName(S.dtype()), " ",
                shapeString(S.shape()));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    ops::scaleInto<T>(Y, X, S.data<T>()[0]);
    const int64_t n = X.numel(), bytes = static_cast<int64_t>(X.nbytes());
    // s's gradient needs a; a's needs s only.
    const bool scalarGrad = gradEnabled() && s.requiresGrad();
    OpInfo info{"scaleByScalar", n, bytes + static_cast<int64_t>(S.nbytes()), bytes, 3 * n};
    return Variable::record(
        info, Y, {a, s}, {S.clone(), scalarGrad ? X : Tensor()},
        [](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const T scalar = saved[0].data<T>()[0];
          if (in[0].requiresGrad()) {
            Tensor G = Tensor::empty(gy.shape(), gy.dtype());
            ops::scaleInto<T>(G, gy, scalar);
            in[0].addGrad(G);
          }
          if (in[1].requiresGrad()) {
            // sum(g * a) in chunks fixed by the size (partial sums added in chunk order): the same bits on any
            // number of threads.
            const int64_t n = gy.numel(), chunk = kGrainWork;
            const int64_t chunks = (n + chunk - 1) / chunk;
            std::vector<T> partial(static_cast<size_t>(std::max<int64_t>(chunks, 1)), T(0));
            const T* g = gy.data<T>();
            const T* x = saved[1].data<T>();
            parallelFor(n, chunk, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
              partial[static_cast<size_t>(b / chunk)] =
                  ops::laneSum<T>(e - b, [g, x, b](T& acc, int64_t j) { acc = ops::mulAdd(g[b + j], x[b + j], acc); });
            });
            T total = T(0);
            for (T p : partial) total += p;
            Tensor GS = Tensor::empty(in[1].shape(), gy.dtype());
            GS.data<T>()[0] = total;
            in[1].addGrad(GS);
          }
        });
  });
}

}  // namespace gnn
