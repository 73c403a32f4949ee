// Graph attention ops (GraphAttention.h): GAT's and GATv2's fused attention and per-head dot products (the edge
// features of added self-loops: SelfLoopAttrOps.cpp). The attention runs per target row over the row's terms (its kept edges in edge
// order, then its self term), stored contiguously in target order: each row's logits, maximum, exponentials
// (vectorised, heads innermost), sum and weighted sum of source rows; the backward's source-side sums run per
// source row over the same terms grouped by source. No atomics: every output row is written by one thread in a
// fixed order. The two groupings are built once per graph (O(E) counting sorts) and cached by the edge_index
// tensor's storage, view and version.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gnn/ops/GraphAttention.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using ops::mulAdd;

using ops::checkEdgeIndex;

// ---- the terms of an attention, grouped by target and by source ----

// Term k of target i (dstPtr[i] <= k < dstPtr[i + 1]) reads source row termSrc[k] through edge termEdge[k]
// (-1: i's self term, the row's last). With self-loops added, the graph's own self-loop edges are no term: they
// carry no weight, as if PyG had removed them. The same terms grouped by source: outTerm[q] (srcPtr[j] <= q <
// srcPtr[j + 1]) is a term position whose target is outDst[q] (edge order, then the self term), and outPos[k]
// is where term k sits in that grouping.
struct AttentionGraph {
  int64_t N = 0, E = 0, terms = 0;
  bool selfLoops = true;
  std::vector<int64_t> dstPtr, termSrc, termEdge, srcPtr, outTerm, outDst, outPos;
};
using GraphPtr = std::shared_ptr<const AttentionGraph>;

GraphPtr buildGraph(const char* op, const Tensor& edgeIndex, int64_t N, bool selfLoops) {
  auto g = std::make_shared<AttentionGraph>();
  const int64_t E = edgeIndex.dim(1);
  const int64_t* s = std::as_const(edgeIndex).data<int64_t>();
  const int64_t* d = s + E;
  for (int64_t e = 0; e < E; ++e)
    GNN_CHECK_ARG(s[e] >= 0 && s[e] < N && d[e] >= 0 && d[e] < N, op, ": edge ", e, " (", s[e], " -> ", d[e],
                  ") is outside the ", N, " nodes");
  g->N = N;
  g->E = E;
  g->selfLoops = selfLoops;
  auto kept = [&](int64_t e) { return !(selfLoops && s[e] == d[e]); };
  const int64_t self = selfLoops ? 1 : 0;
  g->dstPtr.assign(N + 1, 0);
  g->srcPtr.assign(N + 1, 0);
  for (int64_t e = 0; e < E; ++e)
    if (kept(e)) ++g->dstPtr[d[e] + 1], ++g->srcPtr[s[e] + 1];
  for (int64_t i = 0; i < N; ++i) {
    g->dstPtr[i + 1] += g->dstPtr[i] + self;
    g->srcPtr[i + 1] += g->srcPtr[i] + self;
  }
  const int64_t T = g->dstPtr[N];
  g->terms = T;
  g->termSrc.resize(T);
  g->termEdge.resize(T);
  g->outTerm.resize(T);
  g->outDst.resize(T);
  g->outPos.resize(T);
  std::vector<int64_t> next(g->dstPtr.begin(), g->dstPtr.end() - 1), pos(E, -1);
  for (int64_t e = 0; e < E; ++e)
    if (kept(e)) {
      const int64_t k = next[d[e]]++;
      g->termSrc[k] = s[e];
      g->termEdge[k] = e;
      pos[e] = k;
    }
  std::vector<int64_t> nextOut(g->srcPtr.begin(), g->srcPtr.end() - 1);
  for (int64_t e = 0; e < E; ++e)
    if (kept(e)) {
      const int64_t q = nextOut[s[e]]++;
      g->outTerm[q] = pos[e];
      g->outPos[pos[e]] = q;
      g->outDst[q] = d[e];
    }
  if (selfLoops)
    for (int64_t i = 0; i < N; ++i) {
      const int64_t k = g->dstPtr[i + 1] - 1, q = g->srcPtr[i + 1] - 1;
      g->termSrc[k] = i;
      g->termEdge[k] = -1;
      g->outTerm[q] = k;
      g->outPos[k] = q;
      g->outDst[q] = i;
    }
  return g;
}

