// Finite-difference gradient check in double precision (as flashlight's AutogradTestUtils): for a random
// projection r of the output, compares the analytic d(sum(r * f(x)))/dx from backward() with central
// differences, element by element, for every input.
#pragma once
#include <gtest/gtest.h>

#include <functional>

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn::testing {

using OpFn = std::function<Variable(const std::vector<Variable>&)>;

/// Random float64 tensor, U(-1, 1).
inline Tensor randomTensor(const Shape& shape, uint64_t seed) {
  Generator g(seed);
  return init::uniform(shape, -1.0, 1.0, g, DType::F64);
}

inline double projected(const OpFn& f, const std::vector<Variable>& in, const Tensor& r) {
  NoGradGuard ng;
  Tensor y = f(in).value();
  double s = 0;
  for (int64_t i = 0; i < y.numel(); ++i) s += y.at(i) * r.at(i);
  return s;
}

/// Checks every input that is a floating tensor; returns the largest relative error seen.
inline double expectGradientsMatch(const OpFn& f, const std::vector<Tensor>& inputs, double eps = 1e-6,
                                   double tol = 1e-6) {
  std::vector<Variable> vars;
  for (const auto& t : inputs) vars.emplace_back(t.clone(), t.isFloating());
  Variable y = f(vars);
  Tensor r = randomTensor(y.shape(), 99);
  Variable loss = sum(mul(y, Variable(r)));
  loss.backward();
  double worst = 0;
  for (size_t k = 0; k < vars.size(); ++k) {
    if (!inputs[k].isFloating()) continue;
    EXPECT_TRUE(vars[k].hasGrad()) << "input " << k << " received no gradient";
    if (!vars[k].hasGrad()) continue;
    Tensor analytic = vars[k].grad();
    double* p = vars[k].value().data<double>();
    for (int64_t j = 0; j < inputs[k].numel(); ++j) {
      double saved = p[j];
      p[j] = saved + eps;
      double up = projected(f, vars, r);
      p[j] = saved - eps;
      double down = projected(f, vars, r);
      p[j] = saved;
      double numeric = (up - down) / (2 * eps);
      double err = std::abs(numeric - analytic.at(j)) / std::max(1.0, std::abs(numeric));
      worst = std::max(worst, err);
      EXPECT_LE(err, tol) << "input " << k << " element " << j << ": analytic " << analytic.at(j) << " numeric "
                          << numeric;
    }
  }
  return worst;
}

}  // namespace gnn::testing
