// The machinery GAT's and GATv2's fused attention ops share (GraphAttentionOps.cpp, Gatv2AttentionOps.cpp):
// the terms of an attention grouped by target and by source (built once per graph, cached), one call's
// layout, and the row kernels of the forward (logits -> softmax -> weighted sum of source rows) and of the
// backward (target side, source side). Internal to gnn/ops: not part of the library's interface.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "gnn/kernels/HeadRowDot.h"
#include "gnn/kernels/HeadRowSum.h"
#include "gnn/ops/GraphAttention.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn::graph_attention {

using ops::mulAdd;

// ---- the terms of an attention, grouped by target and by source ----

// Term k of target i (dstPtr[i] <= k < dstPtr[i + 1]) reads source row termSrc[k] through edge termEdge[k]
// (-1: i's self term, the row's last). With self-loops added, the graph's own self-loop edges are no term:
// they carry no weight, as if PyG had removed them. The same terms grouped by source: outTerm[q] (srcPtr[j]
// <= q < srcPtr[j + 1]) is a term position whose target is outDst[q] (edge order, then the self term), and
// outPos[k] is where term k sits in that grouping.
struct AttentionGraph {
  int64_t N = 0, E = 0, terms = 0;
  bool selfLoops = true;
  std::vector<int64_t> dstPtr, termSrc, termEdge, srcPtr, outTerm, outDst, outPos;
};
using GraphPtr = std::shared_ptr<const AttentionGraph>;

/// The groupings of edgeIndex's terms for N nodes (with or without self terms), built on first use and kept
/// for the last few graphs; edges outside the N nodes are refused naming op.
GraphPtr attentionGraph(const char* op, const Tensor& edgeIndex, int64_t N, bool selfLoops);

// ---- the row kernels both attentions share ----

// One call's sizes, groupings and dropout masks as raw views.
template <class T>
struct Layout {
  int64_t N = 0, E = 0, H = 0, C = 0, HC = 0;
  const int64_t *dstPtr, *termSrc, *termEdge, *srcPtr, *outTerm, *outDst, *outPos;
  const T* maskTerms = nullptr;  // the attention dropout's mask in term order [terms, H], null = all 1
  Layout(const AttentionGraph& g, int64_t h, int64_t c, const Tensor& mt)
      : N(g.N),
        E(g.E),
        H(h),
        C(c),
        HC(h * c),
        dstPtr(g.dstPtr.data()),
        termSrc(g.termSrc.data()),
        termEdge(g.termEdge.data()),
        srcPtr(g.srcPtr.data()),
        outTerm(g.outTerm.data()),
        outDst(g.outDst.data()),
        outPos(g.outPos.data()) {
    maskTerms = mt.defined() ? mt.data<T>() : nullptr;
  }
  int64_t terms() const { return dstPtr[N]; }
  // Rows per parallel chunk of a per-row loop doing `perTerm` work for each of its terms.
  int64_t chunk(int64_t perTerm) const {
    return rowChunk(N, (terms() / std::max<int64_t>(N, 1) + 1) * perTerm);
  }
  // The dropout mask of term k, null = all 1.
  const T* mask(int64_t k) const { return maskTerms ? maskTerms + k * H : nullptr; }
};

// The dropout masks drawn per edge [E, H] and per node [N, H] (undefined: none) in term order [terms, H],
// once per call: the forward and the backward then read them in sequence rather than gathering by edge id.
template <class T>
Tensor termMasks(const AttentionGraph& g, int64_t H, const Tensor& maskEdges, const Tensor& maskSelf) {
  if (!maskEdges.defined()) return Tensor();
  Tensor out = Tensor::empty({g.terms, H}, maskEdges.dtype());
  const T* me = maskEdges.data<T>();
  const T* ms = maskSelf.defined() ? maskSelf.data<T>() : nullptr;
  T* o = out.data<T>();
  parallelFor(g.N, rowChunk(g.N, (g.terms / std::max<int64_t>(g.N, 1) + 1) * H),
              [&](int64_t b, int64_t e) GNN_CPU_CLONES {
                for (int64_t i = b; i < e; ++i)
                  for (int64_t k = g.dstPtr[i]; k < g.dstPtr[i + 1]; ++k) {
                    const int64_t edge = g.termEdge[k];
                    const T* from = edge >= 0 ? me + edge * H : ms + i * H;
                    std::copy(from, from + H, o + k * H);
                  }
              });
  return out;
}