// The last few graphs' groupings (a training loop calls the attention with one edge_index many times). An entry
// holds its edge_index, so no other buffer can take its storage's identity; the version says whether it was
// written since.
class GraphCache {
 public:
  GraphPtr get(const char* op, const Tensor& edgeIndex, int64_t N, bool selfLoops) {
    checkEdgeIndex(op, edgeIndex);
    const uint64_t version = edgeIndex.version();  // read before the build: a racing write makes the next rebuild
    const void* data = std::as_const(edgeIndex).raw();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const Entry& e : entries_)
        if (e.edgeIndex.storageId() == edgeIndex.storageId() && e.data == data && e.version == version &&
            e.edgeIndex.shape() == edgeIndex.shape() && e.N == N && e.selfLoops == selfLoops)
          return e.graph;
    }
    GraphPtr g = buildGraph(op, edgeIndex, N, selfLoops);
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_front({edgeIndex, data, version, N, selfLoops, g});
    if (entries_.size() > kCapacity) entries_.pop_back();
    return g;
  }

 private:
  static constexpr size_t kCapacity = 4;
  struct Entry {
    Tensor edgeIndex;
    const void* data;
    uint64_t version;
    int64_t N;
    bool selfLoops;
    GraphPtr graph;
  };
  std::mutex mu_;
  std::deque<Entry> entries_;
};

