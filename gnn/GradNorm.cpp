#include "gnn/GradNorm.h"

#include <cmath>

#include "gnn/Check.h"
#include "gnn/Parallel.h"

namespace gnn {

namespace {
// Sum of squares of one tensor in fixed pieces, each summed in order and added in order: the bits do not
// depend on the thread count.
double sumSquares(const Tensor& g) {
  constexpr int64_t kPiece = int64_t{1} << 14;
  const int64_t n = g.numel();
  const int64_t pieces = (n + kPiece - 1) / kPiece;
  std::vector<double> part(static_cast<size_t>(pieces), 0.0);
  parallelFor(pieces, 1, [&](int64_t first, int64_t last) {
    for (int64_t k = first; k < last; ++k) {
      const int64_t b = k * kPiece, e = std::min(n, b + kPiece);
      double s = 0;
      dispatchFloat(g.dtype(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        const T* d = g.data<T>();
        for (int64_t i = b; i < e; ++i) s += static_cast<double>(d[i]) * static_cast<double>(d[i]);
      });
      part[static_cast<size_t>(k)] = s;
    }
  });
  double s = 0;
  for (double p : part) s += p;
  return s;
}
}  // namespace

int64_t firstNonFiniteValue(const std::vector<Variable>& params) {
  for (size_t i = 0; i < params.size(); ++i)
    if (!std::isfinite(sumSquares(params[i].value()))) return static_cast<int64_t>(i);
  return -1;
}

GradNormResult gradNorm(const std::vector<Variable>& params) {
  GradNormResult r;
  double total = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].hasGrad()) continue;
    const double s = sumSquares(params[i].grad());
    if (!std::isfinite(s) && r.firstNonFinite < 0) r.firstNonFinite = static_cast<int64_t>(i);
    total += s;
  }
  r.norm = std::sqrt(total);
  return r;
}

GradNormResult clipGradNorm(const std::vector<Variable>& params, double maxNorm) {
  GNN_CHECK_ARG(maxNorm > 0 && std::isfinite(maxNorm), "clipGradNorm: maxNorm must be finite and > 0, got ", maxNorm);
  GradNormResult r = gradNorm(params);
  if (!std::isfinite(r.norm) || r.norm <= maxNorm) return r;
  const double scale = maxNorm / (r.norm + 1e-6);
  for (const Variable& p : params) {
    if (!p.hasGrad()) continue;
    Variable v = p;
    Tensor& g = v.grad();
    dispatchFloat(g.dtype(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      g.flat<T>() *= static_cast<T>(scale);
    });
  }
  r.clipped = true;
  return r;
}

GradNormResult gradNorm(const std::vector<Tensor>& grads) {
  GradNormResult r;
  double total = 0;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    const double s = sumSquares(grads[i]);
    if (!std::isfinite(s) && r.firstNonFinite < 0) r.firstNonFinite = static_cast<int64_t>(i);
    total += s;
  }
  r.norm = std::sqrt(total);
  return r;
}

GradNormResult clipGradNorm(std::vector<Tensor>& grads, double maxNorm) {
  GNN_CHECK_ARG(maxNorm > 0 && std::isfinite(maxNorm), "clipGradNorm: maxNorm must be finite and > 0, got ", maxNorm);
  GradNormResult r = gradNorm(grads);
  if (!std::isfinite(r.norm) || r.norm <= maxNorm) return r;
  const double scale = maxNorm / (r.norm + 1e-6);
  for (Tensor& g : grads) {
    if (!g.defined()) continue;
    // A gradient handed to two parameters (an op passing its output gradient through) shares storage: scale a
    // copy, or the shared buffer would be scaled twice.
    if (!g.uniquelyOwned()) g = g.clone();
    dispatchFloat(g.dtype(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      g.flat<T>() *= static_cast<T>(scale);
    });
  }
  r.clipped = true;
  return r;
}

}  // namespace gnn
