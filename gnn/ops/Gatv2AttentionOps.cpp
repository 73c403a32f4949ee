// GATv2's fused attention (GraphAttention.h; Brody et al. 2022, PyG's GATv2Conv) on the shared row kernels of
// GraphAttentionKernels.h: each term's logit is att . leakyRelu(xr[target] + xl[source] (+ edge term)) per
// head.
#include <algorithm>
#include <vector>

#include "gnn/ops/GraphAttention.h"
#include "gnn/ops/GraphAttentionKernels.h"

namespace gnn {
namespace {

using namespace graph_attention;

// One GATv2 term's pre-activation xr[i] + xl[s] (+ t when HasT), for head h's channel hc. Whether there is a
// t is a compile-time choice: a null test inside a simd loop becomes AVX-512 masked loads from the null
// pointer, each a microcode assist.
template <bool HasT, class T>
inline T preActivation(const T* xr, const T* xl, const T* t, int64_t hc) {
  const T pre = xr[hc] + xl[hc];
  if constexpr (HasT) return pre + t[hc];
  return pre;
}

// f(std::true_type) when t is not null, else f(std::false_type).
template <class T, class F>
inline void withTerm(const T* t, F&& f) {
  if (t) return f(std::true_type{});
  return f(std::false_type{});
}

// One GATv2 term's gradient through the per-head dot with att and the leaky ReLU: to the pre-activation
// (dpre, added to gri) and to att (added to part where not null); d holds the term's logit gradients. Head by
// head, so that d[h] is one broadcast (a per-channel head index made GCC gather it one float at a time).
// Always inlined into the row loop compiled per CPU level (GNN_CPU_CLONES in logitGrads).
template <class T>
__attribute__((always_inline)) inline void gatv2TermGrad(const T* __restrict xri, const T* __restrict xls,
                                                         const T* __restrict t, const T* __restrict att,
                                                         const T* __restrict d, int64_t H, int64_t C, T slope,
                                                         T* __restrict dpre, T* __restrict gri,
                                                         T* __restrict part) {
  withTerm(t, [&](auto hasT) {
    constexpr bool HasT = decltype(hasT)::value;
    for (int64_t h = 0; h < H; ++h) {
      const T dh = d[h];
      const int64_t o = h * C;
#pragma omp simd
      for (int64_t c = o; c < o + C; ++c) {
        const T pre = preActivation<HasT>(xri, xls, t, c);
        dpre[c] = dh * att[c] * leakyGrad(pre, slope);
        gri[c] += dpre[c];
      }
      if (part) {
#pragma omp simd
        for (int64_t c = o; c < o + C; ++c)
          part[c] = mulAdd(dh, leaky(preActivation<HasT>(xri, xls, t, c), slope), part[c]);
      }
    }
  });
}

// gatv2Attention's backward. saved: xl, xr, att, edgeTerm, loopTerm, alpha and the dropout mask (term order);
// inputs: xl, xr, att, then edgeTerm at edgeAt and loopTerm at loopAt.
template <class T>
void gatv2Backward(const Tensor& gyOut, std::vector<GradInput>& in, const std::vector<Tensor>& saved,
                   const AttentionGraph& G, int64_t H, T slope, int edgeAt, int loopAt, bool meanHeads) {
  const Tensor gy = headsGrad<T>(gyOut, H, meanHeads);
  const Tensor& XL = saved[0];
  const int64_t N = XL.dim(0), HC = XL.dim(1), C = HC / H;
  const Layout<T> L(G, H, C, saved[6]);
  const T *xl = XL.data<T>(), *xr = saved[1].data<T>(), *att = saved[2].data<T>();
  const T* et = saved[3].defined() ? saved[3].data<T>() : nullptr;
  const T* lt = saved[4].defined() ? saved[4].data<T>() : nullptr;
  const T *alpha = saved[5].data<T>(), *g = gy.data<T>();
  const DType dt = gy.dtype();
  Tensor DL = Tensor::empty({G.terms, H}, dt), DPre = Tensor::empty({G.terms, HC}, dt);
  Tensor Wq = Tensor::empty({G.terms, H}, dt);  // the dropped attention in source order
  Tensor GXr = Tensor::empty({N, HC}, dt);
  T *dl = DL.data<T>(), *dp = DPre.data<T>(), *gr = GXr.data<T>();
  const bool attGrad = in[2].requiresGrad();
  const int64_t chunk = L.chunk(6 * HC), chunks = (N + chunk - 1) / chunk;
  Tensor Partials = attGrad ? Tensor({chunks, HC}, dt) : Tensor();
  T* partials = attGrad ? Partials.data<T>() : nullptr;
  T* wq = Wq.data<T>();
  logitGrads(L, chunk, xl, g, alpha, dl, wq, [&](int64_t i, int64_t b) {
    T* __restrict gri = gr + i * HC;
    std::fill(gri, gri + HC, T(0));
    T* __restrict part = partials ? partials + (b / chunk) * HC : nullptr;
    // Through the per-head dot with att and the leaky ReLU, to the pre-activation's parts (and to att).
    for (int64_t k = L.dstPtr[i]; k < L.dstPtr[i + 1]; ++k) {
      const int64_t e = L.termEdge[k], s = L.termSrc[k];
      const T* t = e >= 0 ? (et ? et + e * HC : nullptr) : (lt ? lt + i * HC : nullptr);
      gatv2TermGrad(xr + i * HC, xl + s * HC, t, att, dl + k * H, H, C, slope, dp + k * HC, gri, part);
    }
  });
  if (in[0].requiresGrad()) {
    Tensor GXl = Tensor::empty({N, HC}, dt);
    T* gl = GXl.data<T>();
    sourceGrads(L, g, std::as_const(wq), gl, [&](int64_t j, int64_t q0, int64_t q1) {
      T* __restrict o = gl + j * HC;
      for (int64_t q = q0; q < q1; ++q) {
        const T* __restrict d = dp + L.outTerm[q] * HC;
        for (int64_t c = 0; c < HC; ++c) o[c] += d[c];
      }
    });
    in[0].addGrad(GXl);
  }
  if (in[1].requiresGrad()) in[1].addGrad(GXr);
  if (attGrad) {
    Tensor GAtt = Tensor::empty(in[2].shape(), dt);
    ops::sumChunkPartials(std::as_const(Partials).data<T>(), chunks, HC, GAtt.data<T>());
    in[2].addGrad(GAtt);
  }
  const bool edgeGrad = edgeAt >= 0 && in[edgeAt].requiresGrad(),
             loopGrad = loopAt >= 0 && in[loopAt].requiresGrad();
  if (edgeGrad || loopGrad) {
    auto [DPe, DPs] = termsToEdges(L, DPre, G.selfLoops);
    if (edgeGrad) in[edgeAt].addGrad(DPe);
    if (loopGrad) in[loopAt].addGrad(DPs);
  }
}
}  // namespace

Variable gatv2Attention(const Variable& xl, const Variable& xr, const Variable& att, const Tensor& edgeIndex,
                        const Variable& edgeTerm, const Variable& loopTerm, const GraphAttentionOptions& o) {
  const Tensor& XL = xl.value();
  GNN_CHECK_ARG(XL.rank() == 2 && XL.isFloating(),
                "gatv2Attention: xl must be a float [N, heads * C] tensor, got ", shapeString(XL.shape()));
  const auto [H, C] = headsOf("gatv2Attention", att.value());
  const int64_t N = XL.dim(0), HC = H * C;
  checkFloat2("gatv2Attention", "xl", XL, N, HC, XL.dtype());
  checkFloat2("gatv2Attention", "xr", xr.value(), N, HC, XL.dtype());
  GNN_CHECK_ARG(att.dtype() == XL.dtype(), "gatv2Attention: att is ", dtypeName(att.dtype()), ", xl ",
                dtypeName(XL.dtype()));
  GNN_CHECK_ARG(!loopTerm.defined() || o.selfLoops, "gatv2Attention: loopTerm is the added self-loops' term");
  const GraphPtr graph = attentionGraph("gatv2Attention", edgeIndex, N, o.selfLoops);
  const int64_t E = graph->E, terms = graph->terms;
  if (edgeTerm.defined()) checkFloat2("gatv2Attention", "edgeTerm", edgeTerm.value(), E, HC, XL.dtype());
  if (loopTerm.defined()) checkFloat2("gatv2Attention", "loopTerm", loopTerm.value(), N, HC, XL.dtype());
  Tensor ME, MS;  // named tensors (not structured bindings): the lambda below captures them
  std::tie(ME, MS) = attentionMasks(o, E, N, H, XL.dtype());
  return dispatchFloat(XL.dtype(), [&, H = H, C = C](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Alpha = Tensor::empty({terms, H}, XL.dtype()),
           Y = Tensor::empty({N, o.meanHeads ? C : HC}, XL.dtype());
    const Tensor MT = termMasks<T>(*graph, H, ME, MS);
    const Layout<T> L(*graph, H, C, MT);
    const T *pl = XL.data<T>(), *pr = xr.value().data<T>(), *pa = att.value().data<T>();
    const T* et = edgeTerm.defined() ? edgeTerm.value().data<T>() : nullptr;
    const T* lt = loopTerm.defined() ? loopTerm.value().data<T>() : nullptr;
    const T slope = static_cast<T>(o.negativeSlope);
    // PyG's message: leaky_relu(x_i + x_j (+ lin_edge(e))), then (. * att).sum(-1) per head.
    T* alpha = Alpha.data<T>();
    auto logits = [&](int64_t i, int64_t lo, int64_t hi) {
      T q[256];  // the activations of one term, then their per-head dots with att (in the same order as
                 // below)
      for (int64_t k = lo; k < hi; ++k) {
        const int64_t e = L.termEdge[k], s = L.termSrc[k];
        const T* t = e >= 0 ? (et ? et + e * HC : nullptr) : (lt ? lt + i * HC : nullptr);
        if (HC <= 256) {
          withTerm(t, [&](auto hasT) {
#pragma omp simd
            for (int64_t hc = 0; hc < HC; ++hc)
              q[hc] = leaky(preActivation<decltype(hasT)::value>(pr + i * HC, pl + s * HC, t, hc), slope);
          });
          withWidth(C, [&](auto cw) { dotHeads(cw, pa, static_cast<const T*>(q), H, C, alpha + k * H); });
          continue;
        }
        for (int64_t h = 0; h < H; ++h) {
          T acc = 0;
          for (int64_t hc = h * C; hc < (h + 1) * C; ++hc) {
            const T pre = t ? preActivation<true>(pr + i * HC, pl + s * HC, t, hc)
                            : preActivation<false>(pr + i * HC, pl + s * HC, t, hc);
            acc = mulAdd(pa[hc], leaky(pre, slope), acc);
          }
          alpha[k * H + h] = acc;
        }
      }
    };
    attend(L, pl, logits, Alpha.data<T>(), Y.data<T>(), o.meanHeads);
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"gatv2Attention", terms * (7 * HC + 16 * H), E * 16 + terms * 3 * HC * elem + N * HC * elem,
                static_cast<int64_t>(Y.nbytes() + Alpha.nbytes()), terms * (14 * HC + 12 * H)};
    int edgeAt = -1, loopAt = -1;
    std::vector<Variable> inputs = attentionInputs({xl, xr, att}, edgeTerm, loopTerm, &edgeAt, &loopAt);
    std::vector<Tensor> saved{
        XL,    xr.value(), att.value(), et ? edgeTerm.value() : Tensor(), lt ? loopTerm.value() : Tensor(),
        Alpha, MT};
    return Variable::record(
        info, Y, std::move(inputs), std::move(saved),
        [graph, H = H, slope, edgeAt, loopAt, mh = o.meanHeads](const Tensor& gy, std::vector<GradInput>& in,
                                                                const std::vector<Tensor>& saved) {
          gatv2Backward<T>(gy, in, saved, *graph, H, slope, edgeAt, loopAt, mh);
        });
  });
}
}  // namespace gnn
