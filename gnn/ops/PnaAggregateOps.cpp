// pnaAggregate and pnaAggregatePaired (gnn/ops/PnaAggregate.h): PNA's messages formed on the fly and reduced by
// several aggregators in one pass over each node's incoming edges, in edge order. What scatterMultiAggregate
// over the gathered messages computes (to rounding: see Acc and Backward::constants), but: no [E, F] messages
// in the forward (each is made in a row buffer from the node-sized products), the reductions' loops run over
// whole rows (vectorised) instead of a branch per element, the backward walks each target's edges with the
// target's per-node constants computed once and writes the messages' gradient in that order, and the target
// and source rows sum it by their own groupings, in edge order (gatherRows' backward's order). The groupings
// are built once per edge list (PlanCache).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gnn/ops/PnaAggregate.h"
#include "gnn/system/CpuClones.h"
#include "gnn/ops/AggregationKind.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using namespace ops;  // AggregationKind
using Kind = AggregationKind;

// Edges grouped by one endpoint (a stable counting sort): bucket r holds perm[ptr[r] .. ptr[r + 1]), in
// increasing edge order. Int64 tensors, so the tape counts them among the saved bytes.
struct Grouping {
  Tensor ptr, perm;
};
Grouping groupBy(const int64_t* idx, int64_t E, int64_t buckets) {
  Grouping g{Tensor({buckets + 1}, DType::I64), Tensor::empty({E}, DType::I64)};
  int64_t *ptr = g.ptr.data<int64_t>(), *perm = g.perm.data<int64_t>();
  for (int64_t e = 0; e < E; ++e) ++ptr[idx[e] + 1];
  for (int64_t r = 0; r < buckets; ++r) ptr[r + 1] += ptr[r];
  std::vector<int64_t> fill(ptr, ptr + buckets);
  for (int64_t e = 0; e < E; ++e) perm[fill[idx[e]]++] = e;
  return g;
}

// ---- row loops (restrict-qualified so that GCC vectorises them) ----
template <class T>
inline void addRows(T* __restrict m, const T* __restrict a, const T* __restrict b, int64_t F) {
  for (int64_t f = 0; f < F; ++f) m[f] = a[f] + b[f];
}
template <class T>
inline void addRows(T* __restrict m, const T* __restrict a, const T* __restrict b, const T* __restrict c,
                    int64_t F) {
  for (int64_t f = 0; f < F; ++f) m[f] = (a[f] + b[f]) + c[f];  // add(add(a, b), c)
}
// The sums and sums of squares run in double for float32 messages too: var = mean(m^2) - mean(m)^2 cancels
// where the messages are close (std's gradient 1 / (2 std) is largest there), and float32 sums lost about 1e-5
// of the layer's gradient against float64 (PyG's float32 loses as much). For float64 nothing changes.
using Acc = double;

// One message r (the k-th, k > 0) into a node's running sums, sums of squares and extremes with their
// positions: sums, then track, in one loop.
// Compiled per CPU level (it is called through a pointer, so the caller's clone does not inline it).
template <class T, bool kMoments, bool kMax, bool kMin>
GNN_CPU_CLONES void accumulate(const T* __restrict r, Acc* __restrict s1, Acc* __restrict s2, T* __restrict mx,
                int32_t* __restrict amx, T* __restrict mn, int32_t* __restrict amn, int32_t k, int64_t F) {
  for (int64_t f = 0; f < F; ++f) {
    const T m = r[f];
    s1[f] += static_cast<Acc>(m);
    if constexpr (kMoments) {
      const Acc sq = static_cast<Acc>(m) * static_cast<Acc>(m);
      s2[f] += sq;
    }
    if constexpr (kMax) {
      const bool better = m > mx[f];
      mx[f] = better ? m : mx[f];
      amx[f] = better ? k : amx[f];
    }
    if constexpr (kMin) {
      const bool better = m < mn[f];
      mn[f] = better ? m : mn[f];
      amn[f] = better ? k : amn[f];
    }
  }
}
template <class T>
using AccumulateFn = void (*)(const T*, Acc*, Acc*, T*, int32_t*, T*, int32_t*, int32_t, int64_t);
template <class T>
AccumulateFn<T> accumulateFor(bool moments, bool max, bool min) {
  const AccumulateFn<T> fns[8] = {accumulate<T, false, false, false>, accumulate<T, false, false, true>,
                                  accumulate<T, false, true, false>,  accumulate<T, false, true, true>,
                                  accumulate<T, true, false, false>,  accumulate<T, true, false, true>,
                                  accumulate<T, true, true, false>,   accumulate<T, true, true, true>};
  return fns[4 * moments + 2 * max + min];
}

