// dotAttentionMessageSum: TransformerConv's (and HGTConv's, whose sources may be of another node type) scaled
// dot-product attention over each target's edges and its weighted sum in one op (ops/Ops.h): the [E, H] attention
// is kept, not the [E, H C] gathered queries, keys, values, products and weighted messages the composition makes.
// Each target's edges are read in edge order for the logits, the softmax and the sum, each source's in edge order
// for the key and value gradients: the same bits for any thread count.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "gnn/ops/IndexPlan.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {

// What the passes read: the rows, their width, and the edges grouped by target and by source.
struct DotAttentionShape {
  int64_t N = 0, E = 0, H = 0, C = 0;
  int64_t Ns = 0;  // the sources' rows (k and v): N, or another node type's count (a bipartite relation)
  double scale = 1;
  bool hasEdge = false;
};

// Per-head sums of a row's products: out[h] = sum over c < C of a[hC + c] * (b[hC + c] + e[hC + c]) (e may be
// null), each head's terms added in order. The products of the whole row first (one vector loop over H C), then
// the heads' sums: with TransformerConv's narrow heads (8 of 8 here) a loop per head would not fill a vector.
template <class T>
inline void headDots(const T* __restrict a, const T* __restrict b, const T* __restrict e, int64_t H, int64_t C,
                     T* __restrict prod, T* __restrict out) {
  const int64_t F = H * C;
  if (e)
    for (int64_t c = 0; c < F; ++c) prod[c] = a[c] * (b[c] + e[c]);
  else
    for (int64_t c = 0; c < F; ++c) prod[c] = a[c] * b[c];
  for (int64_t h = 0; h < H; ++h) {
    T acc = 0;
    for (int64_t c = 0; c < C; ++c) acc += prod[h * C + c];
    out[h] = acc;
  }
}

// w[hC + c] = x[h]: a per-head value spread over its head's lanes.
template <class T>
inline void spread(const T* __restrict x, int64_t H, int64_t C, T* __restrict w) {
  for (int64_t h = 0; h < H; ++h)
    for (int64_t c = 0; c < C; ++c) w[h * C + c] = x[h];
}

// o += w * x, o += w * (x + y), and o = w * x + u * y over a row of F: restrict-qualified so each is one vector
// loop (with the rows passed as plain pointers GCC kept some of these scalar).
template <class T>
inline void fmaRow(T* __restrict o, const T* __restrict w, const T* __restrict x, int64_t F) {
  for (int64_t c = 0; c < F; ++c) o[c] = ops::mulAdd(w[c], x[c], o[c]);
}
template <class T>
inline void fmaRowSum(T* __restrict o, const T* __restrict w, const T* __restrict x, const T* __restrict y, int64_t F) {
  for (int64_t c = 0; c < F; ++c) o[c] = ops::mulAdd(w[c], x[c] + y[c], o[c]);
}
template <class T>
inline void twoProducts(T* __restrict o, const T* __restrict w, const T* __restrict x, const T* __restrict u,
                        const T* __restrict y, int64_t F) {
  for (int64_t c = 0; c < F; ++c) o[c] = ops::mulAdd(w[c], x[c], u[c] * y[c]);
}

// The rows the next target's (or source's) edges will read, asked for ahead: the edges' rows sit anywhere in
// [N, H C] (and [E, H C]) arrays, and waiting on each in turn was most of the op's time.
template <class T>
inline void prefetchEdges(const ops::IndexPlan& plan, int64_t node, int64_t numNodes, const int64_t* other,
                          const T* a, const T* b, const T* perEdge, int64_t F) {
  if (node >= numNodes) return;
  for (int64_t t = plan.ptr[node]; t < plan.ptr[node + 1]; ++t) {
    const int64_t id = plan.perm[t], j = other[id];
    if (a) ops::prefetchRow(a + j * F, F);
    if (b) ops::prefetchRow(b + j * F, F);
    if (perEdge) ops::prefetchRow(perEdge + id * F, F);
  }
}

