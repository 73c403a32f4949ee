// Scatter reductions that PNA's aggregators need beyond sum, mean and max (PyG 2.3.1's MinAggregation,
// VarAggregation, StdAggregation): the minimum, the variance mean(x^2) - mean(x)^2 and the standard deviation
// sqrt(clamp(var, min=eps)). Rows are grouped by target with a stable counting sort, so each target reduces its
// rows in edge order; the loops run over targets (forward) or rows (backward), no atomics: the same bits for
// any thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

// A checked int64 copy of the index (the backward saves this, never the caller's buffer) and its grouping by
// target: rows perm[ptr[s] .. ptr[s+1]) go to target s, in increasing order.
struct StatsGrouping {
  Tensor index;  // int64 [E]
  std::vector<int64_t> ptr, perm;
};

StatsGrouping groupRows(const char* op, const Tensor& x, const Tensor& index, int64_t numOut) {
  GNN_CHECK_ARG(x.rank() == 2 && x.isFloating(), op, ": expected a float [E, F] tensor, got ", dtypeName(x.dtype()),
                " ", shapeString(x.shape()));
  GNN_CHECK_ARG(index.rank() == 1 && index.numel() == x.dim(0), op, ": index ", shapeString(index.shape()),
                " does not match the ", x.dim(0), " rows of x");
  GNN_CHECK_ARG(numOut >= 0, op, ": negative output size ", numOut);
  StatsGrouping g;
  g.index = Tensor::empty({index.numel()}, DType::I64);
  int64_t* v = g.index.data<int64_t>();
  dispatchIndex(index.dtype(), [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    const I* p = index.data<I>();
    for (int64_t i = 0; i < index.numel(); ++i) {
      GNN_CHECK_ARG(p[i] >= 0 && p[i] < numOut, op, ": index ", p[i], " at position ", i, " is outside [0, ",
                    numOut, ")");
      v[i] = p[i];
    }
  });
  const size_t n = static_cast<size_t>(index.numel());
  g.ptr.assign(static_cast<size_t>(numOut) + 1, 0);
  for (size_t i = 0; i < n; ++i) ++g.ptr[v[i] + 1];
  for (int64_t r = 0; r < numOut; ++r) g.ptr[r + 1] += g.ptr[r];
  g.perm.resize(n);
  std::vector<int64_t> fill(g.ptr.begin(), g.ptr.end() - 1);
  for (size_t i = 0; i < n; ++i) g.perm[fill[v[i]]++] = static_cast<int64_t>(i);
  return g;
}

int64_t targetGrain(const StatsGrouping& g, int64_t F) {
  const int64_t S = static_cast<int64_t>(g.ptr.size()) - 1;
  return grainFor((g.ptr.back() / std::max<int64_t>(S, 1) + 1) * F);
}

}  // namespace

Variable scatterMin(const Variable& xv, const Tensor& index, int64_t numOut) {
  const Tensor& X = xv.value();
  StatsGrouping g = groupRows("scatterMin", X, index, numOut);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t F = X.dim(1);
    Tensor Y = Tensor::empty({numOut, F}, X.dtype());
    Tensor Arg = Tensor::empty({numOut * F}, DType::I64);
    const T* x = X.data<T>();
    T* y = Y.data<T>();
    int64_t* arg = Arg.data<int64_t>();
    parallelFor(numOut, targetGrain(g, F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      for (int64_t s = b; s < e; ++s)
        for (int64_t f = 0; f < F; ++f) {
          // PyG's scatter_reduce("amin", include_self=False): 0 where no row arrives. The gradient goes to the
          // first row holding the minimum (as scatterMax's to the first maximum).
          T best = 0;
          int64_t a = -1;
          for (int64_t k = g.ptr[s]; k < g.ptr[s + 1]; ++k) {
            const T v = x[g.perm[k] * F + f];
            if (a < 0 || v < best) {
              best = v;
              a = g.perm[k];
            }
          }
          y[s * F + f] = best;
          arg[s * F + f] = a;
        }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"scatterMin", X.numel(), static_cast<int64_t>(X.nbytes()) + 8 * X.dim(0), numOut * F * elem,
                X.numel()};
    Shape xs = X.shape();
    return Variable::record(info, Y, {xv}, {Arg}, [xs](const Tensor& gy, std::vector<GradInput>& in,
                                                       const std::vector<Tensor>& saved) {
      Tensor G(xs, gy.dtype());
      const int64_t F = xs[1], S = gy.dim(0);
      const int64_t* arg = saved[0].data<int64_t>();
      const T* go = gy.data<T>();
      T* gx = G.data<T>();
      // A row belongs to one target, so targets write disjoint rows.
      parallelFor(S, grainFor(F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
        for (int64_t s = b; s < e; ++s)
          for (int64_t f = 0; f < F; ++f)
            if (arg[s * F + f] >= 0) gx[arg[s * F + f] * F + f] += go[s * F + f];
      });
      in[0].addGrad(G);
    });
  });
}

