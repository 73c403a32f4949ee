#include "gnn/optim/GradNorm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gnn/system/Check.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {
// Sums of squares of several tensors (undefined ones: 0) in one parallel pass. Each tensor is cut into fixed
// pieces; a piece is summed over kLanes interleaved double accumulators (so the loop vectorises instead of
// waiting on one chain of additions), the lanes added in order, and a tensor's pieces added in order: the
// bits depend on the tensors alone, not on the thread count. One pass over all of them because most
// parameters are a single piece: one parallel region per tensor left a core idle for each.
std::vector<double> sumSquares(const std::vector<const Tensor*>& ts) {
  constexpr int64_t kPiece = int64_t{1} << 14;
  constexpr int kLanes = 8;
  struct Piece {
    size_t tensor;
    int64_t begin, end;
  };
  std::vector<Piece> pieces;
  for (size_t t = 0; t < ts.size(); ++t) {
    // Integer buffers (a step counter) hold no value that can overflow to infinity.
    if (!ts[t] || !ts[t]->defined() || !ts[t]->isFloating()) continue;
    const int64_t n = ts[t]->numel();
    for (int64_t b = 0; b < n; b += kPiece) pieces.push_back({t, b, std::min(n, b + kPiece)});
  }
  std::vector<double> part(pieces.size(), 0.0);
  parallelFor(static_cast<int64_t>(pieces.size()), 1, [&](int64_t first, int64_t last) {
    for (int64_t k = first; k < last; ++k) {
      const Piece& pc = pieces[static_cast<size_t>(k)];
      dispatchFloat(ts[pc.tensor]->dtype(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        const T* __restrict d = ts[pc.tensor]->template data<T>();
        double lane[kLanes] = {};
        int64_t i = pc.begin;
        for (; i + kLanes <= pc.end; i += kLanes)
          for (int j = 0; j < kLanes; ++j) lane[j] += static_cast<double>(d[i + j]) * static_cast<double>(d[i + j]);
        for (int j = 0; i < pc.end; ++i, ++j) lane[j] += static_cast<double>(d[i]) * static_cast<double>(d[i]);
        double s = 0;
        for (double l : lane) s += l;
        part[static_cast<size_t>(k)] = s;
      });
    }
  });
  std::vector<double> sums(ts.size(), 0.0);
  for (size_t k = 0; k < pieces.size(); ++k) sums[pieces[k].tensor] += part[k];
  return sums;
}

GradNormResult normOf(const std::vector<const Tensor*>& grads) {
  GradNormResult r;
  const std::vector<double> sums = sumSquares(grads);
  double total = 0;
  for (size_t i = 0; i < sums.size(); ++i) {
    if (!std::isfinite(sums[i]) && r.firstNonFinite < 0) r.firstNonFinite = static_cast<int64_t>(i);
    total += sums[i];
  }
  r.norm = std::sqrt(total);
  return r;
}
}  // namespace

int64_t firstNonFiniteValue(const std::vector<Variable>& params) {
  std::vector<const Tensor*> values;
  for (const Variable& p : params) values.push_back(&p.value());
  const std::vector<double> sums = sumSquares(values);
  for (size_t i = 0; i < sums.size(); ++i)
    if (!std::isfinite(sums[i])) return static_cast<int64_t>(i);
  return -1;
}

GradNormResult gradNorm(const std::vector<Variable>& params) {
  std::vector<const Tensor*> grads;
  for (const Variable& p : params) grads.push_back(p.hasGrad() ? &p.grad() : nullptr);
  return normOf(grads);
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
  std::vector<const Tensor*> ptrs;
  for (const Tensor& g : grads) ptrs.push_back(&g);
  return normOf(ptrs);
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
