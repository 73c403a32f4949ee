// GAT's fused attention and the per-head dot products (GraphAttention.h; the edge features of added
// self-loops: SelfLoopAttrOps.cpp; GATv2: Gatv2AttentionOps.cpp). The attention runs per target row over the
// row's terms (its kept edges in edge order, then its self term), stored contiguously in target order: each
// row's logits, maximum, exponentials (vectorised, heads innermost), sum and weighted sum of source rows; the
// backward's source-side sums run per source row over the same terms grouped by source
// (GraphAttentionKernels.h). No atomics: every output row is written by one thread in a fixed order.
#include <algorithm>
#include <vector>

#include "gnn/ops/GraphAttention.h"
#include "gnn/ops/GraphAttentionKernels.h"
#include "gnn/system/CpuClones.h"

namespace gnn {
namespace {

using namespace graph_attention;

// (The head loops with a select are `omp simd`: with H a constant GCC would otherwise unroll them into scalar
// code with unpredictable branches.)
// GAT's logits of row i's terms lo .. hi - 1: leakyRelu((aSrc[source] + aDst[i]) + x), x = aEdge[edge]
// (aLoop[i] for the self term) where given.
template <class T, class HW>
void gatRowLogits(HW hw, const Layout<T>& L, int64_t i, int64_t lo, int64_t hi, const T* as, const T* ad,
                  const T* ae, const T* al, T slope, T* alpha) {
  const int64_t H = widthOr(hw, L.H);
  const T* __restrict adi = ad + i * H;
  for (int64_t k = lo; k < hi; ++k) {
    const int64_t e = L.termEdge[k];
    const T* __restrict asj = as + L.termSrc[k] * H;
    const T* __restrict x = e >= 0 ? (ae ? ae + e * H : nullptr) : (al ? al + i * H : nullptr);
    T* __restrict l = alpha + k * H;
    if (x) {
#pragma omp simd
      for (int64_t h = 0; h < H; ++h) l[h] = leaky((asj[h] + adi[h]) + x[h], slope);
    } else {
#pragma omp simd
      for (int64_t h = 0; h < H; ++h) l[h] = leaky(asj[h] + adi[h], slope);
    }
  }
}

// GAT's backward through the leaky ReLU for row i's terms, in place on dz (term order), and the row's sum of
// them (aDst's gradient) into gdi; dz also copied in source order to dzq.
template <class T, class HW>
void gatLeakyGrad(HW hw, const Layout<T>& L, int64_t i, const T* as, const T* ad, const T* ae, const T* al,
                  T slope, T* dz, T* dzq, T* __restrict gdi) {
  const int64_t H = widthOr(hw, L.H);
  const T* __restrict adi = ad + i * H;
  for (int64_t h = 0; h < H; ++h) gdi[h] = 0;
  for (int64_t k = L.dstPtr[i]; k < L.dstPtr[i + 1]; ++k) {
    const int64_t e = L.termEdge[k];
    const T* __restrict asj = as + L.termSrc[k] * H;
    const T* __restrict x = e >= 0 ? (ae ? ae + e * H : nullptr) : (al ? al + i * H : nullptr);
    T* __restrict d = dz + k * H;
    if (x) {
#pragma omp simd
      for (int64_t h = 0; h < H; ++h) d[h] *= leakyGrad((asj[h] + adi[h]) + x[h], slope);
    } else {
#pragma omp simd
      for (int64_t h = 0; h < H; ++h) d[h] *= leakyGrad(asj[h] + adi[h], slope);
    }
    for (int64_t h = 0; h < H; ++h) gdi[h] += d[h];
    std::copy(d, d + H, dzq + L.outPos[k] * H);
  }
}

// gatAttention's backward (biasAt: where the bias sits among the inputs, -1: none). saved: V, aSrc, aDst, aEdge, aLoop, alpha and the dropout mask (term order);
// inputs: h, aSrc, aDst, then aEdge at edgeAt and aLoop at loopAt (-1: absent).
template <class T>
void gatBackward(const Tensor& gyOut, std::vector<GradInput>& in, const std::vector<Tensor>& saved,
                 const AttentionGraph& G, int64_t H, T slope, int edgeAt, int loopAt, bool meanHeads,
                 int biasAt) {
  if (biasAt >= 0 && in[biasAt].requiresGrad()) in[biasAt].addGrad(columnSums<T>(gyOut, in[biasAt].shape()));
  const Tensor gy = headsGrad<T>(gyOut, H, meanHeads);
  const Tensor& V = saved[0];
  const int64_t N = V.dim(0), HC = V.dim(1), C = HC / H;
  const Layout<T> L(G, H, C, saved[6]);
  const T *as = saved[1].data<T>(), *ad = saved[2].data<T>();
  const T* ae = saved[3].defined() ? saved[3].data<T>() : nullptr;
  const T* al = saved[4].defined() ? saved[4].data<T>() : nullptr;
  const T *alpha = saved[5].data<T>(), *g = gy.data<T>();
  // Per term, the gradient of its logit, then (in place) of its pre-activation.
  // The same and the dropped attention in source order: what the source side reads.
  Tensor DZ = Tensor::empty({G.terms, H}, gy.dtype()), GDst = Tensor::empty({N, H}, gy.dtype());
  Tensor DZq = Tensor::empty({G.terms, H}, gy.dtype()), Wq = Tensor::empty({G.terms, H}, gy.dtype());
  T *dz = DZ.data<T>(), *gd = GDst.data<T>(), *dzq = DZq.data<T>(), *wq = Wq.data<T>();
  logitGrads(L, L.chunk(2 * HC + 8 * H), V.data<T>(), g, alpha, dz, wq, [&](int64_t i, int64_t) {
    withHeads(H, [&](auto hw) { gatLeakyGrad(hw, L, i, as, ad, ae, al, slope, dz, dzq, gd + i * H); });
  });
  if (in[0].requiresGrad() || in[1].requiresGrad()) {
    Tensor GV = Tensor::empty({N, HC}, gy.dtype()), GSrc = Tensor::empty({N, H}, gy.dtype());
    T* gs = GSrc.data<T>();
    sourceGrads(L, g, wq, GV.data<T>(), [&](int64_t j, int64_t q0, int64_t q1) {
      T* __restrict gsj = gs + j * H;
      std::fill(gsj, gsj + H, T(0));
      for (int64_t q = q0; q < q1; ++q) {
        const T* __restrict d = dzq + q * H;
        for (int64_t h = 0; h < H; ++h) gsj[h] += d[h];
      }
    });
    if (in[0].requiresGrad()) in[0].addGrad(GV);
    if (in[1].requiresGrad()) in[1].addGrad(GSrc);
  }
  if (in[2].requiresGrad()) in[2].addGrad(GDst);
  const bool edgeGrad = edgeAt >= 0 && in[edgeAt].requiresGrad(),
             loopGrad = loopAt >= 0 && in[loopAt].requiresGrad();
  if (edgeGrad || loopGrad) {
    auto [DZe, DZs] = termsToEdges(L, DZ, G.selfLoops);
    if (edgeGrad) in[edgeAt].addGrad(DZe);
    if (loopGrad) in[loopAt].addGrad(DZs);
  }
}

}  // namespace

Variable gatAttention(const Variable& h, const Variable& aSrc, const Variable& aDst, const Tensor& edgeIndex,
                      const Variable& aEdge, const Variable& aLoop, const GraphAttentionOptions& o,
                      const Variable& bias) {
  const Tensor& V = h.value();
  GNN_CHECK_ARG(V.rank() == 2 && V.isFloating(),
                "gatAttention: h must be a float [N, heads * C] tensor, got ", shapeString(V.shape()));
  GNN_CHECK_ARG(aSrc.value().rank() == 2 && aSrc.dim(1) > 0 && V.dim(1) % aSrc.dim(1) == 0,
                "gatAttention: aSrc ", shapeString(aSrc.shape()), " does not split h ",
                shapeString(V.shape()), " into heads");
  const int64_t N = V.dim(0), H = aSrc.dim(1), C = V.dim(1) / H;
  checkFloat2("gatAttention", "aSrc", aSrc.value(), N, H, V.dtype());
  checkFloat2("gatAttention", "aDst", aDst.value(), N, H, V.dtype());
  GNN_CHECK_ARG(!aLoop.defined() || o.selfLoops,
                "gatAttention: aLoop is the added self-loops' term (selfLoops)");
  const GraphPtr graph = attentionGraph("gatAttention", edgeIndex, N, o.selfLoops);
  const int64_t E = graph->E, terms = graph->terms;
  if (aEdge.defined()) checkFloat2("gatAttention", "aEdge", aEdge.value(), E, H, V.dtype());
  if (aLoop.defined()) checkFloat2("gatAttention", "aLoop", aLoop.value(), N, H, V.dtype());
  const int64_t outWidth = o.meanHeads ? C : H * C;
  GNN_CHECK_ARG(!bias.defined() || (bias.value().numel() == outWidth && bias.dtype() == V.dtype()),
                "gatAttention: bias ", shapeString(bias.shape()), " for outputs of width ", outWidth);
  Tensor ME, MS;  // named tensors (not structured bindings): the lambda below captures them
  std::tie(ME, MS) = attentionMasks(o, E, N, H, V.dtype());
  return dispatchFloat(V.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Alpha = Tensor::empty({terms, H}, V.dtype()),
           Y = Tensor::empty({N, o.meanHeads ? C : H * C}, V.dtype());
    const Tensor MT = termMasks<T>(*graph, H, ME, MS);
    const Layout<T> L(*graph, H, C, MT);
    const T *as = aSrc.value().data<T>(), *ad = aDst.value().data<T>();
    const T* ae = aEdge.defined() ? aEdge.value().data<T>() : nullptr;
    const T* al = aLoop.defined() ? aLoop.value().data<T>() : nullptr;
    const T slope = static_cast<T>(o.negativeSlope);
    // PyG's edge_update: (alpha_j + alpha_i) + alpha_edge, then the leaky ReLU.
    T* alpha = Alpha.data<T>();
    auto logits = [&](int64_t i, int64_t lo, int64_t hi) {
      withHeads(H, [&](auto hw) { gatRowLogits(hw, L, i, lo, hi, as, ad, ae, al, slope, alpha); });
    };
    attend(L, V.data<T>(), logits, Alpha.data<T>(), Y.data<T>(), o.meanHeads,
           bias.defined() ? bias.value().data<T>() : nullptr);
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"gatAttention", terms * (2 * H * C + 20 * H),
                E * 16 + terms * (H * C + 2 * H) * elem + 2 * N * H * elem,
                static_cast<int64_t>(Y.nbytes() + Alpha.nbytes()), terms * (6 * H * C + 12 * H)};
    int edgeAt = -1, loopAt = -1;
    std::vector<Variable> inputs = attentionInputs({h, aSrc, aDst}, aEdge, aLoop, &edgeAt, &loopAt);
    const int biasAt = bias.defined() ? static_cast<int>(inputs.size()) : -1;
    if (bias.defined()) inputs.push_back(bias);
    std::vector<Tensor> saved{
        V, aSrc.value(), aDst.value(), ae ? aEdge.value() : Tensor(), al ? aLoop.value() : Tensor(), Alpha,
        MT};
    return Variable::record(
        info, Y, std::move(inputs), std::move(saved),
        [graph, H, slope, edgeAt, loopAt, biasAt, mh = o.meanHeads](
            const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          gatBackward<T>(gy, in, saved, *graph, H, slope, edgeAt, loopAt, mh, biasAt);
        });
  });
}
Variable headDot(const Variable& x, const Variable& att) {
  const Tensor& X = x.value();
  const auto [H, C] = headsOf("headDot", att.value());
  GNN_CHECK_ARG(X.rank() == 2 && X.dim(1) == H * C && X.isFloating() && att.dtype() == X.dtype(),
                "headDot: x ", dtypeName(X.dtype()), " ", shapeString(X.shape()), " against att ",
                dtypeName(att.dtype()), " ", shapeString(att.shape()));
  const int64_t N = X.dim(0), HC = H * C;
  return dispatchFloat(X.dtype(), [&, H = H, C = C](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({N, H}, X.dtype());
    const T *xp = X.data<T>(), *ap = att.value().data<T>();
    T* y = Y.data<T>();
    parallelFor(N, rowChunk(N, 2 * HC), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      kernels::withHeadRowDot<T>(H, C, [&](auto dot) {
        if constexpr (decltype(dot)::kRegisters) {
          dot.setFixed(ap);
          for (int64_t n = b; n < e; ++n) dot.dotsInto(xp + n * HC, y + n * H);
        } else {
          withWidth(C, [&](auto cw) {
            for (int64_t n = b; n < e; ++n) dotHeads(cw, xp + n * HC, ap, H, C, y + n * H);
          });
        }
      });
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"headDot", 2 * N * HC, (N + 1) * HC * elem, N * H * elem, 4 * N * HC};
    return Variable::record(
        info, Y, {x, att}, {X, att.value()},
        [H = H, C = C](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const Tensor& X = saved[0];
          const int64_t N = X.dim(0), HC = H * C;
          const T *xp = X.data<T>(), *ap = saved[1].data<T>(), *g = gy.data<T>();
          if (in[0].requiresGrad()) {
            Tensor G = Tensor::empty(X.shape(), X.dtype());
            T* o = G.data<T>();
            parallelFor(N, rowChunk(N, HC), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
              withWidth(C, [&](auto cw) {
                const int64_t Cw = widthOr(cw, C);
                for (int64_t n = b; n < e; ++n)
                  for (int64_t h = 0; h < H; ++h) {
                    const T gh = g[n * H + h];
                    T* __restrict on = o + n * HC + h * Cw;
                    const T* __restrict ah = ap + h * Cw;
                    for (int64_t c = 0; c < Cw; ++c) on[c] = gh * ah[c];
                  }
              });
            });
            in[0].addGrad(G);
          }
          if (in[1].requiresGrad()) {  // per chunk of rows, then the chunks' partial sums in order
            const int64_t chunk = rowChunk(N, 2 * HC), chunks = std::max<int64_t>(1, (N + chunk - 1) / chunk);
            Tensor P({chunks, HC}, X.dtype());
            T* p = P.data<T>();
            parallelFor(N, chunk, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
              T* __restrict pc = p + (b / chunk) * HC;
              kernels::withHeadRowSum<T>(H, C, [&](auto acc) {
                if constexpr (decltype(acc)::kRegisters) {
                  acc.load(pc);
                  for (int64_t n = b; n < e; ++n) acc.template add<false>(g + n * H, nullptr, xp + n * HC);
                  acc.store(pc);
                } else {
                  withWidth(C, [&](auto cw) {
                    for (int64_t n = b; n < e; ++n)
                      axpyHeads<false>(cw, pc, g + n * H, static_cast<const T*>(nullptr), xp + n * HC, H, C);
                  });
                }
              });
            });
            Tensor G = Tensor::empty(in[1].shape(), X.dtype());
            ops::sumChunkPartials(std::as_const(P).data<T>(), chunks, HC, G.data<T>());
            in[1].addGrad(G);
          }
        });
  });
}
}  // namespace gnn