namespace {

// var = mean(x^2) - mean(x)^2 per target and feature (PyG's VarAggregation: the two scatter means, then the
// difference, each rounded as PyG rounds it); with `stdEps` >= 0 the output is sqrt(clamp(var, min=stdEps))
// (StdAggregation). A target no row reaches has mean 0 and var 0 (std sqrt(eps)).
Variable scatterMoments(const char* op, const Variable& xv, const Tensor& index, int64_t numOut, double stdEps) {
  const Tensor& X = xv.value();
  StatsGrouping g = groupRows(op, X, index, numOut);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t F = X.dim(1);
    const bool isStd = stdEps >= 0;
    const T eps = static_cast<T>(stdEps);
    Tensor Y = Tensor::empty({numOut, F}, X.dtype());
    Tensor Mean = Tensor::empty({numOut, F}, X.dtype());
    Tensor Var = isStd ? Tensor::empty({numOut, F}, X.dtype()) : Y;
    const T* x = X.data<T>();
    T *y = Y.data<T>(), *mean = Mean.data<T>(), *var = Var.data<T>();
    parallelFor(numOut, targetGrain(g, F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      std::vector<T> s1(static_cast<size_t>(F)), s2(static_cast<size_t>(F));
      for (int64_t s = b; s < e; ++s) {
        std::fill(s1.begin(), s1.end(), T(0));
        std::fill(s2.begin(), s2.end(), T(0));
        for (int64_t k = g.ptr[s]; k < g.ptr[s + 1]; ++k) {
          const T* r = x + g.perm[k] * F;
          for (int64_t f = 0; f < F; ++f) {
            s1[f] += r[f];
            const T sq = r[f] * r[f];
            s2[f] += sq;
          }
        }
        const T c = static_cast<T>(std::max<int64_t>(g.ptr[s + 1] - g.ptr[s], 1));
        for (int64_t f = 0; f < F; ++f) {
          const T m = s1[f] / c, m2 = s2[f] / c, mm = m * m;
          const T v = m2 - mm;
          mean[s * F + f] = m;
          var[s * F + f] = v;
          // torch's clamp(min=eps) keeps a NaN.
          if (isStd) y[s * F + f] = std::sqrt(std::isnan(v) || v >= eps ? v : eps);
        }
      }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{op, 4 * X.numel() + 4 * numOut * F, static_cast<int64_t>(X.nbytes()) + 8 * X.dim(0),
                (isStd ? 3 : 2) * numOut * F * elem, 5 * X.numel()};
    Shape xs = X.shape();
    std::vector<Tensor> saved = {X, g.index, Mean, Var, Tensor::fromVector(g.ptr)};
    if (isStd) saved.push_back(Y);
    return Variable::record(info, Y, {xv}, std::move(saved), [xs, isStd, eps](const Tensor& gy,
                                                                              std::vector<GradInput>& in,
                                                                              const std::vector<Tensor>& saved) {
      const int64_t F = xs[1];
      Tensor G = Tensor::empty(xs, gy.dtype());
      const T *x = saved[0].data<T>(), *mean = saved[2].data<T>(), *var = saved[3].data<T>();
      const T* sd = isStd ? saved[5].data<T>() : nullptr;
      const int64_t *idx = saved[1].data<int64_t>(), *ptr = saved[4].data<int64_t>();
      const T* go = gy.data<T>();
      T* gx = G.data<T>();
      // The chain PyG's autograd runs: sqrt' = g / (2 std), clamp passes where var >= eps; then through
      // mean(x*x): 2 x (gv / c), and through -mean^2: (-2 gv mean) / c.
      parallelFor(xs[0], grainFor(4 * F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
        for (int64_t r = b; r < e; ++r) {
          const int64_t s = idx[r];
          const T c = static_cast<T>(ptr[s + 1] - ptr[s]);
          for (int64_t f = 0; f < F; ++f) {
            const int64_t o = s * F + f;
            T gv = go[o];
            if (isStd) gv = var[o] >= eps ? gv / (2 * sd[o]) : T(0);
            const T a = gv / c;
            gx[r * F + f] = 2 * (a * x[r * F + f]) + (-2 * gv * mean[o]) / c;
          }
        }
      });
      in[0].addGrad(G);
    });
  });
}

}  // namespace

Variable scatterVar(const Variable& x, const Tensor& index, int64_t numOut) {
  return scatterMoments("scatterVar", x, index, numOut, -1.0);
}

Variable scatterStd(const Variable& x, const Tensor& index, int64_t numOut, double eps) {
  GNN_CHECK_ARG(eps >= 0, "scatterStd: eps must be >= 0, got ", eps);
  return scatterMoments("scatterStd", x, index, numOut, eps);
}

}  // namespace gnn
