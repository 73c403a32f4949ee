// scatterMultiAggregate: several scatter reductions of the same messages side by side (PNA's aggregators, PyG's
// MultiAggregation with mode "cat") in one pass over a target-grouped copy of the index: each target reads its
// rows once for every reduction, and the backward writes one gradient row per message instead of one [E, F]
// tensor per reduction. Each reduction gives the bits of its own op (scatterSum, scatterMean, scatterMax,
// scatterMin, scatterVar, scatterStd): the same sums in the same edge order.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gnn/ops/Ops.h"
#include "gnn/ops/AggregationKind.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using namespace ops;  // AggregationKind
using Kind = AggregationKind;

// What a target's pass keeps per feature.
struct Needs {
  bool moments = false, max = false, min = false;
};

// The forward's per-target values [S, F] the backward reads (null when no reduction needs them): the rows
// holding the maximum and the minimum, mean, variance, standard deviation.
template <class T, class I>
struct Stats {
  I *argMax, *argMin;
  T *mean, *var, *sd;
};
template <class T, class I>
Stats<T, I> statsOf(const std::vector<Tensor>& t) {  // argMax, argMin, mean, var, sd (undefined: null)
  auto p = [](const Tensor& x, auto* tag) {
    using P = std::remove_pointer_t<decltype(tag)>;
    return x.defined() ? const_cast<P*>(x.data<std::remove_const_t<P>>()) : nullptr;
  };
  return {p(t[0], (I*)nullptr), p(t[1], (I*)nullptr), p(t[2], (T*)nullptr), p(t[3], (T*)nullptr),
          p(t[4], (T*)nullptr)};
}

template <class T>
struct Forward {
  const T* x;
  const int64_t *idx, *ptr, *perm;
  int64_t S, F, A;
  const std::vector<Kind>& kinds;
  Needs needs;
  T eps;

  // Target s: one pass over its rows in edge order, then every reduction's columns of its output row.
  void target(int64_t s, T* y, const Stats<T, int64_t>& st, std::vector<T>& buf) const {
    T *s1 = buf.data(), *s2 = s1 + F, *mx = s2 + F, *mn = mx + F;
    int64_t* amx = st.argMax ? st.argMax + s * F : nullptr;
    int64_t* amn = st.argMin ? st.argMin + s * F : nullptr;
    std::fill(buf.begin(), buf.end(), T(0));
    for (int64_t f = 0; f < F; ++f) {
      if (amx) amx[f] = -1;
      if (amn) amn[f] = -1;
    }
    for (int64_t k = ptr[s]; k < ptr[s + 1]; ++k) {
      const int64_t r = perm[k];
      const T* xr = x + r * F;
      for (int64_t f = 0; f < F; ++f) {
        s1[f] += xr[f];
        if (needs.moments) {
          const T sq = xr[f] * xr[f];
          s2[f] += sq;
        }
        if (amx && (amx[f] < 0 || xr[f] > mx[f])) mx[f] = xr[f], amx[f] = r;
        if (amn && (amn[f] < 0 || xr[f] < mn[f])) mn[f] = xr[f], amn[f] = r;
      }
    }
    const int64_t n = ptr[s + 1] - ptr[s];
    const T c = static_cast<T>(std::max<int64_t>(n, 1));
    T* out = y + s * A * F;
    for (int64_t f = 0; f < F; ++f) {
      T mean = s1[f] / c, var = 0;
      if (needs.moments) {
        const T m2 = s2[f] / c, mm = mean * mean;
        var = m2 - mm;
        st.mean[s * F + f] = mean;
        st.var[s * F + f] = var;
      }
      const T sd = std::sqrt(std::isnan(var) || var >= eps ? var : eps);
      if (st.sd) st.sd[s * F + f] = sd;
      for (int64_t a = 0; a < A; ++a) {
        T v = 0;
        switch (kinds[a]) {
          case kSum: v = s1[f]; break;
          case kMean: v = n > 0 ? mean : T(0); break;
          case kMax: v = n > 0 ? mx[f] : T(0); break;
          case kMin: v = n > 0 ? mn[f] : T(0); break;
          case kVar: v = var; break;
          case kStd: v = sd; break;
        }
        out[a * F + f] = v;
      }
    }
  }
};

// Gradient row r (a message to target s): the sum over the reductions of what each passes back.
template <class T>
void backwardRow(int64_t r, const int64_t* idx, const int64_t* ptr, const std::vector<Kind>& kinds, int64_t F,
                 const T* gy, const T* x, const Stats<const T, const int64_t>& st, T eps, T* gx) {
  const int64_t s = idx[r], A = static_cast<int64_t>(kinds.size());
  const T c = static_cast<T>(ptr[s + 1] - ptr[s]);
  const T* go = gy + s * A * F;
  for (int64_t f = 0; f < F; ++f) {
    const int64_t o = s * F + f;
    T g = 0;
    for (int64_t a = 0; a < A; ++a) {
      const T ga = go[a * F + f];
      switch (kinds[a]) {
        case kSum: g += ga; break;
        case kMean: g += ga / c; break;
        case kMax: g += st.argMax[o] == r ? ga : T(0); break;
        case kMin: g += st.argMin[o] == r ? ga : T(0); break;
        case kVar:
        case kStd: {
          // PyG's chain: sqrt' = g / (2 std) where the clamp passes (var >= eps); then mean(x*x) gives
          // 2 x (gv / c) and -mean^2 gives (-2 gv mean) / c.
          const T var = st.var[o], mean = st.mean[o];
          T gv = ga;
          if (kinds[a] == kStd) gv = var >= eps ? ga / (2 * st.sd[o]) : T(0);
          g += 2 * ((gv / c) * x[r * F + f]) + (-2 * gv * mean) / c;
          break;
        }
      }
    }
    gx[r * F + f] = g;
  }
}

}  // namespace

