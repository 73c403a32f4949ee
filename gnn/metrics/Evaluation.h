// Evaluation: a model's predictions scored against labelled targets: the metric runs are selected by (the
// best validation epoch), and the others asked for (per-target values too), as training loops and programs
// log them. Metrics are named as `--metric` spells them (Chemprop's names): mae, rmse, r2, std_mae for
// regression; roc, prc, accuracy, f1, mcc for classification (formulas and the scikit-learn functions they
// equal: gnn/metrics/Metrics.h).
//
//   std::vector<Metric> ms = parseMetrics("rmse,mae,r2");    // the first one selects the best epoch
//   Evaluation e = scoreTargets(scores, targets, mask, ms, {"gap"}, scaling.std);
//   e.metric;                        // the RMSE (mean over targets with several)
//   e.details["mae"];                // every metric asked for, and per target:
//   e.details["r2_per_target"];      // {"gap": 0.91}
#pragma once
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/tensor/Tensor.h"

namespace gnn {

struct Evaluation {
  double metric = NAN;
  nlohmann::json details = nlohmann::json::object();
};

/// mae, rmse, r2: per target in the targets' units, averaged over targets. std_mae: the mean over targets of
/// MAE / the target's standard deviation (no target dominates). roc: ROC-AUC, prc: average precision (the
/// step-wise area under the precision-recall curve), per target over the targets with both classes; accuracy,
/// f1, mcc: a probability above 0.5 is a positive, per target over the targets with a label.
enum class Metric { Mae, Rmse, R2, StdMae, RocAuc, Prc, Accuracy, F1, Mcc };

/// The name in results (JSON keys valid_<name>, <name>_per_target): "mae", "rmse", "r2", "std_mae", "rocauc",
/// "prc", "accuracy", "f1", "mcc" ("rocauc" for roc: the name results have always used).
std::string metricName(Metric m);
bool higherIsBetter(Metric m);
bool isClassificationMetric(Metric m);
/// A comma-separated list as --metric takes it ("rmse,mae"; roc also as rocauc, prc as ap);
/// std::invalid_argument naming the unknown name and the known ones, or for an empty or repeated entry.
std::vector<Metric> parseMetrics(const std::string& list);
/// The names every metric accepts, for help and messages: "mae, rmse, r2, std_mae, roc, prc, accuracy, f1,
/// mcc".
std::string knownMetricNames();

/// Scores `scores` [n, T] against `targets` [n, T] where `mask` (uint8 [n, T]) is 1: each metric per target
/// (details "<name>_per_target"; std_mae's is "mae_per_target", in target units) and over targets (details
/// "<name>"); `metric` is the first one's. Regression scores are predictions in target units; classification
/// scores are logits and targets 0/1. Targets are named by `targetNames` ("target<t>" past its end);
/// `targetStd` (empty: 1) divides std_mae's MAEs. No rows: NaN and no details.
Evaluation scoreTargets(const Tensor& scores, const Tensor& targets, const Tensor& mask,
                        const std::vector<Metric>& metrics, const std::vector<std::string>& targetNames,
                        const std::vector<double>& targetStd = {});

/// The default metric of a task: classification ROC-AUC (OGB's Evaluator: mean over targets with both
/// classes); regression the MAE (one target) or std_mae (several).
Metric defaultMetric(bool classification, int64_t targets);

/// scoreTargets with the default metric alone.
Evaluation scoreTargets(const Tensor& scores, const Tensor& targets, const Tensor& mask, bool classification,
                        const std::vector<std::string>& targetNames,
                        const std::vector<double>& targetStd = {});

}  // namespace gnn