// Per-thread rows: products, spread weights, and a target's logits (degree x H, grown as needed).
template <class T>
struct RowScratch {
  std::vector<T> prod, w, w2, z;
  explicit RowScratch(int64_t F) : prod(static_cast<size_t>(F)), w(static_cast<size_t>(F)), w2(static_cast<size_t>(F)) {}
};

// Forward over targets [b, e): alpha [E, H] (by edge id) and out [N, H C]. The logits of a target's edges go to
// a contiguous block, exponentiated by the vector exp (the same code for every element, OpLoops.h).
template <class T>
void attendTargets(const DotAttentionShape& s, const ops::IndexPlan& byDst, const int64_t* src, const T* q,
                   const T* k, const T* v, const T* ed, T* alpha, T* out, int64_t b, int64_t e) {
  const int64_t H = s.H, C = s.C, F = H * C;
  RowScratch<T> r(F);
  std::vector<T> mx(static_cast<size_t>(H)), sum(static_cast<size_t>(H));
  for (int64_t i = b; i < e; ++i) {
    prefetchEdges(byDst, i + 1, e, src, k, v, ed, F);
    const int64_t lo = byDst.ptr[i], hi = byDst.ptr[i + 1], deg = hi - lo;
    if (deg == 0) continue;
    if (static_cast<int64_t>(r.z.size()) < deg * H) r.z.resize(static_cast<size_t>(deg * H));
    T* z = r.z.data();
    std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
    for (int64_t t = 0; t < deg; ++t) {
      const int64_t id = byDst.perm[lo + t], j = src[id];
      headDots(q + i * F, k + j * F, ed ? ed + id * F : nullptr, H, C, r.prod.data(), z + t * H);
      for (int64_t h = 0; h < H; ++h) {
        z[t * H + h] *= static_cast<T>(s.scale);
        mx[h] = std::max(mx[h], z[t * H + h]);
      }
    }
    for (int64_t t = 0; t < deg; ++t)
      for (int64_t h = 0; h < H; ++h) z[t * H + h] -= mx[h];
    ops::vectorBlocks(deg * H, [](auto x) { return x.exp(); }, z, z);
    std::fill(sum.begin(), sum.end(), T(0));
    for (int64_t t = 0; t < deg; ++t)
      for (int64_t h = 0; h < H; ++h) sum[h] += z[t * H + h];
    T* o = out + i * F;
    for (int64_t t = 0; t < deg; ++t) {
      const int64_t id = byDst.perm[lo + t], j = src[id];
      T* a = alpha + id * H;
      for (int64_t h = 0; h < H; ++h) a[h] = z[t * H + h] / sum[h];
      spread(a, H, C, r.w.data());
      const T* vj = v + j * F;
      const T* w = r.w.data();
      if (ed)
        fmaRowSum(o, w, vj, ed + id * F, F);
      else
        fmaRow(o, w, vj, F);
    }
  }
}

// Backward over targets [b, e): dz [E, H] (the logits' gradients, scale applied), dq [N, H C] and, with edge
// terms, de [E, H C]. d alpha_e = g_i . (v_j + e_e) per head; dz_e = scale alpha_e (d alpha_e - sum over i's
// edges of alpha d alpha).
template <class T>
void targetGradients(const DotAttentionShape& s, const ops::IndexPlan& byDst, const int64_t* src, const T* q,
                     const T* k, const T* v, const T* ed, const T* alpha, const T* g, T* dz, T* dq, T* de, int64_t b,
                     int64_t e) {
  const int64_t H = s.H, C = s.C, F = H * C;
  RowScratch<T> r(F);
  std::vector<T> dot(static_cast<size_t>(H));
  for (int64_t i = b; i < e; ++i) {
    prefetchEdges(byDst, i + 1, e, src, k, v, ed, F);
    const int64_t lo = byDst.ptr[i], hi = byDst.ptr[i + 1];
    if (lo == hi) continue;
    const T *gi = g + i * F, *qi = q + i * F;
    std::fill(dot.begin(), dot.end(), T(0));
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t id = byDst.perm[t], j = src[id];
      T* d = dz + id * H;
      headDots(gi, v + j * F, ed ? ed + id * F : nullptr, H, C, r.prod.data(), d);
      for (int64_t h = 0; h < H; ++h) dot[h] += alpha[id * H + h] * d[h];
    }
    T* dqi = dq + i * F;
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t id = byDst.perm[t], j = src[id];
      T* d = dz + id * H;
      const T* a = alpha + id * H;
      for (int64_t h = 0; h < H; ++h) d[h] = static_cast<T>(s.scale) * a[h] * (d[h] - dot[h]);
      spread(d, H, C, r.w.data());
      const T* w = r.w.data();
      const T* kj = k + j * F;
      if (ed) {
        spread(a, H, C, r.w2.data());
        const T* w2 = r.w2.data();
        fmaRowSum(dqi, w, kj, ed + id * F, F);
        twoProducts(de + id * F, w, qi, w2, gi, F);
      } else {
        fmaRow(dqi, w, kj, F);
      }
    }
  }
}