template <class T>
inline void sums(Acc* __restrict s1, Acc* __restrict s2, const T* __restrict m, int64_t F) {
  if (s2) {
    for (int64_t f = 0; f < F; ++f) {
      s1[f] += static_cast<Acc>(m[f]);
      const Acc sq = static_cast<Acc>(m[f]) * static_cast<Acc>(m[f]);
      s2[f] += sq;
    }
  } else {
    for (int64_t f = 0; f < F; ++f) s1[f] += static_cast<Acc>(m[f]);
  }
}
template <class T>
inline void addInto(T* __restrict o, const T* __restrict x, int64_t F) {
  for (int64_t f = 0; f < F; ++f) o[f] += x[f];
}
// The rows a loop will read a few steps ahead: the sources' and edges' rows are read in an order the hardware
// prefetcher cannot guess (a node's incoming edges come from anywhere), and the loops waited on those loads.
constexpr int64_t kPrefetchAhead = 16;
template <class T>
inline void prefetchRow(const T* row, int64_t F) {
  for (int64_t b = 0; b < F * static_cast<int64_t>(sizeof(T)); b += 64)
    __builtin_prefetch(reinterpret_cast<const char*>(row) + b);
}

// One call's inputs as raw rows: the messages' terms (null where left out; the target's and source's rows ld
// apart, side by side in one matrix in the paired layout), the target's bias, the grouping by target (edge
// perm[p] at position p) and each position's source (srcAt[p], in the grouped order so that the loops read it
// in sequence).
template <class T>
struct Messages {
  const T *target, *source, *edge, *bias;
  const int64_t *srcAt, *ptr, *perm;
  int64_t F, E, ld;

  // The rows of the message at position p (if any).
  void prefetch(int64_t p) const {
    if (p >= E) return;
    if (source) prefetchRow(source + srcAt[p] * ld, F);
    if (edge) prefetchRow(edge + perm[p] * F, F);
  }

  // Node i's target term: its row, or the row plus the bias made in buf (once per node, as linear adds it).
  const T* targetRow(int64_t i, T* buf) const {
    if (!target) return nullptr;
    if (!bias) return target + i * ld;
    addRows(buf, target + i * ld, bias, F);
    return buf;
  }

  // The message at position p into the node whose target term is t: a row of one of the inputs, or their sum
  // made in buf.
  const T* row(const T* t, int64_t p, T* buf) const {
    const T* s = source ? source + srcAt[p] * ld : nullptr;
    const T* d = edge ? edge + perm[p] * F : nullptr;
    if (t && s && d) {
      addRows(buf, t, s, d, F);
    } else if ((t && s) || (t && d) || (s && d)) {
      addRows(buf, t ? t : s, t && s ? s : d, F);
    } else {
      return t ? t : (s ? s : d);
    }
    return buf;
  }
};

// The forward's per node and feature values the backward reads (null when no reduction needs them).
template <class T, class I>
struct PnaStats {
  I *argMax, *argMin;
  T *mean, *var, *sd;
};

template <class T>
struct PnaForward {
  Messages<T> msg;
  const std::vector<Kind>& kinds;
  bool moments, max, min;
  T eps;
  AccumulateFn<T> add;