Variable scatterMultiAggregate(const Variable& xv, const Tensor& index, int64_t numOut,
                               const std::vector<std::string>& reductions, double stdEps) {
  const Tensor& X = xv.value();
  const char* op = "scatterMultiAggregate";
  GNN_CHECK_ARG(X.rank() == 2 && X.isFloating(), op, ": expected a float [E, F] tensor, got ", dtypeName(X.dtype()),
                " ", shapeString(X.shape()));
  GNN_CHECK_ARG(index.rank() == 1 && index.numel() == X.dim(0) && index.dtype() == DType::I64, op,
                ": index must be int64 [", X.dim(0), "], got ", dtypeName(index.dtype()), " ",
                shapeString(index.shape()));
  GNN_CHECK_ARG(!reductions.empty() && numOut >= 0 && stdEps >= 0, op, ": needs a reduction, numOut >= 0, eps >= 0");
  std::vector<Kind> kinds;
  Needs needs;
  for (const std::string& r : reductions) {
    kinds.push_back(aggregationKind("scatterMultiAggregate", r));
    needs.moments |= kinds.back() == kVar || kinds.back() == kStd;
    needs.max |= kinds.back() == kMax;
    needs.min |= kinds.back() == kMin;
  }
  const int64_t E = X.dim(0), F = X.dim(1), A = static_cast<int64_t>(kinds.size()), S = numOut;
  // The index checked and copied (the backward keeps the copy), grouped by target: a stable counting sort.
  Tensor idxT = Tensor::empty({E}, DType::I64), ptrT({S + 1}, DType::I64), permT = Tensor::empty({E}, DType::I64);
  int64_t *idx = idxT.data<int64_t>(), *ptr = ptrT.data<int64_t>(), *perm = permT.data<int64_t>();
  const int64_t* in = index.data<int64_t>();
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(in[e] >= 0 && in[e] < S, op, ": index ", in[e], " at position ", e, " is outside [0, ", S, ")");
    idx[e] = in[e];
    ++ptr[in[e] + 1];
  }
  for (int64_t s = 0; s < S; ++s) ptr[s + 1] += ptr[s];
  std::vector<int64_t> fill(ptr, ptr + S);
  for (int64_t e = 0; e < E; ++e) perm[fill[idx[e]]++] = e;
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({S, A * F}, X.dtype());
    // argMax, argMin, mean, var, sd: those the reductions need.
    const bool needsStd = std::find(kinds.begin(), kinds.end(), kStd) != kinds.end();
    std::vector<Tensor> stats(5);
    if (needs.max) stats[0] = Tensor::empty({S * F}, DType::I64);
    if (needs.min) stats[1] = Tensor::empty({S * F}, DType::I64);
    if (needs.moments) stats[2] = Tensor::empty({S, F}, X.dtype()), stats[3] = Tensor::empty({S, F}, X.dtype());
    if (needsStd) stats[4] = Tensor::empty({S, F}, X.dtype());
    const Stats<T, int64_t> st = statsOf<T, int64_t>(stats);
    const T eps = static_cast<T>(stdEps);
    const Forward<T> fw{X.data<T>(), idx, ptr, perm, S, F, A, kinds, needs, eps};
    T* y = Y.data<T>();
    parallelFor(S, grainFor((E / std::max<int64_t>(S, 1) + 1) * F * (1 + A)), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      std::vector<T> buf(static_cast<size_t>(4 * F));
      for (int64_t s = b; s < e; ++s) fw.target(s, y, st, buf);
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{op, (needs.moments ? 4 : 1) * X.numel() + 4 * S * A * F, static_cast<int64_t>(X.nbytes()) + 8 * E,
                S * A * F * elem, (1 + A) * X.numel()};
    Shape xs = X.shape();
    std::vector<Tensor> saved = {idxT, ptrT, needs.moments ? X : Tensor()};
    saved.insert(saved.end(), stats.begin(), stats.end());
    return Variable::record(info, Y, {xv}, std::move(saved), [xs, kinds, eps](const Tensor& gy,
                                                                              std::vector<GradInput>& in,
                                                                              const std::vector<Tensor>& sv) {
      Tensor G = Tensor::empty(xs, gy.dtype());
      const Stats<const T, const int64_t> st = statsOf<const T, const int64_t>({sv.begin() + 3, sv.end()});
      const int64_t *idx = sv[0].data<int64_t>(), *ptr = sv[1].data<int64_t>();
      const T* x = sv[2].defined() ? sv[2].data<T>() : nullptr;
      const T* go = gy.data<T>();
      T* gx = G.data<T>();
      const int64_t F = xs[1];
      // Each message's gradient row is its own: parallel over messages, no two writes to one row.
      parallelFor(xs[0], grainFor(F * static_cast<int64_t>(kinds.size()) * 4),
                  [&](int64_t b, int64_t e) GNN_CPU_CLONES {
                    for (int64_t r = b; r < e; ++r) backwardRow<T>(r, idx, ptr, kinds, F, go, x, st, eps, gx);
                  });
      in[0].addGrad(G);
    });
  });
}

}  // namespace gnn
