// Losses: masked means over the rows (or elements) that count. A mask is uint8 with 1 = counts.
#include <cmath>

#include "gnn/ops/Ops.h"

namespace gnn {
namespace {
// Per-element weights (1 where counted) for a target shape, from a mask shaped like it or masking rows.
// A tensor (not a std::vector) so the tape can count it among the saved bytes.
Tensor expandMask(const char* op, const Tensor& mask, const Tensor& target) {
  Tensor M = Tensor::full({target.numel()}, 1, DType::U8);
  if (!mask.defined()) return M;
  GNN_CHECK_ARG(mask.dtype() == DType::U8, op, ": mask must be uint8, got ", dtypeName(mask.dtype()));
  uint8_t* m = M.data<uint8_t>();
  const uint8_t* p = mask.data<uint8_t>();
  if (mask.numel() == target.numel()) {
    for (int64_t i = 0; i < target.numel(); ++i) m[i] = p[i] != 0;
  } else {
    GNN_CHECK_ARG(mask.numel() == target.rows(), op, ": mask of shape ", shapeString(mask.shape()),
                  " fits neither the target ", shapeString(target.shape()), " nor its rows");
    int64_t c = target.cols();
    for (int64_t i = 0; i < target.numel(); ++i) m[i] = p[i / c] != 0;
  }
  return M;
}

// Shared body for elementwise losses: loss = mean over counted elements of f(pred, target); df is its
// derivative in pred.
template <class F, class DF>
Variable elementwiseLoss(const char* op, const Variable& pred, const Tensor& target, const Tensor& mask, F f, DF df) {
  const Tensor& P = pred.value();
  GNN_CHECK_ARG(P.numel() == target.numel(), op, ": prediction ", shapeString(P.shape()), " and target ",
                shapeString(target.shape()), " differ in size");
  Tensor Tt = target.dtype() == P.dtype() ? target : target.to(P.dtype());
  Tensor M = expandMask(op, mask, target);
  const uint8_t* m = M.data<uint8_t>();
  int64_t count = 0;
  for (int64_t i = 0; i < M.numel(); ++i) count += m[i];
  return dispatchFloat(P.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T *p = P.data<T>(), *t = Tt.data<T>();
    T acc = 0;
    for (int64_t i = 0; i < P.numel(); ++i)
      if (m[i]) acc += f(p[i], t[i]);
    Tensor Y = Tensor::scalar(count ? acc / count : 0, P.dtype());
    const int64_t n = P.numel(), bytes = static_cast<int64_t>(P.nbytes());
    OpInfo info{op, 3 * n, 2 * bytes + n, static_cast<int64_t>(Y.nbytes()), 3 * n};
    return Variable::record(info, Y, {pred}, {P, Tt, M},
                            [count, df](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
      const Tensor &P = saved[0], &Tt = saved[1];
      const uint8_t* m = saved[2].data<uint8_t>();
      Tensor G(P.shape(), P.dtype());
      if (count) {
        T s = static_cast<T>(gy.item()) / count;
        const T *p = P.data<T>(), *t = Tt.data<T>();
        T* g = G.data<T>();
        for (int64_t i = 0; i < P.numel(); ++i) g[i] = m[i] ? s * df(p[i], t[i]) : T(0);
      }
      in[0].addGrad(G);
    });
  });
}
}  // namespace

Variable nllLoss(const Variable& logProbs, const Tensor& labels, const Tensor& mask) {
  const Tensor& L = logProbs.value();
  GNN_CHECK_ARG(L.rank() == 2, "nllLoss: expected log-probabilities [M, C], got ", shapeString(L.shape()));
  GNN_CHECK_ARG(labels.dtype() == DType::I64 && labels.numel() == L.dim(0), "nllLoss: labels must be int64 [",
                L.dim(0), "], got ", dtypeName(labels.dtype()), " ", shapeString(labels.shape()));
  Tensor M = expandMask("nllLoss", mask, labels);
  const uint8_t* m = M.data<uint8_t>();
  const int64_t* y = labels.data<int64_t>();
  int64_t count = 0;
  for (int64_t i = 0; i < L.dim(0); ++i) {
    if (!m[i]) continue;
    GNN_CHECK_ARG(y[i] >= 0 && y[i] < L.dim(1), "nllLoss: label ", y[i], " of row ", i, " is outside [0, ", L.dim(1),
                  ")");
    ++count;
  }
  return dispatchFloat(L.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    auto lp = L.matrix<T>();
    T acc = 0;
    for (int64_t i = 0; i < L.dim(0); ++i)
      if (m[i]) acc -= lp(i, y[i]);
    Tensor Y = Tensor::scalar(count ? acc / count : 0, L.dtype());
    Shape shape = L.shape();
    OpInfo info{"nllLoss", L.dim(0), L.dim(0) * (static_cast<int64_t>(sizeof(T)) + 9), static_cast<int64_t>(Y.nbytes()),
                L.dim(0)};
    return Variable::record(info, Y, {logProbs}, {labels, M},
                            [shape, count](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
                              Tensor G(shape, gy.dtype());
                              auto g = G.matrix<T>();
                              const int64_t* y = saved[0].data<int64_t>();
                              const uint8_t* m = saved[1].data<uint8_t>();
                              T s = count ? static_cast<T>(gy.item()) / count : T(0);
                              for (int64_t i = 0; i < g.rows(); ++i)
                                if (m[i]) g(i, y[i]) = -s;
                              in[0].addGrad(G);
                            });
  });
}

Variable crossEntropy(const Variable& logits, const Tensor& labels, const Tensor& mask) {
  return nllLoss(logSoftmax(logits), labels, mask);
}

Variable mseLoss(const Variable& pred, const Tensor& target, const Tensor& mask) {
  return elementwiseLoss(
      "mseLoss", pred, target, mask, [](auto p, auto t) { return (p - t) * (p - t); },
      [](auto p, auto t) { return 2 * (p - t); });
}

Variable l1Loss(const Variable& pred, const Tensor& target, const Tensor& mask) {
  return elementwiseLoss(
      "l1Loss", pred, target, mask, [](auto p, auto t) { return std::abs(p - t); },
      [](auto p, auto t) { return static_cast<decltype(p)>(p > t ? 1 : (p < t ? -1 : 0)); });
}

Variable bceWithLogits(const Variable& logits, const Tensor& target, const Tensor& mask) {
  // max(z, 0) - z t + log(1 + e^-|z|): stable for large |z|; derivative sigmoid(z) - t.
  return elementwiseLoss(
      "bceWithLogits", logits, target, mask,
      [](auto z, auto t) { return std::max(z, decltype(z)(0)) - z * t + std::log1p(std::exp(-std::abs(z))); },
      [](auto z, auto t) { return 1 / (1 + std::exp(-z)) - t; });
}

}  // namespace gnn