  // Node i: one pass over its messages in edge order, then every reduction's columns of its output row.
  // buf: 5 F, acc: 2 F.
  void node(int64_t i, T* y, const PnaStats<T, int32_t>& st, T* buf, Acc* acc) const {
    const int64_t F = msg.F, A = static_cast<int64_t>(kinds.size()), lo = msg.ptr[i], n = msg.ptr[i + 1] - lo;
    Acc *s1 = acc, *s2 = moments ? acc + F : nullptr;
    T *mx = buf, *mn = buf + F, *m = buf + 2 * F, *total = buf + 3 * F;
    const T* t = msg.targetRow(i, buf + 4 * F);
    int32_t* amx = st.argMax ? st.argMax + i * F : nullptr;
    int32_t* amn = st.argMin ? st.argMin + i * F : nullptr;
    std::fill(acc, acc + 2 * F, Acc(0));
    for (int64_t k = 0; k < n; ++k) {
      msg.prefetch(lo + k + kPrefetchAhead);
      const T* r = msg.row(t, lo + k, m);
      if (k == 0) {  // the first message is the extreme so far, whatever its value (NaN included)
        sums(s1, s2, r, F);
        if (max) std::copy(r, r + F, mx), std::fill(amx, amx + F, 0);
        if (min) std::copy(r, r + F, mn), std::fill(amn, amn + F, 0);
      } else {
        add(r, s1, s2, mx, amx, mn, amn, static_cast<int32_t>(k), F);
      }
    }
    if (n == 0) {
      if (max) std::fill(mx, mx + F, T(0)), std::fill(amx, amx + F, -1);
      if (min) std::fill(mn, mn + F, T(0)), std::fill(amn, amn + F, -1);
    }
    const Acc c = static_cast<Acc>(std::max<int64_t>(n, 1));
    T *mean = st.mean ? st.mean + i * F : m, *var = st.var ? st.var + i * F : buf + 4 * F;
    for (int64_t f = 0; f < F; ++f) total[f] = static_cast<T>(s1[f]), mean[f] = static_cast<T>(s1[f] / c);
    if (moments)
      for (int64_t f = 0; f < F; ++f) {
        const Acc mu = s1[f] / c, m2 = s2[f] / c, mm = mu * mu;
        var[f] = static_cast<T>(m2 - mm);
      }
    T* out = y + i * A * F;
    for (int64_t a = 0; a < A; ++a, out += F) {
      switch (kinds[a]) {
        case kSum:
          std::copy(total, total + F, out);
          break;
        case kMean:
          std::copy(mean, mean + F, out);
          break;  // 0 / 1 where nothing arrives
        case kMax:
          std::copy(mx, mx + F, out);
          break;
        case kMin:
          std::copy(mn, mn + F, out);
          break;
        case kVar:
          std::copy(var, var + F, out);
          break;
        case kStd:
          for (int64_t f = 0; f < F; ++f)
            out[f] = std::sqrt(std::isnan(var[f]) || var[f] >= eps ? var[f] : eps);
          if (st.sd) std::copy(out, out + F, st.sd + i * F);
          break;
      }
    }
  }
};

// g = (first ? 0 : g) + term(f) for every f: the first term starts the sum from 0 (the bits of adding it to a
// zeroed row) without the zeroing pass.
template <bool kFirst, class T, class Term>
inline void addTerms(T* __restrict g, int64_t F, Term term) {
  for (int64_t f = 0; f < F; ++f) g[f] = (kFirst ? T(0) : g[f]) + term(f);
}

// g = (((0 + t_1) + t_2) + ...) over the reductions in order, each t_a what reduction a passes back to one
// message (scatterMultiAggregate's backward, with each node's constants computed once in coef).
template <class T>
struct Backward {
  Messages<T> msg;
  const std::vector<Kind>& kinds;
  PnaStats<const T, const int32_t> st;
  const T* gy;
  T eps;

  // coef [2 A F]: per reduction a, first and second constant of node i (mean: g / count; var and std: sqrt' =
  // g / (2 std) where the clamp passes, as PyG's, then var' = (2 gv / c) (m - mean): PyG's chain gives the same
  // as 2 m (gv / c) + (-2 gv mean) / c, whose two terms nearly cancel where the messages are close, which is
  // where gv = g / (2 std) is large).
  void constants(int64_t i, T c, T* coef) const {
    const int64_t F = msg.F, A = static_cast<int64_t>(kinds.size());
    const T* go = gy + i * A * F;
    for (int64_t a = 0; a < A; ++a) {
      const T* ga = go + a * F;
      T *c1 = coef + 2 * a * F, *c2 = c1 + F;
      const T *mean = st.mean ? st.mean + i * F : nullptr, *var = st.var ? st.var + i * F : nullptr;
      switch (kinds[a]) {
        case kSum:
        case kMax:
        case kMin:
          std::copy(ga, ga + F, c1);
          break;
        case kMean:
          for (int64_t f = 0; f < F; ++f) c1[f] = ga[f] / c;
          break;
        case kVar:
        case kStd: {
          const T* sd = st.sd ? st.sd + i * F : nullptr;  // the forward's (a square root per element is slow)
          const bool isStd = kinds[a] == kStd;
          for (int64_t f = 0; f < F; ++f) {
            const T gv = isStd ? (var[f] >= eps ? ga[f] / (2 * sd[f]) : T(0)) : ga[f];
            c1[f] = (2 * gv) / c;
            c2[f] = mean[f];
          }
          break;
        }
      }
    }
  }

