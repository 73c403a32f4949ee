// Graph attention ops (GraphAttention.h): GAT's and GATv2's fused attention, per-head dot products, the edge
// features of added self-loops. The attention runs per target row over the edges grouped by target (each
// row's logits, maximum, exponentials, sum and weighted sum of source rows in edge order, then the self term);
// the backward's source-side sums run per source row over the edges grouped by source. No atomics: every
// output row is written by one thread in a fixed order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "gnn/ops/GraphAttention.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using ops::mulAdd;

// The edges an attention reads, grouped by target and by source (edge ids in edge order). With self-loops
// added, the graph's own self-loop edges are in neither group: they carry no weight, as if PyG had removed them.
struct EdgeGroups {
  Tensor src, dst;            // int64 [E], checked against the node count
  Tensor dstPtr, dstEdges;    // [N + 1], [kept edges]
  Tensor srcPtr, srcEdges;    // [N + 1], [kept edges]
  std::vector<Tensor> tensors() const { return {src, dst, dstPtr, dstEdges, srcPtr, srcEdges}; }
  static EdgeGroups from(const std::vector<Tensor>& saved, size_t at) {
    return {saved[at], saved[at + 1], saved[at + 2], saved[at + 3], saved[at + 4], saved[at + 5]};
  }
};

Tensor edgeRowValues(const char* op, const Tensor& edgeIndex, int row, int64_t numNodes) {
  const int64_t E = edgeIndex.dim(1);
  const Tensor r = edgeIndex.slice(row, row + 1).reshape({E});
  Tensor out = Tensor::empty({E}, DType::I64);
  const int64_t* p = std::as_const(r).data<int64_t>();
  int64_t* o = out.data<int64_t>();
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(p[e] >= 0 && p[e] < numNodes, op, ": edge ", e, " has ", row == 0 ? "source " : "target ", p[e],
                  ", outside the ", numNodes, " nodes");
    o[e] = p[e];
  }
  return out;
}

// Counting sort of the kept edges by key (stable: edge order within a group).
void groupBy(const int64_t* key, const std::vector<uint8_t>& kept, int64_t N, Tensor& ptr, Tensor& edges) {
  const int64_t E = static_cast<int64_t>(kept.size());
  ptr = Tensor({N + 1}, DType::I64);
  int64_t* p = ptr.data<int64_t>();
  for (int64_t e = 0; e < E; ++e)
    if (kept[e]) ++p[key[e] + 1];
  for (int64_t r = 0; r < N; ++r) p[r + 1] += p[r];
  edges = Tensor::empty({p[N]}, DType::I64);
  int64_t* out = edges.data<int64_t>();
  std::vector<int64_t> next(p, p + N);
  for (int64_t e = 0; e < E; ++e)
    if (kept[e]) out[next[key[e]]++] = e;
}

EdgeGroups groupEdges(const char* op, const Tensor& edgeIndex, int64_t N, bool selfLoops) {
  GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64, op,
                ": edge_index must be int64 [2, E], got ", dtypeName(edgeIndex.dtype()), " ",
                shapeString(edgeIndex.shape()));
  EdgeGroups g;
  g.src = edgeRowValues(op, edgeIndex, 0, N);
  g.dst = edgeRowValues(op, edgeIndex, 1, N);
  const int64_t E = g.src.numel();
  const int64_t* s = std::as_const(g.src).data<int64_t>();
  const int64_t* d = std::as_const(g.dst).data<int64_t>();
  std::vector<uint8_t> kept(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) kept[e] = !(selfLoops && s[e] == d[e]);
  groupBy(d, kept, N, g.dstPtr, g.dstEdges);
  groupBy(s, kept, N, g.srcPtr, g.srcEdges);
  return g;
}

// Raw views of one call's groups and sizes.
template <class T>
struct Layout {
  int64_t N = 0, E = 0, H = 0, C = 0;
  bool selfLoops = true;
  const int64_t *src = nullptr, *dst = nullptr, *dstPtr = nullptr, *dstEdges = nullptr, *srcPtr = nullptr,
                *srcEdges = nullptr;
  const T* maskEdges = nullptr;  // [E, H], null = all 1
  const T* maskSelf = nullptr;   // [N, H]
  Layout(const EdgeGroups& g, int64_t n, int64_t h, int64_t c, bool loops, const Tensor& me, const Tensor& ms)
      : N(n), E(g.src.numel()), H(h), C(c), selfLoops(loops) {
    src = g.src.data<int64_t>();
    dst = g.dst.data<int64_t>();
    dstPtr = g.dstPtr.data<int64_t>();
    dstEdges = g.dstEdges.data<int64_t>();
    srcPtr = g.srcPtr.data<int64_t>();
    srcEdges = g.srcEdges.data<int64_t>();
    maskEdges = me.defined() ? me.data<T>() : nullptr;
    maskSelf = ms.defined() ? ms.data<T>() : nullptr;
  }
  // Rows per parallel chunk of a per-row loop doing `perTerm` work for each of its terms.
  int64_t chunk(int64_t perTerm) const { return rowChunk(N, (E / std::max<int64_t>(N, 1) + 1) * perTerm); }
  T keep(int64_t edge, int64_t h) const { return maskEdges ? maskEdges[edge * H + h] : T(1); }
  T keepSelf(int64_t i, int64_t h) const { return maskSelf ? maskSelf[i * H + h] : T(1); }
};

