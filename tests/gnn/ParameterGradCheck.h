// Gradient checks of a model's parameters (and inputs) against central differences in float64, for models whose
// tables have thousands of rows: each variable is checked at its largest analytic gradients and a few random
// elements (or at every element, with `top` at least its size). Used by the Graphormer and GPS++ tests and the
// layer table.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gnn/nn/Init.h"
#include "gnn/nn/Module.h"
#include "gnn/ops/Ops.h"

namespace gnn::testing {

// For every variable of `vars`: the analytic gradient of loss() against central differences at the elements
// with the largest analytic gradients and at a few random ones (the tables have thousands of rows).
inline void expectParameterGradientsMatch(const std::vector<std::pair<std::string, Variable>>& vars,
                          const std::function<Variable()>& loss, int top = 4, int random = 4,
                          double tol = 1e-6) {
  for (const auto& [name, v] : vars) const_cast<Variable&>(v).zeroGrad();
  loss().backward();
  Generator g(17);
  for (const auto& [name, v] : vars) {
    Variable var = v;
    ASSERT_TRUE(var.hasGrad()) << name << " received no gradient";
    const Tensor analytic = var.grad().clone();
    const int64_t n = analytic.numel();
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::partial_sort(
        order.begin(), order.begin() + std::min<int64_t>(top, n), order.end(),
        [&](int64_t a, int64_t b) { return std::abs(analytic.at(a)) > std::abs(analytic.at(b)); });
    std::vector<int64_t> picks(order.begin(), order.begin() + std::min<int64_t>(top, n));
    for (int r = 0; r < random; ++r)
      picks.push_back(static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n))));
    double* p = var.value().data<double>();
    for (int64_t j : picks) {
      const double saved = p[j], eps = 1e-6;
      double up, down;
      {
        NoGradGuard ng;
        p[j] = saved + eps;
        up = loss().value().item();
        p[j] = saved - eps;
        down = loss().value().item();
        p[j] = saved;
      }
      const double numeric = (up - down) / (2 * eps);
      EXPECT_LE(std::abs(numeric - analytic.at(j)) / std::max(1.0, std::abs(numeric)), tol)
          << name << " element " << j << ": analytic " << analytic.at(j) << " numeric " << numeric;
    }
  }
}

inline std::vector<std::pair<std::string, Variable>> withInputs(
    const Module& m, std::vector<std::pair<std::string, Variable>> inputs) {
  for (auto& p : m.namedParameters()) inputs.push_back(p);
  return inputs;
}

// A random projection of a layer's output as the loss, under a fixed random key (dropout is part of the
// function).
inline Variable projected(const Variable& y, uint64_t seed = 5) {
  Generator g(seed);
  return sum(mul(y, Variable(init::uniform(y.shape(), -1, 1, g, y.dtype()))));
}

}  // namespace gnn::testing