  // The gradient g [F] of node i's k-th message r.
  void message(int64_t i, int32_t k, const T* r, const T* coef, T* __restrict g) const {
    const int64_t F = msg.F, A = static_cast<int64_t>(kinds.size());
    for (int64_t a = 0; a < A; ++a) {
      const T* __restrict c1 = coef + 2 * a * F, * __restrict c2 = c1 + F;
      auto put = [&](auto term) { a == 0 ? addTerms<true>(g, F, term) : addTerms<false>(g, F, term); };
      switch (kinds[a]) {
        case kSum:
        case kMean:
          put([&](int64_t f) { return c1[f]; });
          break;
        case kMax:
        case kMin: {
          const int32_t* __restrict at = (kinds[a] == kMax ? st.argMax : st.argMin) + i * F;
          put([&](int64_t f) { return at[f] == k ? c1[f] : T(0); });
          break;
        }
        case kVar:
        case kStd:
          put([&](int64_t f) { return c1[f] * (r[f] - c2[f]); });
          break;
      }
    }
  }
};

// Row r of out (rows ld apart) = the sum of rows perm[ptr[r] .. ptr[r + 1]) of g, in that order from 0, for
// every r.
template <class T>
void sumGroups(const T* g, const int64_t* ptr, const int64_t* perm, int64_t rows, int64_t F, T* out,
               int64_t ld) {
  const int64_t perRow = (ptr[rows] + rows - 1) / std::max<int64_t>(rows, 1);
  parallelFor(rows, grainFor((perRow + 1) * F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t r = b; r < e; ++r) {
      T* o = out + r * ld;
      std::fill(o, o + F, T(0));
      for (int64_t k = ptr[r]; k < ptr[r + 1]; ++k) {
        if (k + kPrefetchAhead < ptr[rows]) prefetchRow(g + perm[k + kPrefetchAhead] * F, F);
        addInto(o, g + perm[k] * F, F);
      }
    }
  });
}

// An edge list's groupings: by target (ptr, perm: edge perm[p] at position p), each position's source
// (srcAt), by source (srcPtr, srcRows: the target-grouped positions of each source's edges, in edge order)
// and each edge's position (rowOf). Built and checked once per edge list and cached (a training loop passes
// the same edge_index every step, and the checks and counting sorts were a tenth of PNAConv's step);
// immutable after.
struct EdgePlan {
  Grouping byTarget, bySource;
  Tensor srcAt, rowOf;
};
using PlanPtr = std::shared_ptr<const EdgePlan>;

PlanPtr buildPlan(const Tensor& src, const Tensor& dst, int64_t numNodes, int64_t S) {
  const char* op = "pnaAggregate";
  const int64_t E = dst.numel();
  const int64_t* d = dst.data<int64_t>();
  for (int64_t e = 0; e < E; ++e)
    GNN_CHECK_ARG(d[e] >= 0 && d[e] < numNodes, op, ": target ", d[e], " of edge ", e, " is outside [0, ",
                  numNodes, ")");
  auto plan = std::make_shared<EdgePlan>();
  plan->byTarget = groupBy(d, E, numNodes);
  const int64_t* perm = std::as_const(plan->byTarget.perm).data<int64_t>();
  plan->rowOf = Tensor::empty({E}, DType::I64);
  int64_t* rowOf = plan->rowOf.data<int64_t>();
  for (int64_t p = 0; p < E; ++p) rowOf[perm[p]] = p;
  if (S >= 0) {
    const int64_t* in = src.data<int64_t>();
    for (int64_t e = 0; e < E; ++e)
      GNN_CHECK_ARG(in[e] >= 0 && in[e] < S, op, ": source ", in[e], " of edge ", e, " is outside [0, ", S,
                    ")");
    plan->srcAt = Tensor::empty({E}, DType::I64);
    int64_t* at = plan->srcAt.data<int64_t>();
    for (int64_t p = 0; p < E; ++p) at[p] = in[perm[p]];
    plan->bySource = groupBy(in, E, S);
    int64_t* rows = plan->bySource.perm.data<int64_t>();
    for (int64_t k = 0; k < E; ++k) rows[k] = rowOf[rows[k]];
  }
  return plan;
}