// f(std::true_type) when the call has attention dropout masks (every term then has one), else
// f(std::false_type).
template <class T, class F>
inline void withMasks(const Layout<T>& L, F&& f) {
  if (L.maskTerms) return f(std::true_type{});
  return f(std::false_type{});
}

// Without a branch (a random sign mispredicts half the time), and exactly z or z * slope.
template <class T>
inline T leaky(T z, T slope) {
  return std::max(z, T(0)) + slope * std::min(z, T(0));
}

// The leaky ReLU's derivative at z: 1 where z > 0, else slope (PyTorch's, so slope at 0), chosen by bits: a
// random sign makes a branch mispredict half the time, and GCC keeps a branch in scalar remainder loops.
template <class T>
inline T leakyGrad(T z, T slope) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const U mask = U(0) - static_cast<U>(z > T(0));
  U one, other;
  const T unit = T(1);
  std::memcpy(&one, &unit, sizeof(T));
  std::memcpy(&other, &slope, sizeof(T));
  const U bits = (one & mask) | (other & ~mask);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

// Channels per head as a compile-time constant where it is small (1 .. 16, 32, 64; 0: only known at run
// time): f(std::integral_constant<int64_t, C or 0>). The per-head loops below then unroll into whole vectors.
template <int64_t CC = 16, class F>
inline void withWidth(int64_t C, F&& f) {
  if constexpr (CC == 16) {
    if (C == 64) return f(std::integral_constant<int64_t, 64>{});
    if (C == 32) return f(std::integral_constant<int64_t, 32>{});
  }
  if constexpr (CC == 0) {
    f(std::integral_constant<int64_t, 0>{});
  } else {
    if (C == CC) return f(std::integral_constant<int64_t, CC>{});
    withWidth<CC - 1>(C, std::forward<F>(f));
  }
}
template <class W>
constexpr int64_t widthOr(W, int64_t C) {
  return W::value ? W::value : C;
}

// o[h*C + c] += w[h] v[h*C + c] over H heads of C channels, w = a, times m when Masked. Whether there is a
// mask is a compile-time choice, not a null test per term: GCC turns `m ? a[h] * m[h] : a[h]` into an AVX-512
// masked load, which from a null m takes a microcode assist on every term (a fifth of an evaluation's time).
template <bool Masked, class T, class W>
__attribute__((always_inline)) inline void axpyHeads(W cw, T* __restrict o, const T* __restrict a,
                                                     const T* __restrict m, const T* __restrict v, int64_t H,
                                                     int64_t Crt) {
  const int64_t C = widthOr(cw, Crt);
  for (int64_t h = 0; h < H; ++h) {
    T w = a[h];
    if constexpr (Masked) w *= m[h];
// simd on the channels: left alone GCC vectorised over the heads, transposing every row in and out.
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) o[h * C + c] = mulAdd(w, v[h * C + c], o[h * C + c]);
  }
}