template <class T>
inline void axpy(T* __restrict o, T w, const T* __restrict x, int64_t n) {
  for (int64_t c = 0; c < n; ++c) o[c] = mulAdd(w, x[c], o[c]);
}
template <class T>
inline T dotRow(const T* __restrict a, const T* __restrict b, int64_t n) {
  T acc = 0;
  for (int64_t c = 0; c < n; ++c) acc = mulAdd(a[c], b[c], acc);
  return acc;
}
template <class T>
inline T leaky(T z, T slope) {
  return z > T(0) ? z : z * slope;
}

// Softmax over one target's terms for each head, in place: alpha holds the logits on entry (edge rows, and
// the self row when there is one).
template <class T>
void softmaxRow(const Layout<T>& L, int64_t i, T* alpha, T* alphaSelf) {
  const int64_t lo = L.dstPtr[i], hi = L.dstPtr[i + 1], H = L.H;
  for (int64_t h = 0; h < H; ++h) {
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t k = lo; k < hi; ++k) m = std::max(m, alpha[L.dstEdges[k] * H + h]);
    if (L.selfLoops) m = std::max(m, alphaSelf[i * H + h]);
    T z = 0;
    for (int64_t k = lo; k < hi; ++k) {
      T& a = alpha[L.dstEdges[k] * H + h];
      a = std::exp(a - m);
      z += a;
    }
    if (L.selfLoops) {
      T& a = alphaSelf[i * H + h];
      a = std::exp(a - m);
      z += a;
    }
    for (int64_t k = lo; k < hi; ++k) alpha[L.dstEdges[k] * H + h] /= z;
    if (L.selfLoops) alphaSelf[i * H + h] /= z;
  }
}

// The forward of both attentions: logits(i, e, l) writes the H logits of edge e into target i (e < 0: i's
// self term); then each row's softmax and out[i] = sum of (dropped) attention times V's source rows.
template <class T, class Logits>
void attend(const Layout<T>& L, const T* V, Logits logits, T* alpha, T* alphaSelf, T* out) {
  const int64_t H = L.H, C = L.C, HC = H * C;
  parallelFor(L.N, L.chunk(3 * HC + 16 * H), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i) {
      const int64_t lo = L.dstPtr[i], hi = L.dstPtr[i + 1];
      for (int64_t k = lo; k < hi; ++k) logits(i, L.dstEdges[k], alpha + L.dstEdges[k] * H);
      if (L.selfLoops) logits(i, int64_t{-1}, alphaSelf + i * H);
      softmaxRow(L, i, alpha, alphaSelf);
      T* o = out + i * HC;
      std::fill(o, o + HC, T(0));
      for (int64_t k = lo; k < hi; ++k) {
        const int64_t edge = L.dstEdges[k];
        for (int64_t h = 0; h < H; ++h)
          axpy(o + h * C, alpha[edge * H + h] * L.keep(edge, h), V + L.src[edge] * HC + h * C, C);
      }
      if (L.selfLoops)
        for (int64_t h = 0; h < H; ++h)
          axpy(o + h * C, alphaSelf[i * H + h] * L.keepSelf(i, h), V + i * HC + h * C, C);
    }
  });
}

// The backward's target side: for each target row, the gradient of each term's logit (softmax backward of the
// dropped attention's gradient gy . V[source]) into dl / dlSelf, then rowDone(i, chunkBegin) in the same
// thread (the layer-specific gradients of the logit's parts).
template <class T, class RowDone>
void logitGrads(const Layout<T>& L, int64_t chunk, const T* V, const T* gy, const T* alpha, const T* alphaSelf, T* dl,
                T* dlSelf, RowDone rowDone) {
  const int64_t H = L.H, C = L.C, HC = H * C;
  parallelFor(L.N, chunk, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i) {
      const int64_t lo = L.dstPtr[i], hi = L.dstPtr[i + 1];
      const T* g = gy + i * HC;
      for (int64_t k = lo; k < hi; ++k) {
        const int64_t edge = L.dstEdges[k];
        for (int64_t h = 0; h < H; ++h)
          dl[edge * H + h] = dotRow(g + h * C, V + L.src[edge] * HC + h * C, C) * L.keep(edge, h);
      }
      if (L.selfLoops)
        for (int64_t h = 0; h < H; ++h)
          dlSelf[i * H + h] = dotRow(g + h * C, V + i * HC + h * C, C) * L.keepSelf(i, h);
      for (int64_t h = 0; h < H; ++h) {
        T s = 0;
        for (int64_t k = lo; k < hi; ++k) s = mulAdd(alpha[L.dstEdges[k] * H + h], dl[L.dstEdges[k] * H + h], s);
        if (L.selfLoops) s = mulAdd(alphaSelf[i * H + h], dlSelf[i * H + h], s);
        for (int64_t k = lo; k < hi; ++k) {
          const int64_t at = L.dstEdges[k] * H + h;
          dl[at] = alpha[at] * (dl[at] - s);
        }
        if (L.selfLoops) dlSelf[i * H + h] = alphaSelf[i * H + h] * (dlSelf[i * H + h] - s);
      }
      rowDone(i, b);
    }
  });
}

