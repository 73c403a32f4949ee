// Ensemble: N members of one model trained from seeds --seed .. --seed + N - 1 on the same split and batches
// (Chemprop v2 trains its --ensemble-size members the same way: one data order, another initialisation each),
// kept in one checkpoint, combined into a prediction and an uncertainty per target, the uncertainty
// recalibrated on the validation set (z-scaling), and scored (gnn/metrics/Calibration.h).
//
// An ensemble checkpoint is a single-model checkpoint of member 0 (model.*, best.*, the optimizer, the
// trainer's state: what --save writes today) plus each member's best validation weights as
// "member<k>.<parameter>" (k = 0 .. N-1) and metadata "ensemble": {"size", "seeds", "members", "uncertainty":
// "variance", "calibration": {"method": "zscaling" | "platt" | "isotonic" | "none", "variance_scale": [s^2 per
// target] | "a", "b": [per target] | "thresholds": [{"x", "y"} per target]}}. A single model whose run fits a
// calibration (--task regression-mve, or --calibration platt | isotonic) is kept the same way, as an ensemble of
// one, so that `predict` applies it as the run's --predict did.
//
//   std::vector<app::MoleculePredictions> ps;
//   for (auto& m : members) ps.push_back(app::predictMolecules(*m, tasks, ds, positions, buckets, scaling,
//   task)); app::MoleculePredictions p = app::combineEnsemble(ps, task);      // mean, variance
//   app::UncertaintyCalibration cal = app::fitZScaling(validPredictions);
//   cal.apply(p);                                                      // variance * s^2 per target
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/MoleculeModel.h"
#include "app/MoleculePredictions.h"
#include "gnn/io/Checkpoint.h"
#include "gnn/metrics/Calibration.h"
#include "models/BlockModel.h"

namespace gnn::app {

/// The prefix of member k's tensors in an ensemble checkpoint: "member<k>".
std::string ensembleMemberPrefix(int64_t k);

/// The members' predictions of the same molecules (the same positions in the same order) as one: the mean
/// over members and, as the uncertainty, their population variance (Chemprop v2's "ensemble" estimator,
/// torch.var(correction=0)). Regression: the mean and variance of the predictions in target units.
/// Classification: the mean probability (score: its logit, so the metrics threshold it at 0.5) and the
/// variance of the members' probabilities (a calibrated single classifier, an ensemble of one, writes no
/// uncertainty: molecule_property and predict leave its zero variance out). Sums run over the members in order in double precision, then round
/// to float: the same members' predictions give the same bits wherever they were computed. RegressionMve
/// (members that predict a variance each): the uncertainty is the mean of the members' variances (aleatoric)
/// plus the population variance of their means (epistemic), as Chemprop v2 combines an ensemble of MVE models.
MoleculePredictions combineEnsemble(const std::vector<MoleculePredictions>& members, MoleculeTask task);

/// How an ensemble's variances are recalibrated, fitted on the validation set and kept in the checkpoint.
struct UncertaintyCalibration {
  // "none" | "zscaling" (regression) | "platt" | "isotonic" (classification)
  std::string method = "none";
  std::vector<double> varianceScale;   // zscaling: s^2 per target
  std::vector<double> plattA, plattB;  // platt: per target
  std::vector<IsotonicFit> isotonic;   // isotonic: per target
  /// zscaling: p.uncertainty per target times s^2 (in double, rounded to float). platt: the score (the logit
  /// of the mean probability) becomes a z + b and the prediction its sigmoid; the variance stays the
  /// members'. isotonic: the prediction (probability) becomes the fit's value at it, the score its logit.
  /// "none" changes nothing.
  void apply(MoleculePredictions& p) const;
  nlohmann::json toJson() const;
  /// Throws std::runtime_error naming `source` for a method it does not know or a scale that is not finite
  /// and positive.
  static UncertaintyCalibration fromJson(const nlohmann::json& j, const std::string& source);
};

/// Z-scaling per target on `valid`'s labelled rows (gnn::zScalingFactor): s^2 = mean(residual^2 / variance).
/// A target with no labelled row of positive variance keeps s^2 = 1.
UncertaintyCalibration fitZScaling(const MoleculePredictions& valid);

/// Platt scaling per target on `valid`'s labelled rows (gnn::plattScaling of the ensemble's logits).
UncertaintyCalibration fitPlatt(const MoleculePredictions& valid);

/// Isotonic regression per target of the labels on `valid`'s probabilities, over its labelled rows
/// (gnn::isotonicRegression, Chemprop v2's IsotonicCalibrator).
UncertaintyCalibration fitIsotonic(const MoleculePredictions& valid);

/// Classification: the mean binary NLL of `p`'s probabilities over its labelled rows, per target and
/// averaged:
/// {"nll", "per_target": {target: {"nll"}}}.
nlohmann::json classificationUncertaintyScores(const MoleculePredictions& p,
                                               const std::vector<std::string>& targetNames);

/// Regression uncertainty scores of `p` (uncertainty: variances) over its labelled rows, per target and
/// averaged over targets: {"nll", "spearman", "miscalibration_area", "per_target": {target: {...}}}
/// (gnn/metrics/Calibration.h).
nlohmann::json uncertaintyScores(const MoleculePredictions& p, const std::vector<std::string>& targetNames);

/// An ensemble checkpoint's "ensemble" metadata.
struct EnsembleInfo {
  int64_t size = 0;
  std::vector<uint64_t> seeds;
  UncertaintyCalibration calibration;
  nlohmann::json toJson() const;
  /// The checkpoint's ensemble (nullopt for a single model); throws std::runtime_error naming `ck.source`
  /// when the metadata is malformed or a member's tensors are missing.
  static std::optional<EnsembleInfo> fromCheckpoint(const Checkpoint& ck);
};

/// The members of an ensemble checkpoint, each built from `spec` with its "member<k>." weights.
std::vector<std::unique_ptr<BlockModel>> loadEnsembleMembers(const Checkpoint& ck, const EnsembleInfo& info,
                                                             const MoleculeModelSpec& spec);

}  // namespace gnn::app