// out[h] = sum_c x[h*C + c] y[h*C + c] over H heads of C channels, in a fixed order: for C < 16 in increasing
// c; for wider heads in 8 interleaved partial sums (channel c into sum c mod 8) added pairwise at the end, so
// that a 64-channel dot is 8 independent chains of 8 FMAs rather than one chain of 64 (a quarter of the
// latency). With `scale` (H values), out[h] is the sum times scale[h], one rounding more: done here, per head,
// because a vector loop reading out[] right after these scalar stores waits for them (store forwarding fails:
// a third of GAT's backward once). Always inlined, as axpyHeads and softmaxRowsOf: called from the row loops'
// clones, a function of its own would run its baseline build.
template <class T, class W>
__attribute__((always_inline)) inline void dotHeads(W cw, const T* __restrict x, const T* __restrict y, int64_t H,
                                                    int64_t Crt, T* __restrict out,
                                                    const T* __restrict scale = nullptr) {
  const int64_t C = widthOr(cw, Crt);
  constexpr int64_t kLanes = 8;
  if (C < 2 * kLanes) {
    for (int64_t h = 0; h < H; ++h) {
      T acc = 0;
      for (int64_t c = 0; c < C; ++c) acc = mulAdd(x[h * C + c], y[h * C + c], acc);
      out[h] = scale ? acc * scale[h] : acc;
    }
    return;
  }
  for (int64_t h = 0; h < H; ++h) {
    const T* __restrict xh = x + h * C;
    const T* __restrict yh = y + h * C;
    T acc[kLanes] = {};
    int64_t c = 0;
    for (; c + kLanes <= C; c += kLanes) {
#pragma omp simd
      for (int64_t l = 0; l < kLanes; ++l) acc[l] = mulAdd(xh[c + l], yh[c + l], acc[l]);
    }
    for (int64_t l = 0; l < kLanes && c + l < C; ++l) acc[l] = mulAdd(xh[c + l], yh[c + l], acc[l]);
    for (int64_t w = kLanes / 2; w >= 1; w /= 2)
      for (int64_t l = 0; l < w; ++l) acc[l] += acc[l + w];
    out[h] = scale ? acc[0] * scale[h] : acc[0];
  }
}

// Heads as a compile-time constant for the usual counts (1, 2, 4, 8, 16; 0: only known at run time).
template <class F>
inline void withHeads(int64_t H, F&& f) {
  switch (H) {
    case 1:
      return f(std::integral_constant<int64_t, 1>{});
    case 2:
      return f(std::integral_constant<int64_t, 2>{});
    case 4:
      return f(std::integral_constant<int64_t, 4>{});
    case 8:
      return f(std::integral_constant<int64_t, 8>{});
    case 16:
      return f(std::integral_constant<int64_t, 16>{});
    default:
      return f(std::integral_constant<int64_t, 0>{});
  }
}

// The softmax of each head over the terms of rows [b, e), in place on their logits (alpha, term order, heads
// innermost): each row's maximum subtracted, then one vector exp over the whole range of rows (its terms are
// contiguous; each element's exp is the same code wherever it sits), then each row's sum divided out. With H
// a compile-time constant the row's maxima and sums live in a local array (registers), so each term's H
// divisions are one vector division; through the scratch pointer GCC kept them scalar (a quarter of the
// forward's time).
// Always inlined (as softmaxRows and softmaxTermsGrad): called from the row loops compiled per CPU level
// (GNN_CPU_CLONES), a function of its own would run its baseline build.
template <int64_t HK, class T>
__attribute__((always_inline)) inline void softmaxRowsOf(const Layout<T>& L, int64_t b, int64_t e,
                                                         T* __restrict alpha, T* __restrict scratch) {
  const int64_t H = HK ? HK : L.H;
  T local[HK ? HK : 1];
  T* __restrict m = HK ? local : scratch;
  for (int64_t i = b; i < e; ++i) {
    T* __restrict a = alpha + L.dstPtr[i] * H;
    const int64_t n = L.dstPtr[i + 1] - L.dstPtr[i];
    for (int64_t h = 0; h < H; ++h) m[h] = -std::numeric_limits<T>::infinity();
    for (int64_t t = 0; t < n; ++t)
      for (int64_t h = 0; h < H; ++h) m[h] = std::max(m[h], a[t * H + h]);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t h = 0; h < H; ++h) a[t * H + h] -= m[h];
  }
  T* all = alpha + L.dstPtr[b] * H;
  ops::vectorBlocks<T>((L.dstPtr[e] - L.dstPtr[b]) * H, [](auto z) { return z.exp(); }, all,
                       static_cast<const T*>(all));
  for (int64_t i = b; i < e; ++i) {
    T* __restrict a = alpha + L.dstPtr[i] * H;
    const int64_t n = L.dstPtr[i + 1] - L.dstPtr[i];
    for (int64_t h = 0; h < H; ++h) m[h] = 0;
    for (int64_t t = 0; t < n; ++t)
      for (int64_t h = 0; h < H; ++h) m[h] += a[t * H + h];
    for (int64_t t = 0; t < n; ++t)
      for (int64_t h = 0; h < H; ++h) a[t * H + h] /= m[h];
  }
}
template <class T>
__attribute__((always_inline)) inline void softmaxRows(const Layout<T>& L, int64_t b, int64_t e, T* alpha, T* m) {
  withHeads(L.H, [&](auto hw) { softmaxRowsOf<decltype(hw)::value>(L, b, e, alpha, m); });
}

