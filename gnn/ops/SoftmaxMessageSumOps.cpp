// softmaxMessageSum: GENConv's messages and their softmax aggregation in one op (ops/Ops.h). Each target's
// messages are made in a per-thread block from the source rows (and the edge rows, best given in target order),
// exponentiated there by the vector exp, and summed; only the [N, F] sums are kept for the backward, which makes
// the messages (and their maxima) again. Each target reads its edges in edge order and each source its gradient rows
// in edge order: the same bits for any thread count.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "gnn/ops/IndexPlan.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {

struct SoftmaxShape {
  int64_t N = 0, E = 0, F = 0, numOut = 0;
  double eps = 0;
  bool perChannelT = false;
};

// m = relu(x + e) + eps and z = t m over a row (e may be null; t one value or F).
template <class T>
inline void makeMessage(const T* __restrict x, const T* __restrict e, const T* __restrict t, bool perChannel,
                        T eps, int64_t F, T* __restrict m, T* __restrict z) {
  for (int64_t c = 0; c < F; ++c) {
    const T pre = e ? x[c] + e[c] : x[c];
    m[c] = (pre > T(0) ? pre : T(0)) + eps;
    z[c] = (perChannel ? t[c] : t[0]) * m[c];
  }
}

// A target's messages into M and their exponentials exp(t m - max) into Z (deg x F each); mx gets the maxima.
template <class T>
GNN_CPU_CLONES void targetBlock(const SoftmaxShape& s, const ops::IndexPlan& byDst, const int64_t* src,
                                const T* x, const T* ed, const T* t, int64_t i, std::vector<T>& M,
                                std::vector<T>& Z, T* mx) {
  const int64_t F = s.F, lo = byDst.ptr[i], deg = byDst.ptr[i + 1] - lo;
  if (static_cast<int64_t>(M.size()) < deg * F) {
    M.resize(static_cast<size_t>(deg * F));
    Z.resize(static_cast<size_t>(deg * F));
  }
  for (int64_t c = 0; c < F; ++c) mx[c] = -std::numeric_limits<T>::infinity();
  for (int64_t r = 0; r < deg; ++r) {
    const int64_t id = byDst.perm[lo + r];
    makeMessage(x + src[id] * F, ed ? ed + id * F : nullptr, t, s.perChannelT, static_cast<T>(s.eps), F,
                M.data() + r * F, Z.data() + r * F);
    const T* z = Z.data() + r * F;
    for (int64_t c = 0; c < F; ++c) mx[c] = std::max(mx[c], z[c]);
  }
  for (int64_t r = 0; r < deg; ++r) {
    T* z = Z.data() + r * F;
    for (int64_t c = 0; c < F; ++c) z[c] -= mx[c];
  }
  ops::vectorBlocks(deg * F, [](auto v) { return v.exp(); }, Z.data(), Z.data());
}

// Forward over targets [b, e): out, the maxima MX and the sums S ([N, F] each).
template <class T>
GNN_CPU_CLONES void softmaxTargets(const SoftmaxShape& s, const ops::IndexPlan& byDst, const int64_t* src,
                                   const T* x, const T* ed, const T* t, T* out, T* MX, T* S, int64_t b,
                                   int64_t e) {
  const int64_t F = s.F;
  std::vector<T> M, Z;
  for (int64_t i = b; i < e; ++i) {
    if (i + 1 < e)
      for (int64_t q = byDst.ptr[i + 1]; q < byDst.ptr[i + 2]; ++q) {
        ops::prefetchRow(x + src[byDst.perm[q]] * F, F);
        if (ed) ops::prefetchRow(ed + byDst.perm[q] * F, F);
      }
    const int64_t deg = byDst.ptr[i + 1] - byDst.ptr[i];
    if (deg == 0) continue;
    T *mx = MX + i * F, *sum = S + i * F, *o = out + i * F;
    targetBlock(s, byDst, src, x, ed, t, i, M, Z, mx);
    for (int64_t r = 0; r < deg; ++r) {
      const T *z = Z.data() + r * F, *m = M.data() + r * F;
      for (int64_t c = 0; c < F; ++c) {
        sum[c] += z[c];
        o[c] = ops::mulAdd(z[c], m[c], o[c]);
      }
    }
    for (int64_t c = 0; c < F; ++c) o[c] /= sum[c];
  }
}