// The backward's source side: gV[j] = sum over j's outgoing terms of their (dropped) attention times gy at the
// target, then rowDone(j) adds the layer-specific sums of row j.
template <class T, class RowDone>
void sourceGrads(const Layout<T>& L, const T* gy, const T* alpha, const T* alphaSelf, T* gV, RowDone rowDone) {
  const int64_t H = L.H, C = L.C, HC = H * C;
  parallelFor(L.N, L.chunk(2 * HC), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t j = b; j < e; ++j) {
      T* o = gV + j * HC;
      std::fill(o, o + HC, T(0));
      for (int64_t k = L.srcPtr[j]; k < L.srcPtr[j + 1]; ++k) {
        const int64_t edge = L.srcEdges[k];
        for (int64_t h = 0; h < H; ++h)
          axpy(o + h * C, alpha[edge * H + h] * L.keep(edge, h), gy + L.dst[edge] * HC + h * C, C);
      }
      if (L.selfLoops)
        for (int64_t h = 0; h < H; ++h)
          axpy(o + h * C, alphaSelf[j * H + h] * L.keepSelf(j, h), gy + j * HC + h * C, C);
      rowDone(j);
    }
  });
}

// The dropout masks of the attention in training (else undefined): the edges' [E, H] and the self terms' [N, H],
// each its own stream, so that a real edge's or node's draw does not move when padding adds edges and nodes
// after the real ones.
std::pair<Tensor, Tensor> attentionMasks(const GraphAttentionOptions& o, int64_t E, int64_t N, int64_t H,
                                         DType dtype) {
  GNN_CHECK_ARG(o.dropout >= 0 && o.dropout < 1, "graph attention: dropout must be in [0, 1), got ", o.dropout);
  if (!o.training || o.dropout == 0) return {};
  Generator edges = ExecutionContext::current().nextRandomStream();
  Generator self = ExecutionContext::current().nextRandomStream();
  return {dropoutMask({E, H}, dtype, o.dropout, edges),
          o.selfLoops ? dropoutMask({N, H}, dtype, o.dropout, self) : Tensor()};
}

void checkFloat2(const char* op, const char* what, const Tensor& t, int64_t rows, int64_t cols, DType dtype) {
  GNN_CHECK_ARG(t.rank() == 2 && t.dim(0) == rows && t.dim(1) == cols && t.dtype() == dtype, op, ": ", what, " is ",
                dtypeName(t.dtype()), " ", shapeString(t.shape()), ", expected ", dtypeName(dtype), " [", rows, ", ",
                cols, "]");
}

// Heads and channels of an attention vector [H, C] or [1, H, C].
std::pair<int64_t, int64_t> headsOf(const char* op, const Tensor& att) {
  GNN_CHECK_ARG((att.rank() == 2) || (att.rank() == 3 && att.dim(0) == 1), op,
                ": the attention vector must be [heads, C] or [1, heads, C], got ", shapeString(att.shape()));
  return {att.dim(att.rank() - 2), att.dim(att.rank() - 1)};
}