// The softmax's backward over one row's n terms, in place: d = a (d - sum_t a_t d_t) per head.
template <class T>
__attribute__((always_inline)) inline void softmaxTermsGrad(const T* __restrict a, T* __restrict d, int64_t n,
                                                            int64_t Hrt, T* __restrict s) {
  withHeads(Hrt, [&](auto hw) {
    const int64_t H = widthOr(hw, Hrt);
    for (int64_t h = 0; h < H; ++h) s[h] = 0;
    for (int64_t t = 0; t < n; ++t)
      for (int64_t h = 0; h < H; ++h) s[h] = mulAdd(a[t * H + h], d[t * H + h], s[h]);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t h = 0; h < H; ++h) d[t * H + h] = a[t * H + h] * (d[t * H + h] - s[h]);
  });
}

// The forward of both attentions: logits(i, lo, hi) writes the H logits of row i's terms lo .. hi - 1 into
// alpha (term order); then a chunk of rows' softmax, and each row's softmax and out[i] = sum over its terms
// of the (dropped) attention times V's source row (averaged over the heads with meanHeads), plus bias where not
// null (the bits of add(out, bias): one addition per element after the rest).
template <class T, class Logits>
void attend(const Layout<T>& L, const T* V, Logits logits, T* alpha, T* out, bool meanHeads,
            const T* bias = nullptr) {
  const int64_t H = L.H, C = L.C, HC = L.HC;
  parallelFor(L.N, L.chunk(3 * HC + 16 * H), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    std::vector<T> scratch(static_cast<size_t>(H + (meanHeads ? HC : 0)));
    T* m = scratch.data();
    for (int64_t i = b; i < e; ++i) logits(i, L.dstPtr[i], L.dstPtr[i + 1]);
    softmaxRows(L, b, e, alpha, m);
    // Row i's sum o, then its mean over the heads (as meanAxis: the heads added in order from 0, then divided
    // by their count) and its bias.
    auto finish = [&](int64_t i, const T* __restrict o) {
      if (meanHeads) {
        T* __restrict y = out + i * C;
        std::fill(y, y + C, T(0));
        for (int64_t h = 0; h < H; ++h)
          for (int64_t c = 0; c < C; ++c) y[c] += o[h * C + c];
        for (int64_t c = 0; c < C; ++c) y[c] /= static_cast<T>(H);
      }
      if (bias) {
        T* __restrict y = out + i * (meanHeads ? C : HC);
        const T* __restrict bb = bias;
        for (int64_t c = 0; c < (meanHeads ? C : HC); ++c) y[c] += bb[c];
      }
    };
    withMasks(L, [&](auto masked) {
      constexpr bool Masked = decltype(masked)::value;
      kernels::withHeadRowSum<T>(H, C, [&](auto acc) {
        if constexpr (decltype(acc)::kRegisters) {
          for (int64_t i = b; i < e; ++i) {
            acc.zero();
            for (int64_t k = L.dstPtr[i]; k < L.dstPtr[i + 1]; ++k)
              acc.template add<Masked>(alpha + k * H, Masked ? L.mask(k) : nullptr, V + L.termSrc[k] * HC);
            T* o = meanHeads ? m + H : out + i * HC;
            acc.store(o);
            finish(i, o);
          }
        } else {
          withWidth(C, [&](auto cw) {
            for (int64_t i = b; i < e; ++i) {
              T* __restrict o = meanHeads ? m + H : out + i * HC;
              std::fill(o, o + HC, T(0));
              for (int64_t k = L.dstPtr[i]; k < L.dstPtr[i + 1]; ++k)
                axpyHeads<Masked>(cw, o, alpha + k * H, Masked ? L.mask(k) : nullptr, V + L.termSrc[k] * HC,
                                  H, C);
              finish(i, o);
            }
          });
        }
      });
    });
  });
}