GraphPtr attentionGraph(const char* op, const Tensor& edgeIndex, int64_t N, bool selfLoops) {
  static GraphCache cache;
  return cache.get(op, edgeIndex, N, selfLoops);
}

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
  int64_t chunk(int64_t perTerm) const { return rowChunk(N, (terms() / std::max<int64_t>(N, 1) + 1) * perTerm); }
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
  parallelFor(g.N, rowChunk(g.N, (g.terms / std::max<int64_t>(g.N, 1) + 1) * H), [&](int64_t b, int64_t e) {
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

// Channels per head as a compile-time constant where it is small (1 .. 16, 32, 64; 0: only known at run time):
// f(std::integral_constant<int64_t, C or 0>). The per-head loops below then unroll into whole vectors.
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
inline void axpyHeads(W cw, T* __restrict o, const T* __restrict a, const T* __restrict m,
                      const T* __restrict v, int64_t H, int64_t Crt) {
  const int64_t C = widthOr(cw, Crt);
  for (int64_t h = 0; h < H; ++h) {
    T w = a[h];
    if constexpr (Masked) w *= m[h];
// simd on the channels: left alone GCC vectorised over the heads, transposing every row in and out.
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) o[h * C + c] = mulAdd(w, v[h * C + c], o[h * C + c]);
  }
}

// out[h] = sum_c x[h*C + c] y[h*C + c] over H heads of C channels, in a fixed order: for C < 16 in increasing c;
// for wider heads in 8 interleaved partial sums (channel c into sum c mod 8) added pairwise at the end, so that
// a 64-channel dot is 8 independent chains of 8 FMAs rather than one chain of 64 (a quarter of the latency).
template <class T, class W>
inline void dotHeads(W cw, const T* __restrict x, const T* __restrict y, int64_t H, int64_t Crt, T* __restrict out) {
  const int64_t C = widthOr(cw, Crt);
  constexpr int64_t kLanes = 8;
  if (C < 2 * kLanes) {
    for (int64_t h = 0; h < H; ++h) {
      T acc = 0;
      for (int64_t c = 0; c < C; ++c) acc = mulAdd(x[h * C + c], y[h * C + c], acc);
      out[h] = acc;
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
    for (int64_t l = 0; c < C; ++c, ++l) acc[l] = mulAdd(xh[c], yh[c], acc[l]);
    for (int64_t w = kLanes / 2; w >= 1; w /= 2)
      for (int64_t l = 0; l < w; ++l) acc[l] += acc[l + w];
    out[h] = acc[0];
  }
}

// Heads as a compile-time constant for the usual counts (1, 2, 4, 8, 16; 0: only known at run time).
template <class F>
inline void withHeads(int64_t H, F&& f) {
  switch (H) {
    case 1: return f(std::integral_constant<int64_t, 1>{});
    case 2: return f(std::integral_constant<int64_t, 2>{});
    case 4: return f(std::integral_constant<int64_t, 4>{});
    case 8: return f(std::integral_constant<int64_t, 8>{});
    case 16: return f(std::integral_constant<int64_t, 16>{});
    default: return f(std::integral_constant<int64_t, 0>{});
  }
}

// The softmax of each head over the terms of rows [b, e), in place on their logits (alpha, term order, heads
// innermost): each row's maximum subtracted, then one vector exp over the whole range of rows (its terms are
// contiguous; each element's exp is the same code wherever it sits), then each row's sum divided out. With H
// a compile-time constant the row's maxima and sums live in a local array (registers), so each term's H
// divisions are one vector division; through the scratch pointer GCC kept them scalar (a quarter of the
// forward's time).
template <int64_t HK, class T>
void softmaxRowsOf(const Layout<T>& L, int64_t b, int64_t e, T* __restrict alpha, T* __restrict scratch) {
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
  ops::packetLoop<T>((L.dstPtr[e] - L.dstPtr[b]) * H, [](auto p) { return Eigen::internal::pexp(p); }, all,
                     all);
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
void softmaxRows(const Layout<T>& L, int64_t b, int64_t e, T* alpha, T* m) {
  withHeads(L.H, [&](auto hw) { softmaxRowsOf<decltype(hw)::value>(L, b, e, alpha, m); });
}

// The softmax's backward over one row's n terms, in place: d = a (d - sum_t a_t d_t) per head.
template <class T>
void softmaxTermsGrad(const T* __restrict a, T* __restrict d, int64_t n, int64_t Hrt, T* __restrict s) {
  withHeads(Hrt, [&](auto hw) {
    const int64_t H = widthOr(hw, Hrt);
    for (int64_t h = 0; h < H; ++h) s[h] = 0;
    for (int64_t t = 0; t < n; ++t)
      for (int64_t h = 0; h < H; ++h) s[h] = mulAdd(a[t * H + h], d[t * H + h], s[h]);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t h = 0; h < H; ++h) d[t * H + h] = a[t * H + h] * (d[t * H + h] - s[h]);
  });
}

// The forward of both attentions: logits(i, lo, hi) writes the H logits of row i's terms lo .. hi - 1 into alpha
// (term order); then a chunk of rows' softmax, and each row's
// softmax and out[i] = sum over its terms of the (dropped) attention times V's source row.
template <class T, class Logits>
void attend(const Layout<T>& L, const T* V, Logits logits, T* alpha, T* out, bool meanHeads) {
  const int64_t H = L.H, C = L.C, HC = L.HC;
  parallelFor(L.N, L.chunk(3 * HC + 16 * H), [&](int64_t b, int64_t e) {
    std::vector<T> scratch(static_cast<size_t>(H + (meanHeads ? HC : 0)));
    T* m = scratch.data();
    for (int64_t i = b; i < e; ++i) logits(i, L.dstPtr[i], L.dstPtr[i + 1]);
    softmaxRows(L, b, e, alpha, m);
    withMasks(L, [&](auto masked) {
      withWidth(C, [&](auto cw) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t lo = L.dstPtr[i], hi = L.dstPtr[i + 1];
          T* __restrict o = meanHeads ? m + H : out + i * HC;
          std::fill(o, o + HC, T(0));
          for (int64_t k = lo; k < hi; ++k)
            axpyHeads<decltype(masked)::value>(cw, o, alpha + k * H,
                                               decltype(masked)::value ? L.mask(k) : nullptr,
                                               V + L.termSrc[k] * HC, H, C);
          if (meanHeads) {  // as meanAxis: the heads added in order from 0, then divided by their count
            T* __restrict y = out + i * C;
            std::fill(y, y + C, T(0));
            for (int64_t h = 0; h < H; ++h)
              for (int64_t c = 0; c < C; ++c) y[c] += o[h * C + c];
            for (int64_t c = 0; c < C; ++c) y[c] /= static_cast<T>(H);
          }
        }
      });
    });
  });
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
  parallelFor(N, rowChunk(N, H * C), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t c = 0; c < C; ++c) o[(i * H + h) * C + c] = g[i * C + c] * scale;
  });
  return G;
}