// gatAttention's backward. saved: V, aSrc, aDst, aEdge, aLoop, alpha, alphaSelf, the two masks, then the groups;
// inputs: h, aSrc, aDst, then aEdge at edgeAt and aLoop at loopAt (-1: absent).
template <class T>
void gatBackward(const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved, int64_t H,
                 bool selfLoops, T slope, int edgeAt, int loopAt) {
  const Tensor& V = saved[0];
  const int64_t N = V.dim(0), HC = V.dim(1), C = HC / H;
  const Layout<T> L(EdgeGroups::from(saved, 9), N, H, C, selfLoops, saved[7], saved[8]);
  const T *as = saved[1].data<T>(), *ad = saved[2].data<T>();
  const T* ae = saved[3].defined() ? saved[3].data<T>() : nullptr;
  const T* al = saved[4].defined() ? saved[4].data<T>() : nullptr;
  const T *alpha = saved[5].data<T>(), *alphaSelf = saved[6].data<T>(), *g = gy.data<T>();
  // Per term, the gradient of its logit, then (in place) of its pre-activation; masked edges keep 0.
  Tensor DZ({L.E, H}, gy.dtype()), DZs({N, H}, gy.dtype()), GDst = Tensor::empty({N, H}, gy.dtype());
  T *dz = DZ.data<T>(), *dzs = DZs.data<T>(), *gd = GDst.data<T>();
  logitGrads(L, L.chunk(2 * HC + 8 * H), V.data<T>(), g, alpha, alphaSelf, dz, dzs, [&](int64_t i, int64_t) {
    for (int64_t h = 0; h < H; ++h) {
      T acc = 0;
      for (int64_t k = L.dstPtr[i]; k < L.dstPtr[i + 1]; ++k) {
        const int64_t edge = L.dstEdges[k];
        T z = as[L.src[edge] * H + h] + ad[i * H + h];
        if (ae) z += ae[edge * H + h];
        dz[edge * H + h] *= z > T(0) ? T(1) : slope;
        acc += dz[edge * H + h];
      }
      if (selfLoops) {
        T z = as[i * H + h] + ad[i * H + h];
        if (al) z += al[i * H + h];
        dzs[i * H + h] *= z > T(0) ? T(1) : slope;
        acc += dzs[i * H + h];
      }
      gd[i * H + h] = acc;
    }
  });
  if (in[0].requiresGrad() || in[1].requiresGrad()) {
    Tensor GV = Tensor::empty({N, HC}, gy.dtype()), GSrc = Tensor::empty({N, H}, gy.dtype());
    T* gs = GSrc.data<T>();
    sourceGrads(L, g, alpha, alphaSelf, GV.data<T>(), [&](int64_t j) {
      for (int64_t h = 0; h < H; ++h) {
        T acc = 0;
        for (int64_t k = L.srcPtr[j]; k < L.srcPtr[j + 1]; ++k) acc += dz[L.srcEdges[k] * H + h];
        if (selfLoops) acc += dzs[j * H + h];
        gs[j * H + h] = acc;
      }
    });
    if (in[0].requiresGrad()) in[0].addGrad(GV);
    if (in[1].requiresGrad()) in[1].addGrad(GSrc);
  }
  if (in[2].requiresGrad()) in[2].addGrad(GDst);
  if (edgeAt >= 0 && in[edgeAt].requiresGrad()) in[edgeAt].addGrad(DZ);
  if (loopAt >= 0 && in[loopAt].requiresGrad()) in[loopAt].addGrad(DZs);
}

// The inputs of an attention op (the optional ones only when defined) and where the optional ones sit.
std::vector<Variable> attentionInputs(const std::vector<Variable>& required, const Variable& edge, const Variable& loop,
                                      int* edgeAt, int* loopAt) {
  std::vector<Variable> inputs = required;
  *edgeAt = *loopAt = -1;
  if (edge.defined()) {
    *edgeAt = static_cast<int>(inputs.size());
    inputs.push_back(edge);
  }
  if (loop.defined()) {
    *loopAt = static_cast<int>(inputs.size());
    inputs.push_back(loop);
  }
  return inputs;
}

}  // namespace