// One edge's gradients: d pre = g alpha (1 + t (m - out)) where pre > 0, and into dt g alpha m (m - out), with
// alpha = z / S. A function of restrict-qualified rows so GCC vectorises it; HasEdge and WantT fixed per call.
template <class T, bool HasEdge, bool WantT>
inline void edgeGradient(const T* __restrict z, const T* __restrict m, const T* __restrict xj, const T* __restrict er,
                         const T* __restrict sum, const T* __restrict tv, const T* __restrict o,
                         const T* __restrict gi, T* __restrict d, T* __restrict dt, int64_t F) {
  for (int64_t c = 0; c < F; ++c) {
    const T ga = gi[c] * (z[c] / sum[c]), diff = m[c] - o[c];
    const T pre = HasEdge ? xj[c] + er[c] : xj[c];
    d[c] = pre > T(0) ? ga * (T(1) + tv[c] * diff) : T(0);
    if (WantT) dt[c] = ops::mulAdd(ga * m[c], diff, dt[c]);
  }
}

// Backward over targets [b, e): the pre-activation gradients DPRE [E, F] (by edge id) and each target's part
// of the temperature's gradient DT [N, F] (when wanted). With alpha = z / S and out the forward's output: d m
// = g alpha (1 + t (m - out)), d t = g alpha m (m - out), d pre = d m where pre > 0.
template <class T, bool HasEdge, bool WantT>
GNN_CPU_CLONES void softmaxGradients(const SoftmaxShape& s, const ops::IndexPlan& byDst, const int64_t* src,
                                     const T* x, const T* ed, const T* t, const T* out, const T* S,
                                     const T* g, T* DPRE, T* DT, int64_t b, int64_t e) {
  const int64_t F = s.F;
  std::vector<T> M, Z, mx(static_cast<size_t>(F)), tv(static_cast<size_t>(F));
  for (int64_t c = 0; c < F; ++c) tv[static_cast<size_t>(c)] = s.perChannelT ? t[c] : t[0];
  for (int64_t i = b; i < e; ++i) {
    const int64_t lo = byDst.ptr[i], deg = byDst.ptr[i + 1] - lo;
    if (deg == 0) continue;
    targetBlock(s, byDst, src, x, ed, t, i, M, Z, mx.data());
    for (int64_t r = 0; r < deg; ++r) {
      const int64_t id = byDst.perm[lo + r];
      edgeGradient<T, HasEdge, WantT>(Z.data() + r * F, M.data() + r * F, x + src[id] * F,
                                      HasEdge ? ed + id * F : nullptr, S + i * F, tv.data(), out + i * F, g + i * F,
                                      DPRE + id * F, WantT ? DT + i * F : nullptr, F);
    }
  }
}

// out[j] = sum over j's edges (in edge order) of rows[id], the next source's rows asked for ahead.
template <class T>
GNN_CPU_CLONES void sumBySource(const ops::IndexPlan& bySrc, const T* rows, int64_t F, T* out, int64_t b, int64_t e) {
  for (int64_t j = b; j < e; ++j) {
    if (j + 1 < e)
      for (int64_t q = bySrc.ptr[j + 1]; q < bySrc.ptr[j + 2]; ++q) ops::prefetchRow(rows + bySrc.perm[q] * F, F);
    T* __restrict o = out + j * F;
    for (int64_t q = bySrc.ptr[j]; q < bySrc.ptr[j + 1]; ++q) {
      const T* __restrict r = rows + bySrc.perm[q] * F;
      for (int64_t c = 0; c < F; ++c) o[c] += r[c];
    }
  }
}

}  // namespace

