#include "app/MoleculeRun.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gnn/system/SystemInfo.h"
#include "models/GpsPlusPlus.h"
#include "models/Graphormer.h"

namespace gnn::app::detail {

// --padding-report-only: collation of the whole set, timed on this thread (no prefetch): the loader's cost per
// epoch.
int MoleculeRun::reportPadding() {
  FixedSizeDataLoader::Options so = lo_;
  so.prefetch = 0;
  so.readAhead = nullptr;  // the training set's advice; this pass reads the whole set
  so.classBalance.clear();
  FixedSizeDataLoader once(all_, fixed_, so);
  Stopwatch sw;
  once.startEpoch(0);
  for (Batch b; once.next(b);) {
  }
  const double collateSeconds = sw.ms() / 1000;
  out_["collate_seconds_full_set"] = collateSeconds;
  out_["collate_graphs_per_s"] = static_cast<double>(once.report().realGraphs) / collateSeconds;
  std::string evalLines;  // the evaluation sets' batches as planned (--eval-buckets)
  for (const auto& [set, positions] : {std::pair{"valid", &md_.split.valid}, std::pair{"test", &md_.split.test}})
    if (!positions->empty()) {
      evalPadding_[set] = plannedPadding(all_, *positions, evalBucketsFor(set, *positions), spec_.readsPairBlocks());
      evalLines += describeEvalPadding(set, *positions, evalPadding_[set]) + "\n";
    }
  reportEvalPadding();
  if (tf_.json)
    std::cout << out_.dump() << std::endl;
  else
    std::cout << "train loader (" << s_.strategy << ", " << fixed_.toString() << "): " << padding_.toString() << "\n"
              << "collation of all " << all_->size() << " molecules: " << collateSeconds << " s\n" << evalLines;
  return 0;
}

std::string MoleculeRun::reportPath() const {
  const po::variables_map& v = prog_.values();
  return v.count("report-html") ? v["report-html"].as<std::string>() : std::string();
}

// --report-html: the run on one page (app/HtmlReport.h), scored on the test set (the validation set when the
// split has none) with the weights the run reports: an ensemble's calibrated mean, else the best epoch's.
void MoleculeRun::writeReport() {
  const std::string path = reportPath();
  if (path.empty() || !prog_.primary()) return;
  HtmlReportInput in;
  in.program = prog_.name();
  in.task = task_;
  in.targetNames = md_.targetNames;
  in.metricName = metricName_;
  in.configuration = config_.toJson();
  in.training = tf_.trainingIdentity();
  in.results = out_;
  in.curves = curves_;
  in.epochsBeforeRun = epochsBeforeRun_;
  in.evaluationOnly = evalValid_.has_value();
  in.dataset = md_.dataset.get();
  const bool test = !md_.split.test.empty();
  in.predictedSet = test ? "test" : "valid";
  std::optional<MoleculePredictions> best;
  if (ensembleTest_) {
    in.predicted = &*ensembleTest_;
    if (ensembleTestUncalibrated_) in.uncalibrated = &*ensembleTestUncalibrated_;
    in.calibration = calibrationMethod_;
  } else {
    const std::vector<int64_t>& set = test ? md_.split.test : md_.split.valid;
    primary().trainer->withBestWeights([&] {
      best =
          predictMolecules(*primary().model, tasks_, all_, set, evalBucketsFor(in.predictedSet, set), scaling_, task_);
    });
    in.predicted = &*best;
  }
  writeHtmlReport(path, in);
  if (!tf_.quiet) std::cerr << prog_.name() << ": wrote the report to " << path << "\n";
}

// The results: one JSON object (--json) or a summary on stdout; the device's traces and stage table.
void MoleculeRun::report() {
  const Member& m = primary();
  const Trainer& trainer = *m.trainer;
  nlohmann::json sum = trainer.summary();
  if (evalValid_) {  // evaluation only: this run's scores of the best weights
    sum["valid_" + metricName_] = evalValid_->metric;
    sum["valid_details"] = evalValid_->details;
    if (evalTest_) {
      sum["test_" + metricName_] = evalTest_->metric;
      sum["test_details"] = evalTest_->details;
    }
  }
  for (const auto& [k, v] : sum.items()) out_[k] = v;
  reportMetrics(sum);
  out_["model"] = spec_.model;
  if (spec_.isGraphormer()) {
    const auto& go = static_cast<const Graphormer&>(*m.model).options();
    out_["layers"] = go.layers;
    out_["hidden"] = go.hidden;
    out_["max_node"] = spec_.maxNode;
    out_["eval_max_node"] = evalFixed_.maxNodesPerGraph;
  } else if (spec_.isGps()) {
    const auto& go = static_cast<const GpsPlusPlus&>(*m.model).options();
    out_["layers"] = go.layers;
    out_["hidden"] = go.nodeDim;
    out_["max_node"] = spec_.maxNode;
    out_["eval_max_node"] = evalFixed_.maxNodesPerGraph;
  } else {
    out_["layers"] = spec_.layers;
    out_["hidden"] = spec_.hidden;
    if (spec_.isMessagePassing()) out_["norm"] = spec_.norm;  // --norm auto's choice
  }
  out_["parameters"] = m.model->numParameters();
  if (!s_.transfer.initFrom.empty()) {
    out_["init_from"] = s_.transfer.initFrom;
    out_["freeze_encoder"] = s_.transfer.freezeEncoder;
    int64_t trained = 0;
    for (const Variable& p : m.opt->parameters()) trained += p.value().numel();
    out_["trained_parameters"] = trained;
  }
  out_.update(spec_.resultJson());  // a model's own sizes (dmpnn: depth, aggregation, FFN)
  // Names kept from earlier versions of this program's JSON.
  out_["valid_metric_name"] = metricName_;
  out_["valid_metric"] = sum["valid_" + metricName_];
  if (sum.contains("test_" + metricName_)) out_["test_metric"] = sum["test_" + metricName_];
  out_["real_graphs_per_s"] = sum["train_samples_per_s"];
  out_["train_graphs_per_s"] = sum["train_samples_per_s"];
  reportEvalPadding();
  out_["infer_graphs_per_s"] = inferSeconds_ > 0 ? static_cast<double>(inferMolecules_) / inferSeconds_ : 0.0;
  out_["train_molecules_per_s"] = out_["train_graphs_per_s"];
  out_["infer_molecules_per_s"] = out_["infer_graphs_per_s"];
  out_["seconds"] = sum["train_seconds"].get<double>() + sum["eval_seconds"].get<double>();
  out_["param_l2"] = paramL2(*m.model);
  out_["param_checksum"] = paramChecksum(*m.model);
  const nlohmann::json deviceJson = df_.toJson(*m.program);  // items() must not outlive the json it iterates
  for (const auto& [k, v] : deviceJson.items()) out_[k] = v;
  const nlohmann::json planJson = df_.planJson(*m.program);
  for (const auto& [k, v] : planJson.items()) out_[k] = v;
  out_["samples_per_s"] = sum["train_samples_per_s"];
  out_["padded_micro_batches"] = trainer.paddedMicroBatches();
  out_["dropped_micro_batches"] = trainer.droppedMicroBatches();
  if (!tf_.quiet && (trainer.droppedMicroBatches() > 0 || trainer.paddedMicroBatches() > 0))
    std::cerr << prog_.name() << ": the epochs' last host requests were short: "
              << (trainer.droppedMicroBatches() > 0
                      ? std::to_string(trainer.droppedMicroBatches()) +
                            " micro-batch(es) dropped (--partial-request drop)"
                      : std::to_string(trainer.paddedMicroBatches()) +
                            " weight-0 micro-batch(es) padded in (--partial-request pad; they change nothing)")
              << "\n";
  df_.writeTraces(*m.program, prog_.name() + " " + spec_.model);
  if (df_.simulated() && !tf_.quiet) std::cerr << "stages (per micro-batch):\n" << m.program->stageTable();
  if (df_.simulated()) {
    nlohmann::json st = nlohmann::json::array();
    for (const auto& r : m.program->record().stages)
      st.push_back({{"blocks", r.name}, {"parameters", r.parameters}, {"forward_ops", r.forwardOps},
                    {"backward_ops", r.backwardOps}, {"flops_per_micro_batch", r.forwardFlops + r.backwardFlops},
                    {"saved_bytes_per_micro_batch", r.savedBytes}, {"max_stashed", r.maxStashed}});
    out_["stage_table"] = st;
  }
  out_["peak_rss_mb"] = peakRssMb();
  const ResidentMemory peak = memoryPeak_.peak(), now = residentMemory();
  out_["peak_rss_anon_mb"] = peak.anonMb;
  out_["peak_rss_file_mb"] = peak.fileMb;
  out_["rss_anon_mb"] = now.anonMb;
  out_["rss_file_mb"] = now.fileMb;
  if (lo_.readAhead) {
    out_["read_ahead_mb"] = static_cast<double>(lo_.readAhead->willNeedBytes()) / 1048576.0;
    out_["released_mb"] = static_cast<double>(lo_.readAhead->releasedBytes()) / 1048576.0;
  }
  if (tf_.json)
    std::cout << out_.dump() << std::endl;
  else
    printSummary(sum);
}

// Every --metric at the best epoch as valid_<name> and test_<name>, and which one selected it.
void MoleculeRun::reportMetrics(const nlohmann::json& sum) {
  out_["selection_metric"] = metricName_;
  out_["metrics"] = nlohmann::json::array();
  for (Metric m : metrics_) {
    const std::string name = metricName(m);
    out_["metrics"].push_back(name);
    for (const std::string part : {"valid", "test"}) {
      const std::string details = part + "_details";
      if (sum.contains(details) && sum[details].is_object() && sum[details].contains(name))
        out_[part + "_" + name] = sum[details][name];
    }
  }
  out_["evaluation_only"] = tf_.evaluationOnly();
  if (!config_.changedOutsideModel().empty()) out_["changed_from_checkpoint"] = config_.changedOutsideModel();
}

// Without --json: the best epoch's metrics (per target when there are several) and the training speed.
void MoleculeRun::printSummary(const nlohmann::json& sum) const {
  auto shown = [](const nlohmann::json& v) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) return std::string("n/a (no labels)");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.5g", v.get<double>());
    return std::string(buf);
  };
  const Trainer& trainer = *primary().trainer;
  std::cout << "best epoch " << trainer.bestEpoch() << " of " << trainer.completedEpochs() << ": valid "
            << metricName_ << " " << shown(out_.at("valid_metric"));
  if (out_.contains("test_metric")) std::cout << ", test " << metricName_ << " " << shown(out_.at("test_metric"));
  std::cout << "\n";
  for (size_t k = 1; k < metrics_.size(); ++k) {  // the other --metric values, at the same epoch
    const std::string name = metricName(metrics_[k]);
    std::cout << "  valid " << name << " " << shown(out_.value("valid_" + name, nlohmann::json()));
    if (out_.contains("test_" + name)) std::cout << ", test " << name << " " << shown(out_.at("test_" + name));
    std::cout << "\n";
  }
  const Metric selected = metrics_.front();
  const std::string perKey = selected == Metric::StdMae ? "mae_per_target" : metricName_ + "_per_target";
  const std::string label = selected == Metric::RocAuc ? "ROC-AUC" : selected == Metric::StdMae ? "MAE" : metricName_;
  if (tasks_ > 1 && sum.contains("test_details") && sum["test_details"].is_object() &&
      sum["test_details"].contains(perKey))
    for (const auto& [name, v] : sum["test_details"][perKey].items())
      std::cout << "  test " << label << " " << name << " " << shown(v) << "\n";
  std::printf("%.0f molecules/s in training, param_l2 %.6f\n", sum["train_samples_per_s"].get<double>(),
              out_.at("param_l2").get<double>());
}

}  // namespace gnn::app::detail