Variable gatAttention(const Variable& h, const Variable& aSrc, const Variable& aDst, const Tensor& edgeIndex,
                      const Variable& aEdge, const Variable& aLoop, const GraphAttentionOptions& o) {
  const Tensor& V = h.value();
  GNN_CHECK_ARG(V.rank() == 2 && V.isFloating(), "gatAttention: h must be a float [N, heads * C] tensor, got ",
                shapeString(V.shape()));
  GNN_CHECK_ARG(aSrc.value().rank() == 2 && aSrc.dim(1) > 0 && V.dim(1) % aSrc.dim(1) == 0,
                "gatAttention: aSrc ", shapeString(aSrc.shape()), " does not split h ", shapeString(V.shape()),
                " into heads");
  const int64_t N = V.dim(0), H = aSrc.dim(1), C = V.dim(1) / H;
  checkFloat2("gatAttention", "aSrc", aSrc.value(), N, H, V.dtype());
  checkFloat2("gatAttention", "aDst", aDst.value(), N, H, V.dtype());
  GNN_CHECK_ARG(!aLoop.defined() || o.selfLoops, "gatAttention: aLoop is the added self-loops' term (selfLoops)");
  EdgeGroups groups = groupEdges("gatAttention", edgeIndex, N, o.selfLoops);
  const int64_t E = groups.src.numel();
  if (aEdge.defined()) checkFloat2("gatAttention", "aEdge", aEdge.value(), E, H, V.dtype());
  if (aLoop.defined()) checkFloat2("gatAttention", "aLoop", aLoop.value(), N, H, V.dtype());
  Tensor ME, MS;  // named tensors (not structured bindings): the lambda below captures them
  std::tie(ME, MS) = attentionMasks(o, E, N, H, V.dtype());
  return dispatchFloat(V.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Alpha({E, H}, V.dtype()), AlphaSelf({N, H}, V.dtype()), Y = Tensor::empty({N, H * C}, V.dtype());
    const Layout<T> L(groups, N, H, C, o.selfLoops, ME, MS);
    const T *as = aSrc.value().data<T>(), *ad = aDst.value().data<T>();
    const T* ae = aEdge.defined() ? aEdge.value().data<T>() : nullptr;
    const T* al = aLoop.defined() ? aLoop.value().data<T>() : nullptr;
    const T slope = static_cast<T>(o.negativeSlope);
    // PyG's edge_update: (alpha_j + alpha_i) + alpha_edge, then the leaky ReLU.
    auto logits = [&](int64_t i, int64_t e, T* l) {
      const int64_t s = e < 0 ? i : L.src[e];
      for (int64_t k = 0; k < H; ++k) {
        T z = as[s * H + k] + ad[i * H + k];
        if (e >= 0 && ae) z += ae[e * H + k];
        if (e < 0 && al) z += al[i * H + k];
        l[k] = leaky(z, slope);
      }
    };
    attend(L, V.data<T>(), logits, Alpha.data<T>(), AlphaSelf.data<T>(), Y.data<T>());
    const int64_t terms = static_cast<int64_t>(groups.dstEdges.numel()) + (o.selfLoops ? N : 0);
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"gatAttention", terms * (2 * H * C + 20 * H),
                E * 16 + terms * (H * C + 2 * H) * elem + 2 * N * H * elem,
                static_cast<int64_t>(Y.nbytes() + Alpha.nbytes() + AlphaSelf.nbytes()), terms * (6 * H * C + 12 * H)};
    int edgeAt = -1, loopAt = -1;
    std::vector<Variable> inputs = attentionInputs({h, aSrc, aDst}, aEdge, aLoop, &edgeAt, &loopAt);
    std::vector<Tensor> saved{V, aSrc.value(), aDst.value(), ae ? aEdge.value() : Tensor(),
                              al ? aLoop.value() : Tensor(), Alpha, AlphaSelf, ME, MS};
    for (const Tensor& t : groups.tensors()) saved.push_back(t);
    const bool selfLoops = o.selfLoops;
    return Variable::record(info, Y, std::move(inputs), std::move(saved),
                            [H, selfLoops, slope, edgeAt, loopAt](const Tensor& gy, std::vector<GradInput>& in,
                                                                  const std::vector<Tensor>& saved) {
                              gatBackward<T>(gy, in, saved, H, selfLoops, slope, edgeAt, loopAt);
                            });
  });
}