// Column sums of g [N, W] (a bias's gradient) shaped as `shape`: per chunk of rows (the chunks fixed by the
// shape), then the chunks' partial sums in order, so the bits do not depend on the thread count.
template <class T>
Tensor columnSums(const Tensor& g, const Shape& shape) {
  const int64_t N = g.dim(0), W = g.dim(1);
  const int64_t chunk = rowChunk(N, W), chunks = std::max<int64_t>(1, (N + chunk - 1) / chunk);
  Tensor P({chunks, W}, g.dtype());
  const T* gp = g.data<T>();
  T* p = P.data<T>();
  parallelFor(N, chunk, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    T* __restrict pc = p + (b / chunk) * W;
    for (int64_t n = b; n < e; ++n)
      for (int64_t w = 0; w < W; ++w) pc[w] += gp[n * W + w];
  });
  Tensor G = Tensor::empty(shape, g.dtype());
  ops::sumChunkPartials(std::as_const(P).data<T>(), chunks, W, G.data<T>());
  return G;
}

// The gradient of the attention's [N, heads * C] output: gy itself, or with meanHeads gy [N, C] spread over
// the heads times 1 / heads (as meanAxis's backward).
template <class T>
Tensor headsGrad(const Tensor& gy, int64_t H, bool meanHeads) {
  if (!meanHeads) return gy;
  const int64_t N = gy.dim(0), C = gy.dim(1);
  Tensor G = Tensor::empty({N, H * C}, gy.dtype());
  const T* g = gy.data<T>();
  T* o = G.data<T>();
  const T scale = T(1) / static_cast<T>(H);
  parallelFor(N, rowChunk(N, H * C), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t c = 0; c < C; ++c) o[(i * H + h) * C + c] = g[i * C + c] * scale;
  });
  return G;
}

// The backward's target side: for each target row, the gradient of each term's logit (softmax backward of the
// dropped attention's gradient gy[i] . V[source]) into dl (term order), then rowDone(i, chunkBegin) in the
// same thread (the layer-specific gradients of the logit's parts). Also copies the dropped attention to wq in
// source order (outPos), so that the source side reads it in sequence rather than gathering it.
template <class T, class RowDone>
void logitGrads(const Layout<T>& L, int64_t chunk, const T* V, const T* gy, const T* alpha, T* dl, T* wq,
                RowDone rowDone) {
  const int64_t H = L.H, HC = L.HC;
  parallelFor(L.N, chunk, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    std::vector<T> scratch(static_cast<size_t>(H));
    T* s = scratch.data();
    withMasks(L, [&](auto masked) {
      constexpr bool Masked = decltype(masked)::value;
      // Row i's terms: dl = the dots (times the mask), wq = the dropped attention in source order.
      auto row = [&](int64_t i, auto&& termDots) {
        const int64_t lo = L.dstPtr[i], hi = L.dstPtr[i + 1];
        for (int64_t k = lo; k < hi; ++k) {
          termDots(k, dl + k * H);
          const T* __restrict a = alpha + k * H;
          T* __restrict w = wq + L.outPos[k] * H;
          if constexpr (Masked) {
            const T* __restrict m = L.mask(k);
            for (int64_t h = 0; h < H; ++h) w[h] = a[h] * m[h];
          } else {
            std::copy(a, a + H, w);
          }
        }
        softmaxTermsGrad(alpha + lo * H, dl + lo * H, hi - lo, H, s);
        rowDone(i, b);
      };
      kernels::withHeadRowDot<T>(H, L.C, [&](auto dot) {
        if constexpr (decltype(dot)::kRegisters) {
          for (int64_t i = b; i < e; ++i) {
            dot.setFixed(gy + i * HC);
            row(i, [&](int64_t k, T* d) {
              dot.template dotsInto<Masked>(V + L.termSrc[k] * HC, d, Masked ? L.mask(k) : nullptr);
            });
          }
        } else {
          withWidth(L.C, [&](auto cw) {
            for (int64_t i = b; i < e; ++i)
              row(i, [&](int64_t k, T* __restrict d) {
                dotHeads(cw, gy + i * HC, V + L.termSrc[k] * HC, H, L.C, d);
                if constexpr (Masked) {
                  const T* __restrict m = L.mask(k);
                  for (int64_t h = 0; h < H; ++h) d[h] *= m[h];
                }
              });
          });
        }
      });
    });
  });
}