// Backward over sources [b, e): dk_j = sum over j's edges of dz q_i, dv_j = sum of alpha g_i.
template <class T>
void sourceGradients(const DotAttentionShape& s, const ops::IndexPlan& bySrc, const int64_t* dst, const T* q,
                     const T* alpha, const T* dz, const T* g, T* dk, T* dv, bool wantK, bool wantV, int64_t b,
                     int64_t e) {
  const int64_t H = s.H, C = s.C, F = H * C;
  RowScratch<T> r(F);
  for (int64_t j = b; j < e; ++j) {
    prefetchEdges<T>(bySrc, j + 1, e, dst, q, g, nullptr, F);
    T *ok = dk + j * F, *ov = dv + j * F;
    for (int64_t t = bySrc.ptr[j]; t < bySrc.ptr[j + 1]; ++t) {
      const int64_t id = bySrc.perm[t], i = dst[id];
      if (wantK) {
        spread(dz + id * H, H, C, r.w.data());
        fmaRow(ok, r.w.data(), q + i * F, F);
      }
      if (wantV) {
        spread(alpha + id * H, H, C, r.w.data());
        fmaRow(ov, r.w.data(), g + i * F, F);
      }
    }
  }
}

}  // namespace

Variable dotAttentionMessageSum(const Variable& q, const Variable& k, const Variable& v, const Variable& edge,
                                const Tensor& edgeIndex, int64_t heads, double scale) {
  const Tensor &Q = q.value(), &K = k.value(), &V = v.value();
  ops::checkEdgeIndex("dotAttentionMessageSum", edgeIndex);
  GNN_CHECK_ARG(Q.rank() == 2 && K.rank() == 2 && V.shape() == K.shape() && K.dim(1) == Q.dim(1) &&
                    Q.isFloating() && K.dtype() == Q.dtype() && V.dtype() == Q.dtype(),
                "dotAttentionMessageSum: q ", shapeString(Q.shape()), ", k ", shapeString(K.shape()), " and v ",
                shapeString(V.shape()), " must be float [N, H C] (q) and one [N_src, H C] shape (k, v)");
  GNN_CHECK_ARG(heads >= 1 && Q.dim(1) % heads == 0, "dotAttentionMessageSum: ", Q.dim(1),
                " channels do not split into ", heads, " heads");
  DotAttentionShape s;
  s.N = Q.dim(0);
  s.Ns = K.dim(0);
  s.E = edgeIndex.dim(1);
  s.H = heads;
  s.C = Q.dim(1) / heads;
  s.scale = scale;
  s.hasEdge = edge.defined();
  const int64_t F = s.H * s.C;
  GNN_CHECK_ARG(!s.hasEdge || (edge.value().shape() == Shape{s.E, F} && edge.value().dtype() == Q.dtype()),
                "dotAttentionMessageSum: edge terms must be [", s.E, ", ", F, "] of q's dtype, got ",
                s.hasEdge ? shapeString(edge.value().shape()) : std::string());
  Tensor srcs = ops::indexValues("dotAttentionMessageSum (source)", edgeIndex.slice(0, 1).reshape({s.E}), s.Ns);
  Tensor dsts = ops::indexValues("dotAttentionMessageSum (target)", edgeIndex.slice(1, 2).reshape({s.E}), s.N);
  auto byDst = std::make_shared<ops::IndexPlan>(ops::planFor(dsts, s.N));
  return dispatchFloat(Q.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const Tensor ED = s.hasEdge ? edge.value() : Tensor();
    Tensor Y = Tensor::zeros({s.N, F}, Q.dtype()), A = Tensor::empty({s.E, s.H}, Q.dtype());
    const T* ed = s.hasEdge ? ED.data<T>() : nullptr;
    const int64_t perNode = std::max<int64_t>(1, s.E / std::max<int64_t>(s.N, 1));
    parallelFor(s.N, grainFor(perNode * F * 4), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      attendTargets<T>(s, *byDst, srcs.data<int64_t>(), Q.data<T>(), K.data<T>(), V.data<T>(), ed, A.data<T>(),
                       Y.data<T>(), b, e);
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T)), EF = s.E * F;
    OpInfo info{"dotAttentionMessageSum", 4 * EF + 6 * s.E * s.H,
                s.E * (16 + 2 * F * elem) + (s.hasEdge ? EF * elem : 0) + s.N * F * elem, s.N * F * elem, 10 * EF};
    std::vector<Variable> inputs = {q, k, v};
    // Not the targets: the backward reads them from byDst (8 bytes an edge less kept between forward and backward).
    std::vector<Tensor> saved = {Q, K, V, srcs, A};
    if (s.hasEdge) {
      inputs.push_back(edge);
      saved.push_back(ED);
    }
    return Variable::record(info, Y, inputs, saved,
                            [byDst, s](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& sv) {
      const int64_t F = s.H * s.C;
      const T *qp = sv[0].data<T>(), *kp = sv[1].data<T>(), *vp = sv[2].data<T>(), *alpha = sv[4].data<T>();
      const int64_t* src = sv[3].data<int64_t>();
      const T* ed = s.hasEdge ? sv[5].data<T>() : nullptr;
      const T* g = gy.data<T>();
      Tensor DZ = Tensor::empty({s.E, s.H}, gy.dtype()), DQ = Tensor::zeros({s.N, F}, gy.dtype());
      Tensor DE = s.hasEdge ? Tensor::empty({s.E, F}, gy.dtype()) : Tensor();
      const int64_t perNode = std::max<int64_t>(1, s.E / std::max<int64_t>(s.N, 1));
      parallelFor(s.N, grainFor(perNode * F * 6), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
        targetGradients<T>(s, *byDst, src, qp, kp, vp, ed, alpha, g, DZ.data<T>(), DQ.data<T>(),
                           s.hasEdge ? DE.data<T>() : nullptr, b, e);
      });
      const bool wantK = in[1].requiresGrad();
      const bool wantV = in[2].requiresGrad();
      if (wantK || wantV) {
        Tensor srcT = sv[3];
        const ops::IndexPlan bySrc = ops::planFor(srcT, s.Ns);
        std::vector<int64_t> dst(static_cast<size_t>(s.E));
        for (int64_t i = 0; i < s.N; ++i)
          for (int64_t t = byDst->ptr[i]; t < byDst->ptr[i + 1]; ++t) dst[static_cast<size_t>(byDst->perm[t])] = i;
        Tensor DK = Tensor::zeros({s.Ns, F}, gy.dtype()), DV = Tensor::zeros({s.Ns, F}, gy.dtype());
        const int64_t perSource = std::max<int64_t>(1, s.E / std::max<int64_t>(s.Ns, 1));
        parallelFor(s.Ns, grainFor(perSource * F * 4), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
          sourceGradients<T>(s, bySrc, dst.data(), qp, alpha, DZ.data<T>(), g, DK.data<T>(), DV.data<T>(), wantK,
                             wantV, b, e);
        });
        in[1].addGrad(DK);
        in[2].addGrad(DV);
      }
      in[0].addGrad(DQ);
      if (s.hasEdge) in[3].addGrad(DE);
    });
  });
}

}  // namespace gnn