namespace {
// One GATv2 term's pre-activation xr[i] + xl[s] (+ t), for head h's channel hc.
template <class T>
inline T preActivation(const T* xr, const T* xl, const T* t, int64_t hc) {
  T pre = xr[hc] + xl[hc];
  return t ? pre + t[hc] : pre;
}

// gatv2Attention's backward. saved: xl, xr, att, edgeTerm, loopTerm, alpha, alphaSelf, the two masks, then the
// groups; inputs: xl, xr, att, then edgeTerm at edgeAt and loopTerm at loopAt.
template <class T>
void gatv2Backward(const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved, int64_t H,
                   bool selfLoops, T slope, int edgeAt, int loopAt) {
  const Tensor& XL = saved[0];
  const int64_t N = XL.dim(0), HC = XL.dim(1), C = HC / H;
  const Layout<T> L(EdgeGroups::from(saved, 9), N, H, C, selfLoops, saved[7], saved[8]);
  const T *xl = XL.data<T>(), *xr = saved[1].data<T>(), *att = saved[2].data<T>();
  const T* et = saved[3].defined() ? saved[3].data<T>() : nullptr;
  const T* lt = saved[4].defined() ? saved[4].data<T>() : nullptr;
  const T *alpha = saved[5].data<T>(), *alphaSelf = saved[6].data<T>(), *g = gy.data<T>();
  const DType dt = gy.dtype();
  Tensor DL({L.E, H}, dt), DLs({N, H}, dt), DPre({L.E, HC}, dt), DPreS({N, HC}, dt), GXr = Tensor::empty({N, HC}, dt);
  T *dl = DL.data<T>(), *dls = DLs.data<T>(), *dp = DPre.data<T>(), *dps = DPreS.data<T>(), *gr = GXr.data<T>();
  const bool attGrad = in[2].requiresGrad();
  const int64_t chunk = L.chunk(6 * HC), chunks = (N + chunk - 1) / chunk;
  Tensor Partials = attGrad ? Tensor({chunks, HC}, dt) : Tensor();
  T* partials = attGrad ? Partials.data<T>() : nullptr;
  logitGrads(L, chunk, xl, g, alpha, alphaSelf, dl, dls, [&](int64_t i, int64_t b) {
    T* gri = gr + i * HC;
    std::fill(gri, gri + HC, T(0));
    T* part = partials ? partials + (b / chunk) * HC : nullptr;
    // Through the per-head dot with att and the leaky ReLU, to the pre-activation's parts (and to att).
    auto term = [&](int64_t s, const T* t, const T* d, T* dpre) {
      for (int64_t h = 0; h < H; ++h)
        for (int64_t hc = h * C; hc < (h + 1) * C; ++hc) {
          const T pre = preActivation(xr + i * HC, xl + s * HC, t, hc);
          dpre[hc] = d[h] * att[hc] * (pre > T(0) ? T(1) : slope);
          gri[hc] += dpre[hc];
          if (part) part[hc] = mulAdd(d[h], leaky(pre, slope), part[hc]);
        }
    };
    for (int64_t k = L.dstPtr[i]; k < L.dstPtr[i + 1]; ++k) {
      const int64_t edge = L.dstEdges[k];
      term(L.src[edge], et ? et + edge * HC : nullptr, dl + edge * H, dp + edge * HC);
    }
    if (selfLoops) term(i, lt ? lt + i * HC : nullptr, dls + i * H, dps + i * HC);
  });
  if (in[0].requiresGrad()) {
    Tensor GXl = Tensor::empty({N, HC}, dt);
    T* gl = GXl.data<T>();
    sourceGrads(L, g, alpha, alphaSelf, gl, [&](int64_t j) {
      T* o = gl + j * HC;
      for (int64_t k = L.srcPtr[j]; k < L.srcPtr[j + 1]; ++k) {
        const T* d = dp + L.srcEdges[k] * HC;
        for (int64_t c = 0; c < HC; ++c) o[c] += d[c];
      }
      if (selfLoops)
        for (int64_t c = 0; c < HC; ++c) o[c] += dps[j * HC + c];
    });
    in[0].addGrad(GXl);
  }
  if (in[1].requiresGrad()) in[1].addGrad(GXr);
  if (attGrad) {
    Tensor GAtt = Tensor::empty(in[2].shape(), dt);
    ops::sumChunkPartials(std::as_const(Partials).data<T>(), chunks, HC, GAtt.data<T>());
    in[2].addGrad(GAtt);
  }
  if (edgeAt >= 0 && in[edgeAt].requiresGrad()) in[edgeAt].addGrad(DPre);
  if (loopAt >= 0 && in[loopAt].requiresGrad()) in[loopAt].addGrad(DPreS);
}
}  // namespace