// The backward's source side: gV[j] = sum over j's outgoing terms of their dropped attention (wq, source
// order) times gy at the target, then rowDone(j, q0, q1) adds the layer-specific sums over row j's terms
// outTerm[q0 .. q1).
template <class T, class RowDone>
void sourceGrads(const Layout<T>& L, const T* gy, const T* wq, T* gV, RowDone rowDone) {
  const int64_t HC = L.HC;
  parallelFor(L.N, L.chunk(3 * HC), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    kernels::withHeadRowSum<T>(L.H, L.C, [&](auto acc) {
      if constexpr (decltype(acc)::kRegisters) {
        for (int64_t j = b; j < e; ++j) {
          acc.zero();
          for (int64_t q = L.srcPtr[j]; q < L.srcPtr[j + 1]; ++q)
            acc.template add<false>(wq + q * L.H, nullptr, gy + L.outDst[q] * HC);
          acc.store(gV + j * HC);
          rowDone(j, L.srcPtr[j], L.srcPtr[j + 1]);
        }
      } else {
        withWidth(L.C, [&](auto cw) {
          for (int64_t j = b; j < e; ++j) {
            T* __restrict o = gV + j * HC;
            std::fill(o, o + HC, T(0));
            for (int64_t q = L.srcPtr[j]; q < L.srcPtr[j + 1]; ++q)
              axpyHeads<false>(cw, o, wq + q * L.H, static_cast<const T*>(nullptr), gy + L.outDst[q] * HC,
                               L.H, L.C);
            rowDone(j, L.srcPtr[j], L.srcPtr[j + 1]);
          }
        });
      }
    });
  });
}

// Rows of a term-ordered [terms, W] tensor to edge order [E, W] (edges without a term: zeros) and to the self
// terms' [N, W] (when there are self terms).
template <class T>
std::pair<Tensor, Tensor> termsToEdges(const Layout<T>& L, const Tensor& byTerm, bool selfLoops) {
  const int64_t W = byTerm.dim(1);
  Tensor edges({L.E, W}, byTerm.dtype()),
      self = selfLoops ? Tensor::empty({L.N, W}, byTerm.dtype()) : Tensor();
  const T* src = byTerm.data<T>();
  T* pe = edges.data<T>();
  T* ps = selfLoops ? self.data<T>() : nullptr;
  parallelFor(L.N, L.chunk(W), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i)
      for (int64_t k = L.dstPtr[i]; k < L.dstPtr[i + 1]; ++k) {
        const int64_t edge = L.termEdge[k];
        T* to = edge >= 0 ? pe + edge * W : ps + i * W;
        std::copy(src + k * W, src + (k + 1) * W, to);
      }
  });
  return {edges, self};
}

// The dropout masks of the attention in training (else undefined): the edges' [E, H] and the self terms' [N,
// H], each its own stream, so that a real edge's or node's draw does not move when padding adds edges and
// nodes after the real ones.
std::pair<Tensor, Tensor> attentionMasks(const GraphAttentionOptions& o, int64_t E, int64_t N, int64_t H,
                                         DType dtype);

void checkFloat2(const char* op, const char* what, const Tensor& t, int64_t rows, int64_t cols, DType dtype);

// Heads and channels of an attention vector [H, C] or [1, H, C].
std::pair<int64_t, int64_t> headsOf(const char* op, const Tensor& att);

// The inputs of an attention op (the optional ones only when defined) and where the optional ones sit.
std::vector<Variable> attentionInputs(const std::vector<Variable>& required, const Variable& edge,
                                      const Variable& loop, int* edgeAt, int* loopAt);

}  // namespace gnn::graph_attention