// The last few edge lists' plans. An entry holds its index tensors, so no other buffer can take their
// storage's identity; the versions say whether they were written since.
class PlanCache {
 public:
  PlanPtr get(const Tensor& src, const Tensor& dst, int64_t numNodes, int64_t S) {
    const Key key =
        keyOf(src, dst, numNodes, S);  // read before the build: a racing write makes the next rebuild
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const Entry& e : entries_)
        if (e.key == key) return e.plan;
    }
    PlanPtr plan = buildPlan(src, dst, numNodes, S);
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_front({key, S >= 0 ? src : Tensor(), dst, plan});
    if (entries_.size() > kCapacity) entries_.pop_back();
    return plan;
  }

 private:
  static constexpr size_t kCapacity = 4;
  struct Key {
    const void *dstStorage, *dstData, *srcStorage, *srcData;
    uint64_t dstVersion, srcVersion;
    int64_t E, numNodes, S;
    bool operator==(const Key& o) const {
      return dstStorage == o.dstStorage && dstData == o.dstData && srcStorage == o.srcStorage &&
             srcData == o.srcData && dstVersion == o.dstVersion && srcVersion == o.srcVersion && E == o.E &&
             numNodes == o.numNodes && S == o.S;
    }
  };
  static Key keyOf(const Tensor& src, const Tensor& dst, int64_t numNodes, int64_t S) {
    const bool s = S >= 0;
    return {dst.storageId(),
            dst.raw(),
            s ? src.storageId() : nullptr,
            s ? src.raw() : nullptr,
            dst.version(),
            s ? src.version() : 0,
            dst.numel(),
            numNodes,
            S};
  }
  struct Entry {
    Key key;
    Tensor src, dst;
    PlanPtr plan;
  };
  std::mutex mu_;
  std::deque<Entry> entries_;
};

PlanPtr planFor(const Tensor& src, const Tensor& dst, int64_t numNodes, int64_t S) {
  static PlanCache cache;
  return cache.get(src, dst, numNodes, S);
}

// One call: its inputs (the paired layout: target and source side by side in `nodes`, and the target's bias),
// where each sits among the recorded inputs (-1: left out), and what the backward reads (undefined where the
// call needs nothing).
struct Call {
  Variable target, source, edge, nodes, bias;
  int targetAt = -1, sourceAt = -1, edgeAt = -1, nodesAt = -1, biasAt = -1;
  int64_t E = 0, F = -1, S = -1;  // S: the sources' rows (-1: no source term)
  DType dtype = DType::F32;
  PlanPtr plan;
  Tensor targetValue, sourceValue, edgeValue, nodesValue, biasValue;  // var and std make the messages again
  Tensor argMax, argMin, mean, var, sd;

  bool pairedLayout = false;  // nodes given (kept when the Variables are dropped for the backward)

  bool paired() const { return pairedLayout; }
  int64_t ld() const { return paired() ? 2 * F : F; }
};