// The backward's target side: for each target row, the gradient of each term's logit (softmax backward of the
// dropped attention's gradient gy[i] . V[source]) into dl (term order), then rowDone(i, chunkBegin) in the same
// thread (the layer-specific gradients of the logit's parts). Also copies the dropped attention to wq in source
// order (outPos), so that the source side reads it in sequence rather than gathering it.
template <class T, class RowDone>
void logitGrads(const Layout<T>& L, int64_t chunk, const T* V, const T* gy, const T* alpha, T* dl, T* wq,
                RowDone rowDone) {
  const int64_t H = L.H, HC = L.HC;
  parallelFor(L.N, chunk, [&](int64_t b, int64_t e) {
    std::vector<T> scratch(static_cast<size_t>(H));
    T* s = scratch.data();
    withMasks(L, [&](auto masked) {
      withWidth(L.C, [&](auto cw) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t lo = L.dstPtr[i], hi = L.dstPtr[i + 1];
          const T* __restrict g = gy + i * HC;
          for (int64_t k = lo; k < hi; ++k) {
            T* __restrict d = dl + k * H;
            dotHeads(cw, g, V + L.termSrc[k] * HC, H, L.C, d);
            const T* __restrict a = alpha + k * H;
            T* __restrict w = wq + L.outPos[k] * H;
            if constexpr (decltype(masked)::value) {
              const T* __restrict m = L.mask(k);
              for (int64_t h = 0; h < H; ++h) d[h] *= m[h];
              for (int64_t h = 0; h < H; ++h) w[h] = a[h] * m[h];
            } else {
              std::copy(a, a + H, w);
            }
          }
          softmaxTermsGrad(alpha + lo * H, dl + lo * H, hi - lo, H, s);
          rowDone(i, b);
        }
      });
    });
  });
}

// The backward's source side: gV[j] = sum over j's outgoing terms of their dropped attention (wq, source order)
// times gy at the target, then rowDone(j, q0, q1) adds the layer-specific sums over row j's terms outTerm[q0 ..
// q1).
template <class T, class RowDone>
void sourceGrads(const Layout<T>& L, const T* gy, const T* wq, T* gV, RowDone rowDone) {
  const int64_t HC = L.HC;
  parallelFor(L.N, L.chunk(3 * HC), [&](int64_t b, int64_t e) {
    withWidth(L.C, [&](auto cw) {
      for (int64_t j = b; j < e; ++j) {
        T* __restrict o = gV + j * HC;
        std::fill(o, o + HC, T(0));
        for (int64_t q = L.srcPtr[j]; q < L.srcPtr[j + 1]; ++q)
          axpyHeads<false>(cw, o, wq + q * L.H, static_cast<const T*>(nullptr), gy + L.outDst[q] * HC, L.H,
                           L.C);
        rowDone(j, L.srcPtr[j], L.srcPtr[j + 1]);
      }
    });
  });
}

// Rows of a term-ordered [terms, W] tensor to edge order [E, W] (edges without a term: zeros) and to the self
// terms' [N, W] (when there are self terms).
template <class T>
std::pair<Tensor, Tensor> termsToEdges(const Layout<T>& L, const Tensor& byTerm, bool selfLoops) {
  const int64_t W = byTerm.dim(1);
  Tensor edges({L.E, W}, byTerm.dtype()), self = selfLoops ? Tensor::empty({L.N, W}, byTerm.dtype()) : Tensor();
  const T* src = byTerm.data<T>();
  T* pe = edges.data<T>();
  T* ps = selfLoops ? self.data<T>() : nullptr;
  parallelFor(L.N, L.chunk(W), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      for (int64_t k = L.dstPtr[i]; k < L.dstPtr[i + 1]; ++k) {
        const int64_t edge = L.termEdge[k];
        T* to = edge >= 0 ? pe + edge * W : ps + i * W;
        std::copy(src + k * W, src + (k + 1) * W, to);
      }
  });
  return {edges, self};
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