Variable softmaxMessageSum(const Variable& x, const Variable& edge, const Tensor& edgeIndex, int64_t numNodes,
                           double eps, const Variable& t) {
  const Tensor& X = x.value();
  ops::checkEdgeIndex("softmaxMessageSum", edgeIndex);
  GNN_CHECK_ARG(X.rank() == 2 && X.isFloating(), "softmaxMessageSum: x must be float [N, F], got ",
                shapeString(X.shape()));
  SoftmaxShape s;
  s.N = X.dim(0);
  s.E = edgeIndex.dim(1);
  s.F = X.dim(1);
  s.numOut = numNodes;
  s.eps = eps;
  GNN_CHECK_ARG(!edge.defined() || (edge.value().shape() == Shape{s.E, s.F} && edge.value().dtype() == X.dtype()),
                "softmaxMessageSum: edge terms must be [", s.E, ", ", s.F, "] of x's dtype, got ",
                edge.defined() ? shapeString(edge.value().shape()) : std::string());
  GNN_CHECK_ARG(t.defined() && t.value().dtype() == X.dtype() && t.value().rank() == 1 &&
                    (t.value().numel() == 1 || t.value().numel() == s.F),
                "softmaxMessageSum: the temperature must be [1] or [", s.F, "] of x's dtype");
  s.perChannelT = t.value().numel() == s.F && s.F != 1;
  Tensor srcs = ops::indexValues("softmaxMessageSum (source)", edgeIndex.slice(0, 1).reshape({s.E}), s.N);
  Tensor dsts = ops::indexValues("softmaxMessageSum (target)", edgeIndex.slice(1, 2).reshape({s.E}), numNodes);
  auto byDst = std::make_shared<ops::IndexPlan>(ops::planFor(dsts, numNodes));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t F = s.F;
    const Tensor ED = edge.defined() ? edge.value() : Tensor(), TV = t.value();
    Tensor Y = Tensor::zeros({numNodes, F}, X.dtype()), MX = Tensor::zeros({numNodes, F}, X.dtype()),
           S = Tensor::zeros({numNodes, F}, X.dtype());
    const int64_t perNode = std::max<int64_t>(1, s.E / std::max<int64_t>(numNodes, 1));
    parallelFor(numNodes, grainFor(perNode * F * 8), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      softmaxTargets<T>(s, *byDst, srcs.data<int64_t>(), X.data<T>(), edge.defined() ? ED.data<T>() : nullptr,
                        TV.data<T>(), Y.data<T>(), MX.data<T>(), S.data<T>(), b, e);
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T)), EF = s.E * F;
    OpInfo info{"softmaxMessageSum", 8 * EF, s.E * (16 + F * elem) + (edge.defined() ? EF * elem : 0) + s.N * F * elem,
                3 * numNodes * F * elem, 20 * EF};
    std::vector<Variable> inputs = {x, t};
    std::vector<Tensor> saved = {X, TV, srcs, dsts, Y, S};  // the maxima are made again with the messages
    if (edge.defined()) {
      inputs.push_back(edge);
      saved.push_back(ED);
    }
    return Variable::record(info, Y, inputs, saved,
                            [byDst, s](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& sv) {
      const int64_t F = s.F;
      const bool hasEdge = sv.size() > 6;
      const T* ed = hasEdge ? sv[6].data<T>() : nullptr;
      const bool wantT = in[1].requiresGrad();
      Tensor DPRE = Tensor::empty({s.E, F}, gy.dtype());
      Tensor DT = wantT ? Tensor::zeros({s.numOut, F}, gy.dtype()) : Tensor();
      const int64_t perNode = std::max<int64_t>(1, s.E / std::max<int64_t>(s.numOut, 1));
      // Edges into no target of the output do not exist (every target id < numOut), so every DPRE row is written.
      auto run = [&](auto hasEdge, auto wantTc) {
        parallelFor(s.numOut, grainFor(perNode * F * 12), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
          softmaxGradients<T, decltype(hasEdge)::value, decltype(wantTc)::value>(
              s, *byDst, sv[2].data<int64_t>(), sv[0].data<T>(), ed, sv[1].data<T>(), sv[4].data<T>(), sv[5].data<T>(),
              gy.data<T>(), DPRE.data<T>(), wantT ? DT.data<T>() : nullptr, b, e);
        });
      };
      if (hasEdge && wantT) run(std::true_type{}, std::true_type{});
      if (hasEdge && !wantT) run(std::true_type{}, std::false_type{});
      if (!hasEdge && wantT) run(std::false_type{}, std::true_type{});
      if (!hasEdge && !wantT) run(std::false_type{}, std::false_type{});
      if (in[0].requiresGrad()) {
        Tensor srcT = sv[2];
        const ops::IndexPlan bySrc = ops::planFor(srcT, s.N);
        Tensor DX = Tensor::zeros({s.N, F}, gy.dtype());
        parallelFor(s.N, grainFor(perNode * F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
          sumBySource<T>(bySrc, DPRE.data<T>(), F, DX.data<T>(), b, e);
        });
        in[0].addGrad(DX);
      }
      if (wantT) {
        // The targets' parts summed in target order (one thread: the same bits for any thread count).
        Tensor GT = Tensor::zeros(in[1].shape(), gy.dtype());
        T* gt = GT.data<T>();
        const T* dt = DT.data<T>();
        for (int64_t i = 0; i < s.numOut; ++i)
          for (int64_t c = 0; c < F; ++c) gt[s.perChannelT ? c : 0] += dt[i * F + c];
        in[1].addGrad(GT);
      }
      if (hasEdge && in[2].requiresGrad()) in[2].addGrad(DPRE);
    });
  });
}

}  // namespace gnn