template <class T>
const T* valueOf(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// The messages' rows of a call from the given values (the forward's inputs, or the backward's saved copies).
template <class T>
Messages<T> messagesOf(const Call& c, const Tensor& target, const Tensor& source, const Tensor& edge,
                       const Tensor& nodes, const Tensor& bias) {
  const EdgePlan& plan = *c.plan;
  const T* n = valueOf<T>(nodes);
  return {n ? n : valueOf<T>(target),
          n ? n + c.F : valueOf<T>(source),
          valueOf<T>(edge),
          valueOf<T>(bias),
          valueOf<int64_t>(plan.srcAt),
          plan.byTarget.ptr.data<int64_t>(),
          plan.byTarget.perm.data<int64_t>(),
          c.F,
          c.E,
          c.ld()};
}

// The target's bias gradient: the target rows' gradients summed over the nodes, by the chunks of the target
// pass (fixed by the shape) and then the chunks' sums in order.
template <class T>
Tensor biasGradient(const std::vector<T>& partials, int64_t chunks, int64_t F, const Shape& shape,
                    DType dtype) {
  Tensor G = Tensor::zeros(shape, dtype);
  T* g = G.data<T>();
  for (int64_t c = 0; c < chunks; ++c) addInto(g, partials.data() + c * F, F);
  return G;
}

// The backward of pnaAggregate.
template <class T>
void backward(const std::vector<Kind>& kinds, T eps, const Call& c, const Tensor& gy,
              std::vector<GradInput>& in) {
  auto wants = [&](int at) { return at >= 0 && in[at].requiresGrad(); };
  const EdgePlan& plan = *c.plan;
  const Messages<T> msg =
      messagesOf<T>(c, c.targetValue, c.sourceValue, c.edgeValue, c.nodesValue, c.biasValue);
  const int64_t *ptr = msg.ptr, N = plan.byTarget.ptr.numel() - 1, E = c.E, F = c.F,
                A = static_cast<int64_t>(kinds.size()), ld = c.ld();
  const bool messages = msg.target || msg.source || msg.edge;
  const Backward<T> bw{msg,
                       kinds,
                       {valueOf<int32_t>(c.argMax), valueOf<int32_t>(c.argMin), valueOf<T>(c.mean),
                        valueOf<T>(c.var), valueOf<T>(c.sd)},
                       gy.data<T>(),
                       eps};
  // Each message's gradient in the targets' grouped order (written in sequence: written in edge order, the
  // rows' stores missed the cache one after another), and each target's sum of its messages' gradients in
  // edge order while they are in cache. The sources sum their messages' rows by their own grouping; the edge
  // terms take them back in edge order. The paired layout's gradient holds both halves.
  const bool nodesGrad = wants(c.nodesAt), targetGrad = wants(c.targetAt) || nodesGrad,
             sourceGrad = wants(c.sourceAt) || nodesGrad, biasGrad = wants(c.biasAt);
  Tensor G = Tensor::empty({E, F}, gy.dtype());
  Tensor GT = nodesGrad ? Tensor::empty({N, 2 * F}, gy.dtype())
                        : (targetGrad || biasGrad ? Tensor::empty({N, F}, gy.dtype()) : Tensor());
  T* g = G.data<T>();
  T* gt = GT.defined() ? GT.data<T>() : nullptr;
  const int64_t chunk = grainFor((E / std::max<int64_t>(N, 1) + 1) * F * (2 + A)),
                chunks = (N + chunk - 1) / chunk;
  std::vector<T> partials(static_cast<size_t>(biasGrad ? chunks * F : 0), T(0));
  parallelFor(N, chunk, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    std::vector<T> coef(static_cast<size_t>(2 * A * F)), buf(static_cast<size_t>(2 * F));
    for (int64_t i = b; i < e; ++i) {
      const int64_t lo = ptr[i], n = ptr[i + 1] - lo;
      T* o = gt ? gt + i * (nodesGrad ? ld : F) : nullptr;
      if (o) std::fill(o, o + F, T(0));
      if (n > 0) {
        bw.constants(i, static_cast<T>(n), coef.data());
        const T* t = messages ? msg.targetRow(i, buf.data() + F) : nullptr;
        for (int64_t k = 0; k < n; ++k) {
          T* ge = g + (lo + k) * F;
          if (messages) msg.prefetch(lo + k + kPrefetchAhead);
          bw.message(i, static_cast<int32_t>(k), messages ? msg.row(t, lo + k, buf.data()) : nullptr,
                     coef.data(), ge);
          if (o) addInto(o, ge, F);
        }
      }
      if (biasGrad) addInto(partials.data() + (b / chunk) * F, o, F);
    }
  });
  if (biasGrad) in[c.biasAt].addGrad(biasGradient(partials, chunks, F, in[c.biasAt].shape(), gy.dtype()));
  if (sourceGrad) {
    const int64_t S = plan.bySource.ptr.numel() - 1;
    Tensor GS = nodesGrad ? Tensor() : Tensor::empty({S, F}, gy.dtype());
    sumGroups<T>(g, plan.bySource.ptr.data<int64_t>(), plan.bySource.perm.data<int64_t>(), S, F,
                 nodesGrad ? gt + F : GS.data<T>(), nodesGrad ? ld : F);
    if (!nodesGrad) in[c.sourceAt].addGrad(GS);
  }
  if (nodesGrad) in[c.nodesAt].addGrad(GT);
  if (wants(c.targetAt)) in[c.targetAt].addGrad(GT);
  if (wants(c.edgeAt)) {
    Tensor GE = Tensor::empty({E, F}, gy.dtype());
    T* ge = GE.data<T>();
    const int64_t* rowOf = plan.rowOf.data<int64_t>();
    parallelFor(E, grainFor(F), [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) std::copy(g + rowOf[k] * F, g + (rowOf[k] + 1) * F, ge + k * F);
    });
    in[c.edgeAt].addGrad(GE);
  }
}