Variable gatv2Attention(const Variable& xl, const Variable& xr, const Variable& att, const Tensor& edgeIndex,
                        const Variable& edgeTerm, const Variable& loopTerm, const GraphAttentionOptions& o) {
  const Tensor& XL = xl.value();
  GNN_CHECK_ARG(XL.rank() == 2 && XL.isFloating(), "gatv2Attention: xl must be a float [N, heads * C] tensor, got ",
                shapeString(XL.shape()));
  const auto [H, C] = headsOf("gatv2Attention", att.value());
  const int64_t N = XL.dim(0), HC = H * C;
  checkFloat2("gatv2Attention", "xl", XL, N, HC, XL.dtype());
  checkFloat2("gatv2Attention", "xr", xr.value(), N, HC, XL.dtype());
  GNN_CHECK_ARG(att.dtype() == XL.dtype(), "gatv2Attention: att is ", dtypeName(att.dtype()), ", xl ",
                dtypeName(XL.dtype()));
  GNN_CHECK_ARG(!loopTerm.defined() || o.selfLoops, "gatv2Attention: loopTerm is the added self-loops' term");
  EdgeGroups groups = groupEdges("gatv2Attention", edgeIndex, N, o.selfLoops);
  const int64_t E = groups.src.numel();
  if (edgeTerm.defined()) checkFloat2("gatv2Attention", "edgeTerm", edgeTerm.value(), E, HC, XL.dtype());
  if (loopTerm.defined()) checkFloat2("gatv2Attention", "loopTerm", loopTerm.value(), N, HC, XL.dtype());
  Tensor ME, MS;  // named tensors (not structured bindings): the lambda below captures them
  std::tie(ME, MS) = attentionMasks(o, E, N, H, XL.dtype());
  return dispatchFloat(XL.dtype(), [&, H = H, C = C](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Alpha({E, H}, XL.dtype()), AlphaSelf({N, H}, XL.dtype()), Y = Tensor::empty({N, HC}, XL.dtype());
    const Layout<T> L(groups, N, H, C, o.selfLoops, ME, MS);
    const T *pl = XL.data<T>(), *pr = xr.value().data<T>(), *pa = att.value().data<T>();
    const T* et = edgeTerm.defined() ? edgeTerm.value().data<T>() : nullptr;
    const T* lt = loopTerm.defined() ? loopTerm.value().data<T>() : nullptr;
    const T slope = static_cast<T>(o.negativeSlope);
    // PyG's message: leaky_relu(x_i + x_j (+ lin_edge(e))), then (. * att).sum(-1) per head.
    auto logits = [&](int64_t i, int64_t e, T* l) {
      const int64_t s = e < 0 ? i : L.src[e];
      const T* t = e < 0 ? (lt ? lt + i * HC : nullptr) : (et ? et + e * HC : nullptr);
      for (int64_t h = 0; h < H; ++h) {
        T acc = 0;
        for (int64_t hc = h * C; hc < (h + 1) * C; ++hc)
          acc = mulAdd(pa[hc], leaky(preActivation(pr + i * HC, pl + s * HC, t, hc), slope), acc);
        l[h] = acc;
      }
    };
    attend(L, pl, logits, Alpha.data<T>(), AlphaSelf.data<T>(), Y.data<T>());
    const int64_t terms = static_cast<int64_t>(groups.dstEdges.numel()) + (o.selfLoops ? N : 0);
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"gatv2Attention", terms * (7 * HC + 16 * H), E * 16 + terms * 3 * HC * elem + N * HC * elem,
                static_cast<int64_t>(Y.nbytes() + Alpha.nbytes() + AlphaSelf.nbytes()), terms * (14 * HC + 12 * H)};
    int edgeAt = -1, loopAt = -1;
    std::vector<Variable> inputs = attentionInputs({xl, xr, att}, edgeTerm, loopTerm, &edgeAt, &loopAt);
    std::vector<Tensor> saved{XL, xr.value(), att.value(), et ? edgeTerm.value() : Tensor(),
                              lt ? loopTerm.value() : Tensor(), Alpha, AlphaSelf, ME, MS};
    for (const Tensor& t : groups.tensors()) saved.push_back(t);
    const bool selfLoops = o.selfLoops;
    return Variable::record(info, Y, std::move(inputs), std::move(saved),
                            [H = H, selfLoops, slope, edgeAt, loopAt](const Tensor& gy, std::vector<GradInput>& in,
                                                                      const std::vector<Tensor>& saved) {
                              gatv2Backward<T>(gy, in, saved, H, selfLoops, slope, edgeAt, loopAt);
                            });
  });
}

Variable headDot(const Variable& x, const Variable& att) {
  const Tensor& X = x.value();
  const auto [H, C] = headsOf("headDot", att.value());
  GNN_CHECK_ARG(X.rank() == 2 && X.dim(1) == H * C && X.isFloating() && att.dtype() == X.dtype(), "headDot: x ",
                dtypeName(X.dtype()), " ", shapeString(X.shape()), " against att ", dtypeName(att.dtype()), " ",
                shapeString(att.shape()));
  const int64_t N = X.dim(0), HC = H * C;
  return dispatchFloat(X.dtype(), [&, H = H, C = C](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({N, H}, X.dtype());
    const T *xp = X.data<T>(), *ap = att.value().data<T>();
    T* y = Y.data<T>();
    parallelFor(N, rowChunk(N, 2 * HC), [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n)
        for (int64_t h = 0; h < H; ++h) y[n * H + h] = dotRow(xp + n * HC + h * C, ap + h * C, C);
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"headDot", 2 * N * HC, (N + 1) * HC * elem, N * H * elem, 4 * N * HC};
    return Variable::record(info, Y, {x, att}, {X, att.value()}, [H = H, C = C](const Tensor& gy,
                                                                                std::vector<GradInput>& in,
                                                                                const std::vector<Tensor>& saved) {
      const Tensor& X = saved[0];
      const int64_t N = X.dim(0), HC = H * C;
      const T *xp = X.data<T>(), *ap = saved[1].data<T>(), *g = gy.data<T>();
      if (in[0].requiresGrad()) {
        Tensor G = Tensor::empty(X.shape(), X.dtype());
        T* o = G.data<T>();
        parallelFor(N, rowChunk(N, HC), [&](int64_t b, int64_t e) {
          for (int64_t n = b; n < e; ++n)
            for (int64_t hc = 0; hc < HC; ++hc) o[n * HC + hc] = g[n * H + hc / C] * ap[hc];
        });
        in[0].addGrad(G);
      }
      if (in[1].requiresGrad()) {  // per chunk of rows, then the chunks' partial sums in order
        const int64_t chunk = rowChunk(N, 2 * HC), chunks = std::max<int64_t>(1, (N + chunk - 1) / chunk);
        Tensor P({chunks, HC}, X.dtype());
        T* p = P.data<T>();
        parallelFor(N, chunk, [&](int64_t b, int64_t e) {
          T* pc = p + (b / chunk) * HC;
          for (int64_t n = b; n < e; ++n)
            for (int64_t hc = 0; hc < HC; ++hc) pc[hc] = mulAdd(g[n * H + hc / C], xp[n * HC + hc], pc[hc]);
        });
        Tensor G = Tensor::empty(in[1].shape(), X.dtype());
        ops::sumChunkPartials(std::as_const(P).data<T>(), chunks, HC, G.data<T>());
        in[1].addGrad(G);
      }
    });
  });
}

