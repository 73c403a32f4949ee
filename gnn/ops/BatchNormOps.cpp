// Batch normalisation over the real rows of a fixed-size batch (torch.nn.BatchNorm1d's arithmetic: biased
// variance in the normalisation, eps inside the square root).
//
// Column sums run over row chunks whose size depends only on the width (grainFor(F)); each chunk sums its rows in
// order and the chunks' partial sums are added in chunk order, so the bits do not depend on the thread count.
// Rows whose mask is 0 add nothing to the statistics, and padding rows sit after the real ones: more padding
// adds chunks of zeros, which leaves every sum (and so every real row's value and gradient) bit for bit the same.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

// Per-column sums of f(i, j) over rows i (every row, or the rows with keep[i] != 0), deterministically.
template <class T, class F>
void columnSums(int64_t M, int64_t F_, const uint8_t* keep, T* out, F&& f) {
  const int64_t chunk = grainFor(F_);
  const int64_t chunks = std::max<int64_t>(1, (M + chunk - 1) / chunk);
  std::vector<T> partial(static_cast<size_t>(chunks * F_), T(0));
  parallelFor(M, chunk, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    T* __restrict p = partial.data() + (b / chunk) * F_;
    for (int64_t i = b; i < e; ++i) {
      if (keep && !keep[i]) continue;
      for (int64_t j = 0; j < F_; ++j) p[j] += f(i, j);
    }
  });
  ops::sumChunkPartials(partial.data(), chunks, F_, out);
}

// Training statistics of x [M, F] over its kept rows (`real` of them): the mean into mu, the biased variance
// into var. Two passes (the mean, then the squared deviations from it): no cancellation for large means. No
// real row at all gives mean 0 and variance 0 (finite outputs, and nothing for the running statistics).
template <class T>
void batchStatistics(const T* xp, int64_t M, int64_t F, const uint8_t* keep, int64_t real, T* mu, T* var) {
  const T n = static_cast<T>(std::max<int64_t>(real, 1));
  columnSums<T>(M, F, keep, mu, [xp, F](int64_t i, int64_t j) { return xp[i * F + j]; });
  for (int64_t j = 0; j < F; ++j) mu[j] /= n;
  columnSums<T>(M, F, keep, var, [xp, mu, F](int64_t i, int64_t j) {
    const T d = xp[i * F + j] - mu[j];
    return d * d;
  });
  for (int64_t j = 0; j < F; ++j) var[j] /= n;
}

// y = (x - mean) * invStd * gamma + beta for every row of x [M, F] (mu the mean, rs 1 / sqrt(var + eps)).
template <class T>
void normalizeRows(const T* xp, int64_t M, int64_t F, const T* mu, const T* rs, const T* __restrict g,
                   const T* __restrict bb, T* yp) {
  parallelFor(M, grainFor(F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i) {
      const T* __restrict xr = xp + i * F;
      T* __restrict yr = yp + i * F;
      for (int64_t j = 0; j < F; ++j) yr[j] = ops::mulAdd((xr[j] - mu[j]) * rs[j], g[j], bb[j]);
    }
  });
}

// x's gradient [M, F] from dy: real rows g rs (dy - S1 / n - x_hat S2 / n) (m1 = S1 / n, m2 = S2 / n);
// padding rows (and every row in evaluation): g rs dy.
template <class T>
void inputGradient(const T* xp, const T* gyp, const uint8_t* keep, bool training, int64_t M, int64_t F,
                   const T* mu, const T* rs, const T* __restrict g, const std::vector<T>& m1,
                   const std::vector<T>& m2, T* gxp) {
  parallelFor(M, grainFor(F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i) {
      const T* __restrict xr = xp + i * F;
      const T* __restrict dy = gyp + i * F;
      T* __restrict gx = gxp + i * F;
      if (training && (!keep || keep[i])) {
        for (int64_t j = 0; j < F; ++j) {
          const T xh = (xr[j] - mu[j]) * rs[j];
          gx[j] = g[j] * rs[j] * ops::mulAdd(-xh, m2[static_cast<size_t>(j)], dy[j] - m1[static_cast<size_t>(j)]);
        }
      } else {
        for (int64_t j = 0; j < F; ++j) gx[j] = g[j] * rs[j] * dy[j];
      }
    }
  });
}

// The backward of batchNormImpl; saved holds x, the row mask, the statistics [2, F] and gamma.
template <class T>
void batchNormBackward(bool training, int64_t real, const Tensor& gy, std::vector<GradInput>& in,
                       const std::vector<Tensor>& saved) {
  const Tensor &X = saved[0], &mask = saved[1], &Stats = saved[2], &Gm = saved[3];
  const int64_t M = X.dim(0), F = X.dim(1);
  const T* xp = X.data<T>();
  const T* gyp = gy.data<T>();
  const uint8_t* keep = mask.defined() ? mask.data<uint8_t>() : nullptr;
  const T* mu = Stats.data<T>();
  const T* rs = mu + F;
  const T* __restrict g = Gm.data<T>();
  // Over every row, padding too: a padding row's output depends on the real rows' statistics. (In a
  // model padding rows get no gradient, so these sums equal the real rows' alone, bit for bit.)
  std::vector<T> s1(static_cast<size_t>(F)), s2(static_cast<size_t>(F));
  columnSums<T>(M, F, nullptr, s1.data(), [gyp, F](int64_t i, int64_t j) { return gyp[i * F + j]; });
  columnSums<T>(M, F, nullptr, s2.data(), [gyp, xp, mu, rs, F](int64_t i, int64_t j) {
    return gyp[i * F + j] * ((xp[i * F + j] - mu[j]) * rs[j]);
  });
  if (in[1].requiresGrad()) {
    Tensor gg = Tensor::empty(in[1].shape(), X.dtype());
    std::copy(s2.begin(), s2.end(), gg.data<T>());
    in[1].addGrad(gg);
  }
  if (in[2].requiresGrad()) {
    Tensor gb = Tensor::empty(in[2].shape(), X.dtype());
    std::copy(s1.begin(), s1.end(), gb.data<T>());
    in[2].addGrad(gb);
  }
  if (!in[0].requiresGrad()) return;
  const T n = static_cast<T>(std::max<int64_t>(real, 1));
  std::vector<T> m1(static_cast<size_t>(F)), m2(static_cast<size_t>(F));
  for (int64_t j = 0; j < F; ++j) {
    m1[static_cast<size_t>(j)] = s1[static_cast<size_t>(j)] / n;
    m2[static_cast<size_t>(j)] = s2[static_cast<size_t>(j)] / n;
  }
  Tensor G = Tensor::empty(X.shape(), X.dtype());
  inputGradient<T>(xp, gyp, keep, training, M, F, mu, rs, g, m1, m2, G.data<T>());
  in[0].addGrad(G);
}