// Checks the terms against each other and the indices' shapes (their values: when the plan is built).
void checkTerms(Call& c, const Tensor& src, const Tensor& dst, int64_t numNodes) {
  const char* op = "pnaAggregate";
  GNN_CHECK_ARG(dst.rank() == 1 && dst.dtype() == DType::I64, op, ": dst must be int64 [E], got ",
                dtypeName(dst.dtype()), " ", shapeString(dst.shape()));
  c.E = dst.numel();
  const bool withSource = c.source.defined() || c.paired();
  GNN_CHECK_ARG(
      !withSource || (src.defined() && src.rank() == 1 && src.dtype() == DType::I64 && src.numel() == c.E),
      op, ": a source term needs src int64 [", c.E, "]");
  GNN_CHECK_ARG(c.target.defined() || withSource || c.edge.defined(), op,
                ": needs target, source or edge terms");
  GNN_CHECK_ARG(numNodes >= 0, op, ": negative numNodes ", numNodes);
  if (c.paired()) {
    const Tensor& t = c.nodes.value();
    GNN_CHECK_ARG(t.rank() == 2 && t.isFloating() && t.dim(0) == numNodes && t.dim(1) % 2 == 0, op,
                  ": nodes must be float [", numNodes, ", 2 F], got ", dtypeName(t.dtype()), " ",
                  shapeString(t.shape()));
    c.F = t.dim(1) / 2, c.dtype = t.dtype();
    GNN_CHECK_ARG(!c.bias.defined() || (c.bias.value().numel() == c.F && c.bias.dtype() == c.dtype), op,
                  ": the target's bias must hold ", c.F, " ", dtypeName(c.dtype), ", got ",
                  dtypeName(c.bias.dtype()), " ", shapeString(c.bias.shape()));
  }
  for (const Variable* v : {&c.target, &c.source, &c.edge}) {
    if (!v->defined()) continue;
    const Tensor& t = v->value();
    GNN_CHECK_ARG(t.rank() == 2 && t.isFloating(), op, ": expected float [rows, F] terms, got ",
                  dtypeName(t.dtype()), " ", shapeString(t.shape()));
    if (c.F < 0) c.F = t.dim(1), c.dtype = t.dtype();
    GNN_CHECK_ARG(t.dim(1) == c.F && t.dtype() == c.dtype, op,
                  ": the terms differ in width or dtype: ", shapeString(t.shape()), " ", dtypeName(t.dtype()),
                  " against ", c.F, " ", dtypeName(c.dtype));
  }
  GNN_CHECK_ARG(!c.target.defined() || c.target.dim(0) == numNodes, op, ": target has ", c.target.dim(0),
                " rows for ", numNodes, " nodes");
  GNN_CHECK_ARG(!c.edge.defined() || c.edge.dim(0) == c.E, op, ": edge terms have ", c.edge.dim(0),
                " rows for ", c.E, " edges");
  if (withSource) c.S = c.paired() ? numNodes : c.source.dim(0);
}