// (The head loops with a select are `omp simd`: with H a constant GCC would otherwise unroll them into scalar
// code with unpredictable branches.)
// GAT's logits of row i's terms lo .. hi - 1: leakyRelu((aSrc[source] + aDst[i]) + x), x = aEdge[edge] (aLoop[i]
// for the self term) where given.
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
void gatLeakyGrad(HW hw, const Layout<T>& L, int64_t i, const T* as, const T* ad, const T* ae, const T* al, T slope,
                  T* dz, T* dzq, T* __restrict gdi) {
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

// gatAttention's backward. saved: V, aSrc, aDst, aEdge, aLoop, alpha and the dropout mask (term order);
// inputs: h, aSrc, aDst, then aEdge at edgeAt and aLoop at loopAt (-1: absent).
template <class T>
void gatBackward(const Tensor& gyOut, std::vector<GradInput>& in, const std::vector<Tensor>& saved,
                 const AttentionGraph& G, int64_t H, T slope, int edgeAt, int loopAt, bool meanHeads) {
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
  const bool edgeGrad = edgeAt >= 0 && in[edgeAt].requiresGrad(), loopGrad = loopAt >= 0 && in[loopAt].requiresGrad();
  if (edgeGrad || loopGrad) {
    auto [DZe, DZs] = termsToEdges(L, DZ, G.selfLoops);
    if (edgeGrad) in[edgeAt].addGrad(DZe);
    if (loopGrad) in[loopAt].addGrad(DZs);
  }
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
  const GraphPtr graph = attentionGraph("gatAttention", edgeIndex, N, o.selfLoops);
  const int64_t E = graph->E, terms = graph->terms;
  if (aEdge.defined()) checkFloat2("gatAttention", "aEdge", aEdge.value(), E, H, V.dtype());
  if (aLoop.defined()) checkFloat2("gatAttention", "aLoop", aLoop.value(), N, H, V.dtype());
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
    attend(L, V.data<T>(), logits, Alpha.data<T>(), Y.data<T>(), o.meanHeads);
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"gatAttention", terms * (2 * H * C + 20 * H),
                E * 16 + terms * (H * C + 2 * H) * elem + 2 * N * H * elem,
                static_cast<int64_t>(Y.nbytes() + Alpha.nbytes()), terms * (6 * H * C + 12 * H)};
    int edgeAt = -1, loopAt = -1;
    std::vector<Variable> inputs = attentionInputs({h, aSrc, aDst}, aEdge, aLoop, &edgeAt, &loopAt);
    std::vector<Tensor> saved{
        V, aSrc.value(), aDst.value(), ae ? aEdge.value() : Tensor(), al ? aLoop.value() : Tensor(), Alpha,
        MT};
    return Variable::record(
        info, Y, std::move(inputs), std::move(saved),
        [graph, H, slope, edgeAt, loopAt, mh = o.meanHeads](const Tensor& gy, std::vector<GradInput>& in,
                                                            const std::vector<Tensor>& saved) {
          gatBackward<T>(gy, in, saved, *graph, H, slope, edgeAt, loopAt, mh);
        });
  });
}

namespace {
// One GATv2 term's pre-activation xr[i] + xl[s] (+ t when HasT), for head h's channel hc. Whether there is a t
// is a compile-time choice: a null test inside a simd loop becomes AVX-512 masked loads from the null pointer,
// each a microcode assist.
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

// One GATv2 term's gradient through the per-head dot with att and the leaky ReLU: to the pre-activation (dpre,
// added to gri) and to att (added to part where not null); d holds the term's logit gradients. Head by head, so
// that d[h] is one broadcast (a per-channel head index made GCC gather it one float at a time).
template <class T>
void gatv2TermGrad(const T* __restrict xri, const T* __restrict xls, const T* __restrict t, const T* __restrict att,
                   const T* __restrict d, int64_t H, int64_t C, T slope, T* __restrict dpre, T* __restrict gri,
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
  const bool edgeGrad = edgeAt >= 0 && in[edgeAt].requiresGrad(), loopGrad = loopAt >= 0 && in[loopAt].requiresGrad();
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
  GNN_CHECK_ARG(XL.rank() == 2 && XL.isFloating(), "gatv2Attention: xl must be a float [N, heads * C] tensor, got ",
                shapeString(XL.shape()));
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
      T q[256];  // the activations of one term, then their per-head dots with att (in the same order as below)
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
      withWidth(C, [&](auto cw) {
        for (int64_t n = b; n < e; ++n) dotHeads(cw, xp + n * HC, ap, H, C, y + n * H);
      });
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
        parallelFor(N, chunk, [&](int64_t b, int64_t e) {
          T* __restrict pc = p + (b / chunk) * HC;
          withWidth(C, [&](auto cw) {
            for (int64_t n = b; n < e; ++n)
              axpyHeads<false>(cw, pc, g + n * H, static_cast<const T*>(nullptr), xp + n * HC, H, C);
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
