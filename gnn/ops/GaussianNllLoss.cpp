#include "gnn/ops/GaussianNllLoss.h"

#include <algorithm>
#include <cmath>

#include "gnn/ops/Ops.h"

namespace gnn {

namespace {
constexpr double kPi = 3.14159265358979323846;

template <class T>
T softplus(T x) {
  return std::max(x, T(0)) + std::log1p(std::exp(-std::abs(x)));
}
template <class T>
T sigmoid(T x) {
  return x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
}
}  // namespace

double mveVariance(double raw) { return softplus(raw) + kMveVarianceFloor; }

Variable gaussianNllLoss(const Variable& out, const Tensor& target, const Tensor& mask) {
  const Tensor& P = out.value();
  GNN_CHECK_ARG(P.rank() == 2 && target.rank() == 2 && P.dim(0) == target.dim(0) && P.dim(1) == 2 * target.dim(1),
                "gaussianNllLoss: the output ", shapeString(P.shape()), " must be [G, 2T] (a mean and a variance per "
                "target) for targets ", shapeString(target.shape()));
  const int64_t rows = target.dim(0), tasks = target.dim(1);
  Tensor Tt = target.dtype() == P.dtype() ? target : target.to(P.dtype());
  Tensor M = Tensor::full({rows * tasks}, 1, DType::U8);
  if (mask.defined()) {
    GNN_CHECK_ARG(mask.dtype() == DType::U8, "gaussianNllLoss: mask must be uint8, got ", dtypeName(mask.dtype()));
    GNN_CHECK_ARG(mask.numel() == rows * tasks || mask.numel() == rows, "gaussianNllLoss: mask of shape ",
                  shapeString(mask.shape()), " fits neither the target ", shapeString(target.shape()),
                  " nor its rows");
    const uint8_t* p = mask.data<uint8_t>();
    uint8_t* m = M.data<uint8_t>();
    for (int64_t i = 0; i < rows * tasks; ++i) m[i] = (mask.numel() == rows ? p[i / tasks] : p[i]) != 0;
  }
  const uint8_t* m = M.data<uint8_t>();
  int64_t count = 0;
  for (int64_t i = 0; i < rows * tasks; ++i) count += m[i];
  return dispatchFloat(P.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    auto p = P.matrix<T>();
    auto y = Tt.matrix<T>();
    const T floor = static_cast<T>(kMveVarianceFloor), log2pi = static_cast<T>(std::log(2 * kPi));
    T acc = 0;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t t = 0; t < tasks; ++t) {
        if (!m[i * tasks + t]) continue;
        const T r = p(i, t) - y(i, t), v = softplus(p(i, tasks + t)) + floor;
        acc += r * r / (2 * v) + (log2pi + std::log(v)) / 2;
      }
    Tensor Y = Tensor::scalar(count ? acc / static_cast<T>(count) : T(0), P.dtype());
    const int64_t n = rows * tasks;
    OpInfo info{"gaussianNllLoss", 12 * n, static_cast<int64_t>(P.nbytes() + Tt.nbytes()) + n,
                static_cast<int64_t>(Y.nbytes()), 12 * n};
    return Variable::record(
        info, Y, {out}, {P, Tt, M},
        [count, rows, tasks, floor](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const Tensor& P = saved[0];
          Tensor G = Tensor::zeros(P.shape(), P.dtype());
          if (count) {
            auto p = P.matrix<T>();
            auto y = saved[1].matrix<T>();
            auto g = G.matrix<T>();
            const uint8_t* m = saved[2].data<uint8_t>();
            const T s = static_cast<T>(gy.item()) / static_cast<T>(count);
            for (int64_t i = 0; i < rows; ++i)
              for (int64_t t = 0; t < tasks; ++t) {
                if (!m[i * tasks + t]) continue;
                const T raw = p(i, tasks + t), r = p(i, t) - y(i, t), v = softplus(raw) + floor;
                g(i, t) = s * r / v;
                // d/dv [r^2 / (2 v) + log(v) / 2] = (1 - r^2 / v) / (2 v); dv/draw = sigmoid(raw).
                g(i, tasks + t) = s * (1 - r * r / v) / (2 * v) * sigmoid(raw);
              }
          }
          in[0].addGrad(G);
        });
  });
}

}  // namespace gnn
