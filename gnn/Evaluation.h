// Evaluation: a model's predictions scored against labelled targets: the metric runs are selected by (the best
// validation epoch) and the rest to report (per-target metrics), as training loops and programs log them.
//
//   Evaluation e = scoreTargets(scores, targets, mask, /*classification=*/false, {"gap"}, scaling.std);
//   e.metric;                        // the MAE (one target), or the mean over targets of MAE / std
//   e.details["mae_per_target"];     // {"gap": 0.13}
#pragma once
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/Tensor.h"

namespace gnn {

struct Evaluation {
  double metric = NAN;
  nlohmann::json details = nlohmann::json::object();
};

/// Scores `scores` [n, T] against `targets` [n, T] where `mask` (uint8 [n, T]) is 1. Regression: MAE per target
/// (details "mae_per_target"); the metric is the MAE (one target) or the mean, over targets with a labelled
/// value, of MAE / `targetStd[t]` (std_mae; `targetStd` empty: 1). Classification (scores are logits, targets
/// 0/1): ROC-AUC per target ("rocauc_per_target") and its mean over targets with both classes (OGB's
/// Evaluator). Targets are named by `targetNames` ("target<t>" past its end). No rows: NaN and no details.
Evaluation scoreTargets(const Tensor& scores, const Tensor& targets, const Tensor& mask, bool classification,
                        const std::vector<std::string>& targetNames, const std::vector<double>& targetStd = {});

}  // namespace gnn