namespace {
enum class LoopReduce { Mean, Sum, Max, Min };

LoopReduce loopReduceOf(const std::string& r) {
  if (r == "mean") return LoopReduce::Mean;
  if (r == "add" || r == "sum") return LoopReduce::Sum;
  if (r == "max") return LoopReduce::Max;
  if (r == "min") return LoopReduce::Min;
  throw std::invalid_argument("selfLoopAttr: reduce '" + r + "' is not one of mean, add, sum, max, min");
}
// selfLoopAttr's backward: each edge that is not a self-loop gets its target's gradient (divided by the count
// for the mean), or, for max and min, each (node, feature) gives its gradient to its one extreme edge.
// saved: src, dst, the target grouping's ptr, the extreme edges (undefined for mean and add).
template <class T>
Tensor selfLoopAttrGrad(const Tensor& gy, const std::vector<Tensor>& saved, bool mean, int64_t D) {
  const int64_t E = saved[0].numel(), N = gy.dim(0);
  const int64_t *s = saved[0].data<int64_t>(), *t = saved[1].data<int64_t>(), *ptr = saved[2].data<int64_t>();
  const T* g = gy.data<T>();
  Tensor G({E, D}, gy.dtype());  // zeros: self-loop edges get none
  T* o = G.data<T>();
  if (saved[3].defined()) {
    const int64_t* arg = saved[3].data<int64_t>();
    for (int64_t k = 0; k < N * D; ++k)
      if (arg[k] >= 0) o[arg[k] * D + k % D] = g[k];
    return G;
  }
  parallelFor(E, grainFor(D), [&](int64_t b, int64_t e) {
    for (int64_t edge = b; edge < e; ++edge) {
      if (s[edge] == t[edge]) continue;
      const T n = static_cast<T>(ptr[t[edge] + 1] - ptr[t[edge]]);
      for (int64_t d = 0; d < D; ++d) o[edge * D + d] = mean ? g[t[edge] * D + d] / n : g[t[edge] * D + d];
    }
  });
  return G;
}
}  // namespace

Variable selfLoopAttr(const Variable& edgeAttr, const Tensor& edgeIndex, int64_t numNodes, const std::string& reduce) {
  const LoopReduce mode = loopReduceOf(reduce);
  const Tensor& A = edgeAttr.value();
  const EdgeGroups groups = groupEdges("selfLoopAttr", edgeIndex, numNodes, true);
  const int64_t E = groups.src.numel(), N = numNodes;
  GNN_CHECK_ARG(A.rank() == 2 && A.dim(0) == E && A.isFloating(), "selfLoopAttr: edge features ",
                shapeString(A.shape()), " for ", E, " edges");
  const int64_t D = A.dim(1);
  const bool extreme = mode == LoopReduce::Max || mode == LoopReduce::Min;
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({N, D}, A.dtype());
    Tensor Arg = extreme ? Tensor::empty({N, D}, DType::I64) : Tensor();
    const T* a = A.data<T>();
    const int64_t *ptr = groups.dstPtr.data<int64_t>(), *edges = groups.dstEdges.data<int64_t>();
    T* y = Y.data<T>();
    int64_t* arg = extreme ? Arg.data<int64_t>() : nullptr;
    parallelFor(N, rowChunk(N, (E / std::max<int64_t>(N, 1) + 1) * D), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        for (int64_t d = 0; d < D; ++d) {
          T acc = 0;
          int64_t best = -1;
          for (int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
            const T v = a[edges[k] * D + d];
            if (!extreme) {
              acc += v;
            } else if (best < 0 || (mode == LoopReduce::Max ? v > acc : v < acc)) {
              acc = v;
              best = edges[k];
            }
          }
          if (mode == LoopReduce::Mean && ptr[i + 1] > ptr[i]) acc /= static_cast<T>(ptr[i + 1] - ptr[i]);
          y[i * D + d] = acc;
          if (arg) arg[i * D + d] = best;
        }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"selfLoopAttr", E * D, E * (16 + D * elem), N * D * elem, E * D};
    return Variable::record(info, Y, {edgeAttr}, {groups.src, groups.dst, groups.dstPtr, Arg},
                            [mean = mode == LoopReduce::Mean, D](const Tensor& gy, std::vector<GradInput>& in,
                                                                 const std::vector<Tensor>& saved) {
                              in[0].addGrad(selfLoopAttrGrad<T>(gy, saved, mean, D));
                            });
  });
}

}  // namespace gnn
