#include "app/MoleculeRun.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "app/McDropout.h"
#include "gnn/system/SystemInfo.h"

namespace gnn::app::detail {

// The ensemble's scores on the validation and test sets (each member with its best validation epoch's
// weights), the calibration fitted on validation, the test set's uncertainty scores before and after it, and
// the checkpoint.
EnsembleScores MoleculeRun::evaluateEnsemble() {
  std::vector<std::pair<BlockModel*, Trainer*>> all;
  for (Member& m : members_) all.emplace_back(m.model.get(), m.trainer.get());
  // --uncertainty mc-dropout: the best model's samples stand for the members (keyed by the molecules' SMILES).
  const bool mc = s_.uncertainty == "mc-dropout";
  const McDropout mcDropout{s_.mcSamples, tf_.seed};
  const std::vector<uint64_t> mcKeys = mc ? moleculeDropoutKeys(*md_.dataset) : std::vector<uint64_t>();
  auto predictSet = [&](const std::vector<int64_t>& positions, const std::string& set) {
    std::vector<MoleculePredictions> ps;
    const ShapeBuckets& buckets = evalPadding_->bucketsFor(set, positions);
    for (const auto& member : all)
      member.second->withBestWeights([&] {
        if (mc)
          ps = predictMcDropoutSamples(*member.first, tasks_, all_, mcKeys, positions, buckets, scaling_, task_,
                                       mcDropout);
        else
          ps.push_back(predictMolecules(*member.first, tasks_, all_, positions, buckets, scaling_, task_));
      });
    MoleculePredictions p = combineEnsemble(ps, task_);
    if (classification_ && all.size() == 1 && !mc) p.uncertainty = Tensor();  // one classifier: no spread to write
    return p;
  };
  EnsembleScores scores;
  EnsembleInfo info;
  info.size = s_.ensembleSize;
  nlohmann::json members = nlohmann::json::array();
  for (size_t k = 0; k < all.size(); ++k) {
    info.seeds.push_back(tf_.seed + k);
    const Trainer& t = *all[k].second;
    nlohmann::json j = {
        {"seed", tf_.seed + k}, {"best_epoch", t.bestEpoch()}, {"valid_" + metricName_, t.bestValid()}};
    if (t.bestTest().contains("metric")) j["test_" + metricName_] = t.bestTest()["metric"];
    members.push_back(j);
  }
  const bool variance = mc || (!classification_ && (s_.ensembleSize > 1 || task_ == MoleculeTask::RegressionMve));
  nlohmann::json j = {{"size", s_.ensembleSize},
                      {"seeds", info.seeds},
                      {"uncertainty", variance ? "variance" : "none"},
                      {"estimator", mc ? "mc-dropout"
                                    : task_ == MoleculeTask::RegressionMve
                                        ? (s_.ensembleSize > 1 ? "ensemble+mve" : "mve")
                                        : (s_.ensembleSize > 1 ? "ensemble" : "none")},
                      {"members", members}};
  MoleculePredictions valid = predictSet(md_.split.valid, "valid");
  Evaluation ev =
      scoreTargets(valid.score, valid.target, valid.mask, metrics_, md_.targetNames, scaling_.std);
  j["valid_" + metricName_] = ev.metric;
  j["valid_details"] = ev.details;
  if (!valid.positions.empty() && !classification_ && s_.calibration != "none")
    info.calibration = fitZScaling(valid);
  if (!valid.positions.empty() && classification_ && s_.calibration == "platt")
    info.calibration = fitPlatt(valid);
  if (!valid.positions.empty() && classification_ && s_.calibration == "isotonic")
    info.calibration = fitIsotonic(valid);
  if (!md_.split.test.empty()) {
    MoleculePredictions test = predictSet(md_.split.test, "test");
    Evaluation et = scoreTargets(test.score, test.target, test.mask, metrics_, md_.targetNames, scaling_.std);
    j["test_" + metricName_] = et.metric;
    j["test_details"] = et.details;
    auto uncertainty = [&](const MoleculePredictions& q) {
      return classification_ ? classificationUncertaintyScores(q, md_.targetNames)
                             : uncertaintyScores(q, md_.targetNames);
    };
    j["test_uncertainty"] = {{"uncalibrated", uncertainty(test)}};
    if (!reportPath().empty() && info.calibration.method != "none") {  // apply() changes the tensors in place
      scores.testUncalibrated = test;
      scores.testUncalibrated->pred = test.pred.clone();
      scores.testUncalibrated->score = test.score.clone();
      if (test.uncertainty.defined()) scores.testUncalibrated->uncertainty = test.uncertainty.clone();
    }
    scores.calibration = info.calibration.method;
    info.calibration.apply(test);
    if (info.calibration.method != "none") {
      j["test_uncertainty"]["calibrated"] = uncertainty(test);
      // Platt and isotonic change the probabilities: the test metrics of the ones written.
      if (classification_)
        j["test_calibrated_details"] =
            scoreTargets(test.score, test.target, test.mask, metrics_, md_.targetNames, scaling_.std).details;
    }
    scores.test = std::move(test);
  }
  j["calibration"] = info.calibration.toJson();
  j["calibration"]["fitted_on"] = "valid";
  if (mc) j["mc_dropout"] = mcDropout.toJson();
  if (!tf_.quiet) noteEnsembleScores(j, ev.metric, info.calibration.method);
  saveEnsemble(info);
  scores.results = std::move(j);
  return scores;
}

// The scores of evaluateEnsemble's `j` on stderr: the selection metric, and the test set's uncertainty before and
// after the calibration fitted on validation (`j` is read with operator[]: a score it lacks prints as nan).
void MoleculeRun::noteEnsembleScores(nlohmann::json& j, const nlohmann::json& validMetric,
                                     const std::string& calibration) const {
  auto shown = [](const nlohmann::json& v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.5g", v.is_number() ? v.get<double>() : NAN);
    return std::string(buf);
  };
  std::cerr << prog_.name() << ": "
            << (s_.ensembleSize > 1 ? "ensemble of " + std::to_string(s_.ensembleSize) : std::string("best model"))
            << ": valid " << metricName_ << " " << shown(validMetric);
  if (j.contains("test_" + metricName_))
    std::cerr << ", test " << metricName_ << " " << shown(j["test_" + metricName_]);
  if (!classification_ && j.contains("test_uncertainty") && j["test_uncertainty"].contains("calibrated"))
    std::cerr << "; test miscalibration area "
              << shown(j["test_uncertainty"]["uncalibrated"]["miscalibration_area"]) << " uncalibrated, "
              << shown(j["test_uncertainty"]["calibrated"]["miscalibration_area"])
              << " after z-scaling on validation";
  if (classification_ && j.contains("test_uncertainty") && j["test_uncertainty"].contains("calibrated"))
    std::cerr << "; test NLL " << shown(j["test_uncertainty"]["uncalibrated"]["nll"]) << " uncalibrated, "
              << shown(j["test_uncertainty"]["calibrated"]["nll"]) << " after " << calibration
              << " on validation";
  std::cerr << "\n";
}

// --save: member 0's checkpoint as its trainer wrote it, with every member's best weights ("member<k>.*") and
// the ensemble's metadata added.
void MoleculeRun::saveEnsemble(const EnsembleInfo& info) {
  if (tf_.save.empty() || !prog_.primary()) return;
  Checkpoint ck = Checkpoint::load(tf_.save);
  for (size_t k = 0; k < members_.size(); ++k)
    members_[k].trainer->withBestWeights(
        [&] { ck.addModule(ensembleMemberPrefix(static_cast<int64_t>(k)), *members_[k].model); });
  ck.meta["ensemble"] = info.toJson();
  if (s_.uncertainty == "mc-dropout") ck.meta["mc_dropout"] = McDropout{s_.mcSamples, tf_.seed}.toJson();
  ck.save(tf_.save);
  if (!tf_.quiet)
    std::cerr << prog_.name() << ": saved the "
              << (info.size > 1 ? "ensemble of " + std::to_string(info.size) : std::string("calibration"))
              << " in " << tf_.save << "\n";
}

// The current member's scores of a set; the pass's time and molecules add to `inference`.
Evaluation MoleculeRun::evaluate(const std::vector<int64_t>& positions, const std::string& set,
                                 InferenceTime& inference) {
  Stopwatch sw;
  MoleculePredictions p = predictMolecules(*current().model, tasks_, all_, positions,
                                           evalPadding_->bucketsFor(set, positions), scaling_, task_);
  inference.seconds += sw.ms() / 1000;
  if (std::optional<std::string> line = evalPadding_->note(set, positions, p.padding); line && !tf_.quiet)
    current().trainer->progress().line(*line);
  inference.molecules += static_cast<int64_t>(p.positions.size());
  if (lo_.readAhead) lo_.readAhead->releaseAll();  // the mapped file's pages the evaluation read
  Evaluation e = scoreTargets(p.score, p.target, p.mask, metrics_, md_.targetNames, scaling_.std);
  e.details["molecules"] = static_cast<int64_t>(p.positions.size());
  if (!p.skipped.empty()) e.details["skipped_too_large"] = static_cast<int64_t>(p.skipped.size());
  return e;
}

// An evaluation-only run scores the best weights itself (with its own batching and --metric), rather than
// reporting the scores the checkpoint kept from training.
OwnScores MoleculeRun::evaluateOnly(InferenceTime& inference) {
  OwnScores own;
  if (!tf_.evaluationOnly()) return own;
  primary().trainer->withBestWeights([&] {
    own.valid = evaluate(md_.split.valid, "valid", inference);
    if (!md_.split.test.empty()) own.test = evaluate(md_.split.test, "test", inference);
  });
  return own;
}

// --predict: the test molecules with the best validation epoch's weights (an ensemble's: their mean and variance).
void MoleculeRun::writePredictions(const std::optional<EnsembleScores>& ensemble) {
  if (s_.predict.empty()) return;
  if (ensemble && ensemble->test) {
    const MoleculePredictions& test = *ensemble->test;
    if (prog_.primary()) writePredictionsCsv(s_.predict, *md_.dataset, test, md_.targetNames);
    if (!tf_.quiet)
      std::cerr << prog_.name() << ": wrote " << test.positions.size() << " test predictions"
                << (s_.ensembleSize > 1 ? " of the " + std::to_string(s_.ensembleSize) + " members" : std::string())
                << (test.uncertainty.defined() && task_ != MoleculeTask::Classification ? " with their uncertainty"
                                                                                        : "")
                << " to " << s_.predict << "\n";
    return;
  }
  primary().trainer->withBestWeights([&] {
    MoleculePredictions p = predictMolecules(*primary().model, tasks_, all_, md_.split.test,
                                             evalPadding_->bucketsFor("test", md_.split.test), scaling_, task_);
    if (prog_.primary()) writePredictionsCsv(s_.predict, *md_.dataset, p, md_.targetNames);
    if (!tf_.quiet)
      std::cerr << prog_.name() << ": wrote " << p.positions.size() << " test predictions to " << s_.predict << "\n";
  });
}

}  // namespace gnn::app::detail
