#include "data/TargetScaling.h"

#include <cmath>
#include <stdexcept>

namespace gnn {

TargetScaling TargetScaling::fit(const Dataset& dataset, const std::vector<int64_t>& positions, int tasks) {
  TargetScaling s;
  std::vector<double> sum(static_cast<size_t>(tasks), 0.0), sq(static_cast<size_t>(tasks), 0.0);
  std::vector<int64_t> count(static_cast<size_t>(tasks), 0);
  // Two passes (mean, then squared deviations) in a fixed order: the same bits on every run.
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t i : positions) {
      Graph g = dataset.get(static_cast<size_t>(i));
      for (int t = 0; t < tasks; ++t) {
        if (g.yMask.defined() && g.yMask.at(t) == 0) continue;
        const double v = g.y.at(t);
        if (pass == 0) {
          sum[static_cast<size_t>(t)] += v;
          ++count[static_cast<size_t>(t)];
        } else {
          const double d = v - s.mean[static_cast<size_t>(t)];
          sq[static_cast<size_t>(t)] += d * d;
        }
      }
    }
    if (pass == 0)
      for (int t = 0; t < tasks; ++t)
        s.mean.push_back(count[static_cast<size_t>(t)] ? sum[static_cast<size_t>(t)] / static_cast<double>(count[static_cast<size_t>(t)]) : 0.0);
  }
  for (int t = 0; t < tasks; ++t) {
    const double var = count[static_cast<size_t>(t)] ? sq[static_cast<size_t>(t)] / static_cast<double>(count[static_cast<size_t>(t)]) : 0.0;
    const double sd = std::sqrt(var);
    s.std.push_back(sd > 1e-12 && std::isfinite(sd) ? sd : 1.0);
  }
  return s;
}

Tensor TargetScaling::standardize(const Tensor& y) const {
  if (!enabled()) return y;
  Tensor out = y.clone();
  auto m = out.matrix<float>();
  for (Eigen::Index t = 0; t < m.cols(); ++t)
    m.col(t) = ((m.col(t).cast<double>().array() - mean[static_cast<size_t>(t)]) / std[static_cast<size_t>(t)]).cast<float>();
  return out;
}

Tensor TargetScaling::restore(const Tensor& pred) const {
  if (!enabled()) return pred;
  Tensor out = pred.clone();
  auto m = out.matrix<float>();
  for (Eigen::Index t = 0; t < m.cols(); ++t)
    m.col(t) = (m.col(t).cast<double>().array() * std[static_cast<size_t>(t)] + mean[static_cast<size_t>(t)]).cast<float>();
  return out;
}

nlohmann::json TargetScaling::toJson() const {
  if (!enabled()) return nullptr;
  return {{"mean", mean}, {"std", std}};
}

TargetScaling TargetScaling::fromJson(const nlohmann::json& j) {
  TargetScaling s;
  if (j.is_null()) return s;
  s.mean = j.at("mean").get<std::vector<double>>();
  s.std = j.at("std").get<std::vector<double>>();
  if (s.mean.size() != s.std.size()) throw std::runtime_error("target scaling: mean and std differ in length");
  for (double v : s.std)
    if (!(v > 0) || !std::isfinite(v)) throw std::runtime_error("target scaling: a standard deviation is not positive");
  return s;
}

}  // namespace gnn
