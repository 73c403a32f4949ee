// Checks for layers and models that take sparse input features (SparseMatrix) as well as dense ones: the
// sparse copy of a dense matrix, and a run's outputs with every trained parameter's gradient, to compare the
// two forms within a relative tolerance.
//
//   const SparseMatrix xs = sparseOf(x);
//   auto dense = outputsAndGrads(conv, [&] { return conv.forward(Variable(x), ei); });
//   auto sparse = outputsAndGrads(conv, [&] { return conv.forward(xs, ei); });
//   expectClose(sparse, dense, 1e-5);
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gnn/nn/Init.h"
#include "gnn/nn/Module.h"
#include "gnn/ops/Ops.h"
#include "gnn/tensor/SparseMatrix.h"

namespace gnn::testing {

/// The non-zeros of a dense [rows, cols] matrix as a SparseMatrix of its dtype.
inline SparseMatrix sparseOf(const Tensor& x) {
  std::vector<int64_t> r, c;
  std::vector<double> v;
  const int64_t rows = x.dim(0), cols = x.dim(1);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < cols; ++k)
      if (const double a = x.at(i * cols + k); a != 0) {
        r.push_back(i);
        c.push_back(k);
        v.push_back(a);
      }
  return SparseMatrix::fromCoo(rows, cols, r, c, v, x.dtype());
}

/// Values in [-1, 1] with about two thirds zeros, and one all-zero row (an empty sparse row): [rows, cols].
inline Tensor sparseLooking(int64_t rows, int64_t cols, Generator& gen, DType dtype = DType::F32) {
  Tensor x = init::uniform({rows, cols}, -1, 1, gen, dtype);
  dispatchFloat(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* p = x.data<T>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t k = 0; k < cols; ++k)
        if (i == 1 || (i + k) % 3 != 0) p[i * cols + k] = 0;
  });
  return x;
}

/// Named results of one run: "out", then "grad <name>" for each parameter that requires a gradient, of the
/// loss sum(c * out) with fixed weights c in [-1, 1] (not sum(out * out), which is constant under a layer that
/// normalises its rows); gradients are cleared first.
inline std::vector<std::pair<std::string, Tensor>> outputsAndGrads(Module& m, const std::function<Variable()>& run) {
  m.zeroGrad();
  Variable y = run();
  Tensor c = Tensor::empty(y.shape(), y.dtype());
  dispatchFloat(c.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    for (int64_t i = 0; i < c.numel(); ++i) c.data<T>()[i] = static_cast<T>((i * 7 % 11) - 5) / T(5);
  });
  sum(mul(y, Variable(c))).backward();
  std::vector<std::pair<std::string, Tensor>> r{{"out", y.value().clone()}};
  for (auto& [name, p] : m.namedParameters())
    if (p.requiresGrad()) r.emplace_back("grad " + name, p.grad().defined() ? p.grad().clone() : Tensor());
  return r;
}

/// max |a - b| / max(scaleFloor, max |b|).
inline double relativeDifference(const Tensor& a, const Tensor& b, double scaleFloor = 1e-6) {
  double diff = 0, scale = scaleFloor;
  for (int64_t i = 0; i < b.numel(); ++i) {
    diff = std::max(diff, std::abs(a.at(i) - b.at(i)));
    scale = std::max(scale, std::abs(b.at(i)));
  }
  return diff / scale;
}

/// The largest magnitude among the results (the scale of a run's numbers).
inline double largestMagnitude(const std::vector<std::pair<std::string, Tensor>>& results) {
  double m = 0;
  for (const auto& [name, t] : results)
    for (int64_t i = 0; t.defined() && i < t.numel(); ++i) m = std::max(m, std::abs(t.at(i)));
  return m;
}

/// Each result of `got` within `tolerance` (relative, to at least scaleFloor) of the same one of `want`.
inline void expectClose(const std::vector<std::pair<std::string, Tensor>>& got,
                        const std::vector<std::pair<std::string, Tensor>>& want, double tolerance,
                        double scaleFloor = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].first, want[i].first);
    ASSERT_EQ(got[i].second.defined(), want[i].second.defined()) << got[i].first;
    if (!want[i].second.defined()) continue;
    ASSERT_EQ(got[i].second.shape(), want[i].second.shape()) << got[i].first;
    EXPECT_LE(relativeDifference(got[i].second, want[i].second, scaleFloor), tolerance) << got[i].first;
  }
}

}  // namespace gnn::testing
