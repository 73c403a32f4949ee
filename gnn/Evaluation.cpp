#include "gnn/Evaluation.h"

#include "gnn/Metrics.h"

namespace gnn {

Evaluation scoreTargets(const Tensor& scores, const Tensor& targets, const Tensor& mask, bool classification,
                        const std::vector<std::string>& targetNames, const std::vector<double>& targetStd) {
  Evaluation e;
  const int64_t tasks = scores.defined() ? scores.dim(1) : 0;
  const int64_t n = scores.defined() ? scores.dim(0) : 0;
  if (n == 0) return e;
  double stdMaeSum = 0;
  int64_t counted = 0;
  nlohmann::json per = nlohmann::json::object();
  for (int64_t t = 0; t < tasks; ++t) {
    Tensor s = Tensor::zeros({n, 1}), y = Tensor::zeros({n, 1}), m = Tensor::zeros({n, 1}, DType::U8);
    for (int64_t i = 0; i < n; ++i) {
      s.matrix<float>()(i, 0) = scores.matrix<float>()(i, t);
      y.matrix<float>()(i, 0) = targets.matrix<float>()(i, t);
      m.matrix<uint8_t>()(i, 0) = mask.matrix<uint8_t>()(i, t);
    }
    const std::string name = t < static_cast<int64_t>(targetNames.size()) ? targetNames[static_cast<size_t>(t)]
                                                                          : "target" + std::to_string(t);
    if (classification) {
      per[name] = rocAuc(s, y, m);
    } else {
      const double mae = meanAbsoluteError(s, y, m);
      per[name] = mae;
      if (std::isfinite(mae)) {
        stdMaeSum += mae / (targetStd.empty() ? 1.0 : targetStd[static_cast<size_t>(t)]);
        ++counted;
      }
    }
  }
  if (classification) {
    e.metric = rocAuc(scores, targets, mask);
  } else {
    e.metric = tasks == 1 ? per.begin().value().get<double>() : (counted ? stdMaeSum / static_cast<double>(counted) : NAN);
  }
  e.details[classification ? "rocauc_per_target" : "mae_per_target"] = per;
  return e;
}

}  // namespace gnn
