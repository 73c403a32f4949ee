// weightedMessageSum: a message sum with one weight per edge (ops/Ops.h): FAConv's attention-weighted sum and
// EGConv's symnorm, without the [E, F] gathered rows and products. The forward sums each target's edges in edge
// order; the backward sums x's gradient per source in edge order and takes each edge weight's gradient as one dot
// product: the same bits for any thread count.
#include <algorithm>
#include <memory>

#include "gnn/ops/IndexPlan.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

Variable weightedMessageSum(const Variable& x, const Variable& weight, const Tensor& edgeIndex, int64_t numNodes) {
  const Tensor &X = x.value(), &W = weight.value();
  ops::checkEdgeIndex("weightedMessageSum", edgeIndex);
  const int64_t E = edgeIndex.dim(1);
  GNN_CHECK_ARG(X.rank() == 2 && X.isFloating() && W.numel() == E && W.dtype() == X.dtype(),
                "weightedMessageSum: x ", shapeString(X.shape()), " and weights ", shapeString(W.shape()), " for ", E,
                " edges (one weight per edge, x's float dtype)");
  Tensor srcs = ops::indexValues("weightedMessageSum (source)", edgeIndex.slice(0, 1).reshape({E}), X.dim(0));
  Tensor dsts = ops::indexValues("weightedMessageSum (target)", edgeIndex.slice(1, 2).reshape({E}), numNodes);
  auto byDst = std::make_shared<ops::IndexPlan>(ops::planFor(dsts, numNodes));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t F = X.dim(1), numX = X.dim(0);
    Tensor Y = Tensor::zeros({numNodes, F}, X.dtype());
    const T *xp = X.data<T>(), *wp = W.data<T>();
    const int64_t* src = srcs.data<int64_t>();
    T* y = Y.data<T>();
    const int64_t perNode = std::max<int64_t>(1, E / std::max<int64_t>(numNodes, 1));
    parallelFor(numNodes, grainFor(perNode * F * 2), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      for (int64_t i = b; i < e; ++i) {
        T* o = y + i * F;
        for (int64_t t = byDst->ptr[i]; t < byDst->ptr[i + 1]; ++t) {
          const int64_t edge = byDst->perm[t];
          const T w = wp[edge];
          const T* xj = xp + src[edge] * F;
          for (int64_t c = 0; c < F; ++c) o[c] = ops::mulAdd(w, xj[c], o[c]);
        }
      }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"weightedMessageSum", 2 * E * F, E * (16 + (F + 1) * elem), numNodes * F * elem, 4 * E * F};
    return Variable::record(
        info, Y, {x, weight}, {X, W, srcs, dsts},
        [numX, F](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const T *xp = saved[0].data<T>(), *wp = saved[1].data<T>(), *g = gy.data<T>();
          const int64_t *src = saved[2].data<int64_t>(), *dst = saved[3].data<int64_t>();
          const int64_t E = saved[2].numel();
          if (in[0].requiresGrad()) {
            const ops::IndexPlan bySrc = ops::planFor(saved[2], numX);
            Tensor DX = Tensor::zeros({numX, F}, gy.dtype());
            T* dx = DX.data<T>();
            const int64_t perNode = std::max<int64_t>(1, E / std::max<int64_t>(numX, 1));
            parallelFor(numX, grainFor(perNode * F * 2), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
              for (int64_t j = b; j < e; ++j) {
                T* o = dx + j * F;
                for (int64_t t = bySrc.ptr[j]; t < bySrc.ptr[j + 1]; ++t) {
                  const int64_t edge = bySrc.perm[t];
                  const T w = wp[edge];
                  const T* gi = g + dst[edge] * F;
                  for (int64_t c = 0; c < F; ++c) o[c] = ops::mulAdd(w, gi[c], o[c]);
                }
              }
            });
            in[0].addGrad(DX);
          }
          if (in[1].requiresGrad()) {
            Tensor DW = Tensor::empty(saved[1].shape(), gy.dtype());
            T* dw = DW.data<T>();
            parallelFor(E, grainFor(2 * F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
              for (int64_t edge = b; edge < e; ++edge) {
                const T *gi = g + dst[edge] * F, *xj = xp + src[edge] * F;
                dw[edge] = ops::laneSum<T>(F, [&](T& acc, int64_t c) { acc = ops::mulAdd(gi[c], xj[c], acc); });
              }
            });
            in[1].addGrad(DW);
          }
        });
  });
}

}  // namespace gnn