// y = (x - mean) * invStd * gamma + beta for every row. Training (stats computed here, from the masked rows):
// the backward differentiates through the statistics; evaluation (`mean`, `var` given): they are constants.
Variable batchNormImpl(const char* op, const Variable& x, const Tensor& rowMask, const Variable& gamma,
                       const Variable& beta, double eps, const Tensor& fixedMean, const Tensor& fixedVar,
                       Tensor* batchMean, Tensor* batchVar) {
  const Tensor &X = x.value(), &Gm = gamma.value(), &Bt = beta.value();
  GNN_CHECK_ARG(X.rank() == 2, op, ": expected x [M, F], got ", shapeString(X.shape()));
  const int64_t M = X.dim(0), F = X.dim(1);
  GNN_CHECK_ARG(Gm.numel() == F && Bt.numel() == F && Gm.dtype() == X.dtype() && Bt.dtype() == X.dtype(), op,
                ": gamma ", shapeString(Gm.shape()), " and beta ", shapeString(Bt.shape()), " must have ", F,
                " elements of x's dtype");
  GNN_CHECK_ARG(!rowMask.defined() || (rowMask.dtype() == DType::U8 && rowMask.numel() == M), op,
                ": rowMask must be uint8 with one entry per row of x ", shapeString(X.shape()), ", got ",
                shapeString(rowMask.shape()));
  GNN_CHECK_ARG(eps > 0, op, ": eps must be > 0, got ", eps);
  const bool training = !fixedMean.defined();
  GNN_CHECK_ARG(training || (fixedMean.numel() == F && fixedVar.numel() == F && fixedMean.dtype() == X.dtype() &&
                             fixedVar.dtype() == X.dtype()),
                op, ": running mean ", shapeString(fixedMean.shape()), " and variance ", shapeString(fixedVar.shape()),
                " must have ", F, " elements of x's dtype");
  // A copy of the mask: the backward reads it, and a device may refill the batch's tensors before then.
  Tensor mask = rowMask.defined() ? rowMask.clone() : Tensor();
  const uint8_t* keep = mask.defined() ? mask.data<uint8_t>() : nullptr;
  int64_t real = M;
  if (keep) real = static_cast<int64_t>(std::count_if(keep, keep + M, [](uint8_t v) { return v != 0; }));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* xp = X.data<T>();
    // Stats [2, F]: the mean, then 1 / sqrt(var + eps).
    Tensor Stats = Tensor::empty({2, F}, X.dtype()), Var = Tensor::empty({F}, X.dtype());
    T* mu = Stats.data<T>();
    T* rs = mu + F;
    T* var = Var.data<T>();
    if (training) {
      batchStatistics<T>(xp, M, F, keep, real, mu, var);
    } else {
      std::copy(fixedMean.data<T>(), fixedMean.data<T>() + F, mu);
      std::copy(fixedVar.data<T>(), fixedVar.data<T>() + F, var);
    }
    for (int64_t j = 0; j < F; ++j) rs[j] = T(1) / std::sqrt(var[j] + static_cast<T>(eps));
    if (batchMean) {
      *batchMean = Tensor::empty({F}, X.dtype());
      std::copy(mu, mu + F, batchMean->data<T>());
    }
    if (batchVar) *batchVar = Var;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    normalizeRows<T>(xp, M, F, mu, rs, Gm.data<T>(), Bt.data<T>(), Y.data<T>());
    const int64_t bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{op, (training ? 8 : 4) * M * F, bytes, bytes, 10 * M * F};
    return Variable::record(info, Y, {x, gamma, beta}, {X, mask, Stats, Gm},
                            [training, real](const Tensor& gy, std::vector<GradInput>& in,
                                             const std::vector<Tensor>& saved) {
                              batchNormBackward<T>(training, real, gy, in, saved);
                            });
  });
}

}  // namespace

Variable maskedBatchNorm(const Variable& x, const Tensor& rowMask, const Variable& gamma, const Variable& beta,
                         double eps, Tensor* batchMean, Tensor* batchVar) {
  return batchNormImpl("maskedBatchNorm", x, rowMask, gamma, beta, eps, Tensor(), Tensor(), batchMean, batchVar);
}

Variable batchNormInference(const Variable& x, const Tensor& mean, const Tensor& var, const Variable& gamma,
                            const Variable& beta, double eps) {
  GNN_CHECK_ARG(mean.defined() && var.defined(), "batchNormInference: running mean and variance must be defined");
  return batchNormImpl("batchNormInference", x, Tensor(), gamma, beta, eps, mean, var, nullptr, nullptr);
}

}  // namespace gnn
