// filmMessageSum: FiLMConv's modulated messages and their sum or mean in one op (ops/Ops.h): no [E, F] gathered
// rows, messages or gradients; each edge's pre-activation made again where the backward needs it. The forward
// and the beta / gamma gradients read each target's edges in edge order, the h gradient each source's: the same
// bits for any thread count.
#include <vector>

#include "gnn/ops/IndexPlan.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {

// o += relu(gamma * h + beta) over a row.
template <class T>
inline void addMessage(T* __restrict o, const T* __restrict beta, const T* __restrict gamma, const T* __restrict h,
                       int64_t F) {
  for (int64_t c = 0; c < F; ++c) {
    const T pre = ops::mulAdd(gamma[c], h[c], beta[c]);
    o[c] += pre > T(0) ? pre : T(0);
  }
}

// Where gamma * h + beta > 0: db += gs, dg += gs * h (gs = the target's gradient, scaled by 1 / degree for a mean).
template <class T>
inline void targetGrads(T* __restrict db, T* __restrict dg, const T* __restrict beta, const T* __restrict gamma,
                        const T* __restrict h, const T* __restrict gs, int64_t F) {
  for (int64_t c = 0; c < F; ++c) {
    const T on = ops::mulAdd(gamma[c], h[c], beta[c]) > T(0) ? gs[c] : T(0);
    db[c] += on;
    dg[c] = ops::mulAdd(on, h[c], dg[c]);
  }
}

// Where gamma * h + beta > 0: dh += gs * gamma.
template <class T>
inline void sourceGrad(T* __restrict dh, const T* __restrict beta, const T* __restrict gamma, const T* __restrict h,
                       const T* __restrict gs, int64_t F) {
  for (int64_t c = 0; c < F; ++c) {
    const T on = ops::mulAdd(gamma[c], h[c], beta[c]) > T(0) ? gs[c] : T(0);
    dh[c] = ops::mulAdd(on, gamma[c], dh[c]);
  }
}

}  // namespace

Variable filmMessageSum(const Variable& beta, const Variable& gamma, const Variable& h, const Tensor& edgeIndex,
                        bool mean) {
  const Tensor &B = beta.value(), &G = gamma.value(), &H = h.value();
  ops::checkEdgeIndex("filmMessageSum", edgeIndex);
  GNN_CHECK_ARG(H.rank() == 2 && B.shape() == H.shape() && G.shape() == H.shape() && H.isFloating() &&
                    B.dtype() == H.dtype() && G.dtype() == H.dtype(),
                "filmMessageSum: beta ", shapeString(B.shape()), ", gamma ", shapeString(G.shape()), " and h ",
                shapeString(H.shape()), " must be one float [N, F] shape");
  const int64_t N = H.dim(0), E = edgeIndex.dim(1), F = H.dim(1);
  Tensor srcs = ops::indexValues("filmMessageSum (source)", edgeIndex.slice(0, 1).reshape({E}), N);
  Tensor dsts = ops::indexValues("filmMessageSum (target)", edgeIndex.slice(1, 2).reshape({E}), N);
  auto byDst = std::make_shared<ops::IndexPlan>(ops::planFor(dsts, N));
  return dispatchFloat(H.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::zeros({N, F}, H.dtype());
    const T *bp = B.data<T>(), *gp = G.data<T>(), *hp = H.data<T>();
    const int64_t* src = srcs.data<int64_t>();
    T* y = Y.data<T>();
    const int64_t perNode = std::max<int64_t>(1, E / std::max<int64_t>(N, 1));
    parallelFor(N, grainFor(perNode * F * 4), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      for (int64_t i = b; i < e; ++i) {
        if (i + 1 < e)
          for (int64_t t = byDst->ptr[i + 1]; t < byDst->ptr[i + 2]; ++t) ops::prefetchRow(hp + src[byDst->perm[t]] * F, F);
        T* o = y + i * F;
        for (int64_t t = byDst->ptr[i]; t < byDst->ptr[i + 1]; ++t)
          addMessage(o, bp + i * F, gp + i * F, hp + src[byDst->perm[t]] * F, F);
        const int64_t deg = byDst->ptr[i + 1] - byDst->ptr[i];
        if (mean && deg > 1)
          for (int64_t c = 0; c < F; ++c) o[c] /= static_cast<T>(deg);
      }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"filmMessageSum", 3 * E * F, E * (16 + F * elem) + 3 * N * F * elem, N * F * elem, 8 * E * F};
    return Variable::record(
        info, Y, {beta, gamma, h}, {B, G, H, srcs, dsts},
        [byDst, N, F, mean](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const T *bp = saved[0].data<T>(), *gp = saved[1].data<T>(), *hp = saved[2].data<T>();
          const int64_t *src = saved[3].data<int64_t>(), *dst = saved[4].data<int64_t>();
          const int64_t E = saved[3].numel();
          const int64_t perNode = std::max<int64_t>(1, E / std::max<int64_t>(N, 1));
          // The gradient each target passes to its messages: g, or g / degree for a mean.
          Tensor GS = mean ? Tensor::empty({N, F}, gy.dtype()) : gy;
          if (mean) {
            const T* g = gy.data<T>();
            T* gs = GS.data<T>();
            for (int64_t i = 0; i < N; ++i) {
              const T inv = T(1) / static_cast<T>(std::max<int64_t>(1, byDst->ptr[i + 1] - byDst->ptr[i]));
              for (int64_t c = 0; c < F; ++c) gs[i * F + c] = g[i * F + c] * inv;
            }
          }
          const T* gs = GS.data<T>();
          Tensor DB = Tensor::zeros({N, F}, gy.dtype()), DG = Tensor::zeros({N, F}, gy.dtype());
          parallelFor(N, grainFor(perNode * F * 4), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
            for (int64_t i = b; i < e; ++i)
              for (int64_t t = byDst->ptr[i]; t < byDst->ptr[i + 1]; ++t)
                targetGrads(DB.data<T>() + i * F, DG.data<T>() + i * F, bp + i * F, gp + i * F,
                            hp + src[byDst->perm[t]] * F, gs + i * F, F);
          });
          if (in[2].requiresGrad()) {
            Tensor srcT = saved[3];
            const ops::IndexPlan bySrc = ops::planFor(srcT, N);
            Tensor DH = Tensor::zeros({N, F}, gy.dtype());
            parallelFor(N, grainFor(perNode * F * 4), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
              for (int64_t j = b; j < e; ++j) {
                if (j + 1 < e)
                  for (int64_t t = bySrc.ptr[j + 1]; t < bySrc.ptr[j + 2]; ++t) {
                    const int64_t i = dst[bySrc.perm[t]];
                    ops::prefetchRow(bp + i * F, F);
                    ops::prefetchRow(gp + i * F, F);
                    ops::prefetchRow(gs + i * F, F);
                  }
                for (int64_t t = bySrc.ptr[j]; t < bySrc.ptr[j + 1]; ++t) {
                  const int64_t i = dst[bySrc.perm[t]];
                  sourceGrad(DH.data<T>() + j * F, bp + i * F, gp + i * F, hp + j * F, gs + i * F, F);
                }
              }
            });
            in[2].addGrad(DH);
          }
          in[0].addGrad(DB);
          in[1].addGrad(DG);
        });
  });
}

}  // namespace gnn