Variable aggregate(Call& c, const Tensor& src, const Tensor& dst, int64_t numNodes,
                   const std::vector<std::string>& reductions, double stdEps) {
  GNN_CHECK_ARG(!reductions.empty() && stdEps >= 0, "pnaAggregate: needs a reduction and eps >= 0");
  std::vector<Kind> kinds;
  bool moments = false, max = false, min = false;
  for (const std::string& r : reductions) {
    kinds.push_back(aggregationKind("pnaAggregate", r));
    moments |= kinds.back() == kVar || kinds.back() == kStd;
    max |= kinds.back() == kMax;
    min |= kinds.back() == kMin;
  }
  checkTerms(c, src, dst, numNodes);
  c.plan = planFor(src, dst, numNodes, c.S);
  const int64_t E = c.E, F = c.F, N = numNodes, A = static_cast<int64_t>(kinds.size());
  return dispatchFloat(c.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({N, A * F}, c.dtype);
    // argMax, argMin (int32 positions in the node's edges), mean, var, std: those the reductions need.
    if (max) c.argMax = Tensor::empty({N, F}, DType::I32);
    if (min) c.argMin = Tensor::empty({N, F}, DType::I32);
    if (moments) c.mean = Tensor::empty({N, F}, c.dtype), c.var = Tensor::empty({N, F}, c.dtype);
    if (std::find(kinds.begin(), kinds.end(), kStd) != kinds.end()) c.sd = Tensor::empty({N, F}, c.dtype);
    auto ptrOf = [](Tensor& t, auto* p) {
      return t.defined() ? t.data<std::remove_pointer_t<decltype(p)>>() : nullptr;
    };
    const PnaStats<T, int32_t> st{ptrOf(c.argMax, (int32_t*)nullptr), ptrOf(c.argMin, (int32_t*)nullptr),
                                  ptrOf(c.mean, (T*)nullptr), ptrOf(c.var, (T*)nullptr),
                                  ptrOf(c.sd, (T*)nullptr)};
    auto value = [](const Variable& v) { return v.defined() ? v.value() : Tensor(); };
    const Messages<T> msg =
        messagesOf<T>(c, value(c.target), value(c.source), value(c.edge), value(c.nodes), value(c.bias));
    const PnaForward<T> fw{
        msg, kinds, moments, max, min, static_cast<T>(stdEps), accumulateFor<T>(moments, max, min)};
    T* y = Y.data<T>();
    parallelFor(N, grainFor((E / std::max<int64_t>(N, 1) + 1) * F * (2 + A)),
                [&](int64_t b, int64_t e) GNN_CPU_CLONES {
                  std::vector<T> buf(static_cast<size_t>(5 * F));
                  std::vector<Acc> acc(static_cast<size_t>(2 * F));
                  for (int64_t i = b; i < e; ++i) fw.node(i, y, st, buf.data(), acc.data());
                });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    const int64_t terms = (msg.target != nullptr) + (msg.source != nullptr) + (msg.edge != nullptr);
    OpInfo info{"pnaAggregate", E * F * (terms - 1 + (moments ? 3 : 1) + max + min) + 2 * N * A * F,
                E * (16 + terms * F * elem), N * A * F * elem,
                E * F * (2 * A + 2 + (moments ? 3 : 0)) + (terms - 1) * E * F};
    std::vector<Variable> inputs;
    auto take = [&](const Variable& v, int& at, Tensor& keep) {
      if (!v.defined()) return;
      at = static_cast<int>(inputs.size());
      inputs.push_back(v);
      if (moments) keep = v.value();  // the messages again
    };
    take(c.target, c.targetAt, c.targetValue);
    take(c.source, c.sourceAt, c.sourceValue);
    take(c.edge, c.edgeAt, c.edgeValue);
    take(c.nodes, c.nodesAt, c.nodesValue);
    take(c.bias, c.biasAt, c.biasValue);
    // The tape counts the saved tensors' bytes (the shared plan's too); the closure reads them through c.
    const EdgePlan& plan = *c.plan;
    std::vector<Tensor> saved = {c.targetValue,
                                 c.sourceValue,
                                 c.edgeValue,
                                 c.nodesValue,
                                 c.biasValue,
                                 c.argMax,
                                 c.argMin,
                                 c.mean,
                                 c.var,
                                 c.sd,
                                 plan.srcAt,
                                 plan.rowOf,
                                 plan.byTarget.perm,
                                 plan.bySource.perm};
    c.target = c.source = c.edge = c.nodes = c.bias = Variable();  // the closure keeps values, not Variables
    return Variable::record(info, Y, std::move(inputs), std::move(saved),
                            [kinds, c, eps = static_cast<T>(stdEps)](
                                const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>&) {
                              backward<T>(kinds, eps, c, gy, in);
                            });
  });
}

}  // namespace

Variable pnaAggregate(const Variable& target, const Variable& source, const Variable& edge, const Tensor& src,
                      const Tensor& dst, int64_t numNodes, const std::vector<std::string>& reductions,
                      double stdEps) {
  Call c;
  c.target = target, c.source = source, c.edge = edge;
  return aggregate(c, src, dst, numNodes, reductions, stdEps);
}

Variable pnaAggregatePaired(const Variable& nodes, const Variable& targetBias, const Variable& edge,
                            const Tensor& src, const Tensor& dst, const std::vector<std::string>& reductions,
                            double stdEps) {
  GNN_CHECK_ARG(nodes.defined(), "pnaAggregatePaired: needs the nodes' [target | source] rows");
  Call c;
  c.nodes = nodes, c.bias = targetBias, c.edge = edge, c.pairedLayout = true;
  return aggregate(c, src, dst, nodes.dim(0), reductions, stdEps);
}

}  // namespace gnn
