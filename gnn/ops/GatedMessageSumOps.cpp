// gatedMessageSum: ResGatedGraphConv's messages and their sum in one op (ops/Ops.h): no [E, F] gate, message or
// gradient tensors, each edge's gate recomputed where needed. The forward sums each target's edges in edge
// order; the backward sums the key gradient per target and the query and value gradients per source, each in
// edge order: the same bits for any thread count.
#include <Eigen/Core>
#include <utility>

#include "gnn/ops/IndexPlan.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {
// s = sigmoid(a + b) over a row of F (vectorBlocks: Lanes in float32, the CPU's widest vectors in any build; every
// element takes the vector code whatever its position, so padding changes no bit).
template <class T>
inline void sigmoidOfSum(const T* a, const T* b, Eigen::Array<T, Eigen::Dynamic, 1>& s) {
  ops::vectorBlocks<T>(s.size(), [](auto x, auto y) { return (T(1) + (-(x + y)).exp()).inverse(); }, s.data(), a, b);
}
}  // namespace

Variable gatedMessageSum(const Variable& k, const Variable& q, const Variable& v, const Tensor& edgeIndex) {
  const Tensor &K = k.value(), &Q = q.value(), &V = v.value();
  ops::checkEdgeIndex("gatedMessageSum", edgeIndex);
  GNN_CHECK_ARG(K.rank() == 2 && Q.shape() == K.shape() && V.shape() == K.shape() && K.isFloating() &&
                    Q.dtype() == K.dtype() && V.dtype() == K.dtype(),
                "gatedMessageSum: k ", shapeString(K.shape()), ", q ", shapeString(Q.shape()), " and v ",
                shapeString(V.shape()), " must be one float [N, F] shape");
  const int64_t N = K.dim(0), E = edgeIndex.dim(1);
  Tensor srcs = ops::indexValues("gatedMessageSum (source)", edgeIndex.slice(0, 1).reshape({E}), N);
  Tensor dsts = ops::indexValues("gatedMessageSum (target)", edgeIndex.slice(1, 2).reshape({E}), N);
  auto byDst = std::make_shared<ops::IndexPlan>(ops::planFor(dsts, N));
  return dispatchFloat(K.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
    const int64_t F = K.dim(1);
    Tensor Y = Tensor::zeros({N, F}, K.dtype());
    const T *kp = K.data<T>(), *qp = Q.data<T>(), *vp = V.data<T>();
    const int64_t* src = srcs.data<int64_t>();
    T* y = Y.data<T>();
    const int64_t perNode = std::max<int64_t>(1, E / std::max<int64_t>(N, 1));
    parallelFor(N, grainFor(perNode * F * 8), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      Arr gate(F);
      for (int64_t i = b; i < e; ++i) {
        T* o = y + i * F;
        for (int64_t t = byDst->ptr[i]; t < byDst->ptr[i + 1]; ++t) {
          const int64_t j = src[byDst->perm[t]];
          sigmoidOfSum(kp + i * F, qp + j * F, gate);
          const T* vj = vp + j * F;
          for (int64_t c = 0; c < F; ++c) o[c] = ops::mulAdd(gate[c], vj[c], o[c]);
        }
      }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"gatedMessageSum", 16 * E * F, E * (16 + 2 * F * elem) + N * F * elem, N * F * elem, 30 * E * F};
    return Variable::record(
        info, Y, {k, q, v}, {K, Q, V, srcs, dsts},
        [byDst, N, F](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const T *kp = saved[0].data<T>(), *qp = saved[1].data<T>(), *vp = saved[2].data<T>();
          const int64_t *src = saved[3].data<int64_t>(), *dst = saved[4].data<int64_t>();
          const T* g = gy.data<T>();
          const int64_t E = saved[3].numel();
          const int64_t perNode = std::max<int64_t>(1, E / std::max<int64_t>(N, 1));
          // d pre-activation of edge j -> i: g_i v_j s (1 - s), s = sigmoid(k_i + q_j); the key's gradient sums
          // it over i's edges, the query's over j's; the value's gradient sums g_i s over j's edges.
          Tensor DK = Tensor::zeros({N, F}, gy.dtype());
          T* dk = DK.data<T>();
          parallelFor(N, grainFor(perNode * F * 10), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
            Arr s(F);
            for (int64_t i = b; i < e; ++i) {
              T* o = dk + i * F;
              const T* gi = g + i * F;
              for (int64_t t = byDst->ptr[i]; t < byDst->ptr[i + 1]; ++t) {
                const int64_t j = src[byDst->perm[t]];
                sigmoidOfSum(kp + i * F, qp + j * F, s);
                const T* vj = vp + j * F;
                for (int64_t c = 0; c < F; ++c) o[c] = ops::mulAdd(gi[c] * vj[c], s[c] * (T(1) - s[c]), o[c]);
              }
            }
          });
          Tensor srcT = saved[3];
          const ops::IndexPlan bySrc = ops::planFor(srcT, N);
          Tensor DQ = Tensor::zeros({N, F}, gy.dtype()), DV = Tensor::zeros({N, F}, gy.dtype());
          T *dq = DQ.data<T>(), *dv = DV.data<T>();
          parallelFor(N, grainFor(perNode * F * 12), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
            Arr s(F);
            for (int64_t j = b; j < e; ++j) {
              T *oq = dq + j * F, *ov = dv + j * F;
              const T* vj = vp + j * F;
              for (int64_t t = bySrc.ptr[j]; t < bySrc.ptr[j + 1]; ++t) {
                const int64_t i = dst[bySrc.perm[t]];
                sigmoidOfSum(kp + i * F, qp + j * F, s);
                const T* gi = g + i * F;
                for (int64_t c = 0; c < F; ++c) {
                  const T gs = gi[c] * s[c];
                  ov[c] += gs;
                  oq[c] = ops::mulAdd(gs * vj[c], T(1) - s[c], oq[c]);
                }
              }
            }
          });
          in[0].addGrad(DK);
          in[1].addGrad(DQ);
          in[2].addGrad(DV);
        });
  });
}

}  // namespace gnn
