#include "app/MoleculeRun.h"

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
int MoleculeRun::reportPadding(const TrainData& data) {
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
  nlohmann::json out = data.results;
  out["collate_seconds_full_set"] = collateSeconds;
  out["collate_graphs_per_s"] = static_cast<double>(once.report().realGraphs) / collateSeconds;
  std::string evalLines;  // the evaluation sets' batches as planned (--eval-buckets)
  for (const auto& [set, positions] : {std::pair{"valid", &md_.split.valid}, std::pair{"test", &md_.split.test}})
    if (!positions->empty()) {
      const PaddingReport planned =
          plannedPadding(all_, *positions, evalPadding_->bucketsFor(set, *positions), spec_.readsPairBlocks());
      evalLines += evalPadding_->describe(set, *positions, planned) + "\n";
    }
  evalPadding_->addTo(out);
  if (tf_.json)
    std::cout << out.dump() << std::endl;
  else
    std::cout << "train loader (" << s_.strategy << ", " << fixed_.toString() << "): " << data.padding.toString()
              << "\n"
              << "collation of all " << all_->size() << " molecules: " << collateSeconds << " s\n" << evalLines;
  return 0;
}

std::string MoleculeRun::reportPath() const {
  const po::variables_map& v = prog_.values();
  return v.count("report-html") ? v["report-html"].as<std::string>() : std::string();
}

// --report-html: the run on one page (app/HtmlReport.h) with its `results`, scored on the test set (the validation
// set when the split has none) with the weights the run reports: an ensemble's calibrated mean, else the best
// epoch's.
void MoleculeRun::writeReport(const nlohmann::json& results, const Training& training,
                              const std::optional<EnsembleScores>& ensemble, bool evaluationOnly) {
  const std::string path = reportPath();
  if (path.empty() || !prog_.primary()) return;
  HtmlReportInput in;
  in.program = prog_.name();
  in.task = task_;
  in.targetNames = md_.targetNames;
  in.metricName = metricName_;
  in.configuration = config_.toJson();
  in.training = tf_.trainingIdentity();
  in.results = results;
  in.curves = training.curves;
  in.epochsBeforeRun = training.epochsBeforeRun;
  in.evaluationOnly = evaluationOnly;
  in.dataset = md_.dataset.get();
  const bool test = !md_.split.test.empty();
  in.predictedSet = test ? "test" : "valid";
  std::optional<MoleculePredictions> best;
  if (ensemble && ensemble->test) {
    in.predicted = &*ensemble->test;
    if (ensemble->testUncalibrated) in.uncalibrated = &*ensemble->testUncalibrated;
    in.calibration = ensemble->calibration;
  } else {
    const std::vector<int64_t>& set = test ? md_.split.test : md_.split.valid;
    primary().trainer->withBestWeights([&] {
      best = predictMolecules(*primary().model, tasks_, all_, set, evalPadding_->bucketsFor(in.predictedSet, set),
                              scaling_, task_);
    });
    in.predicted = &*best;
  }
  writeHtmlReport(path, in);
  if (!tf_.quiet) std::cerr << prog_.name() << ": wrote the report to " << path << "\n";
}

// The results: `out` (the data's part) with what the phases gave (the ensemble's block, an evaluation-only run's
// own scores, the inference throughput), the best epoch's scores, the model, the device's record and the memory
// used; the device's traces and stage table written on the way.
MoleculeResults MoleculeRun::collectResults(nlohmann::json out, const std::optional<EnsembleScores>& ensemble,
                                            const OwnScores& own, const InferenceTime& inference) {
  if (s_.profile && prog_.primary()) {
    out["profile"] = profiler_.json();
    out["profile_steps"] = steps_;
  }
  // One model's block is "uncertainty" (its top-level results are the same model's, uncalibrated).
  if (ensemble) out[s_.ensembleSize > 1 ? "ensemble" : "uncertainty"] = ensemble->results;
  if (ensemble && s_.ensembleSize > 1) out["ensemble_size"] = s_.ensembleSize;
  if (!s_.predict.empty()) out["predictions"] = s_.predict;
  if (!reportPath().empty()) out["report_html"] = reportPath();
  const Trainer& trainer = *primary().trainer;
  nlohmann::json sum = trainer.summary();
  if (own.valid) {  // evaluation only: this run's scores of the best weights
    sum["valid_" + metricName_] = own.valid->metric;
    sum["valid_details"] = own.valid->details;
    if (own.test) {
      sum["test_" + metricName_] = own.test->metric;
      sum["test_details"] = own.test->details;
    }
  }
  for (const auto& [k, v] : sum.items()) out[k] = v;
  addMetricResults(out, sum);
  out.update(modelResults());
  // Names kept from earlier versions of this program's JSON.
  out["valid_metric_name"] = metricName_;
  out["valid_metric"] = sum["valid_" + metricName_];
  if (sum.contains("test_" + metricName_)) out["test_metric"] = sum["test_" + metricName_];
  out["real_graphs_per_s"] = sum["train_samples_per_s"];
  out["train_graphs_per_s"] = sum["train_samples_per_s"];
  evalPadding_->addTo(out);
  out["infer_graphs_per_s"] =
      inference.seconds > 0 ? static_cast<double>(inference.molecules) / inference.seconds : 0.0;
  out["train_molecules_per_s"] = out["train_graphs_per_s"];
  out["infer_molecules_per_s"] = out["infer_graphs_per_s"];
  out["seconds"] = sum["train_seconds"].get<double>() + sum["eval_seconds"].get<double>();
  out["param_l2"] = paramL2(*primary().model);
  out["param_checksum"] = paramChecksum(*primary().model);
  addDeviceResults(out);
  out["samples_per_s"] = sum["train_samples_per_s"];
  out["peak_rss_mb"] = peakRssMb();
  const ResidentMemory peak = memoryPeak_.peak(), now = residentMemory();
  out["peak_rss_anon_mb"] = peak.anonMb;
  out["peak_rss_file_mb"] = peak.fileMb;
  out["rss_anon_mb"] = now.anonMb;
  out["rss_file_mb"] = now.fileMb;
  if (lo_.readAhead) {
    out["read_ahead_mb"] = static_cast<double>(lo_.readAhead->willNeedBytes()) / 1048576.0;
    out["released_mb"] = static_cast<double>(lo_.readAhead->releasedBytes()) / 1048576.0;
  }
  return {std::move(out), std::move(sum), metrics_, tasks_, trainer.bestEpoch(), trainer.completedEpochs()};
}

// The model's part of the results: its kind and sizes (a model's own too: dmpnn's depth, aggregation, FFN), its
// parameters, and with --init-from the parameters trained.
nlohmann::json MoleculeRun::modelResults() const {
  const Member& m = primary();
  nlohmann::json out;
  out["model"] = spec_.model;
  if (spec_.isGraphormer()) {
    const auto& go = static_cast<const Graphormer&>(*m.model).options();
    out["layers"] = go.layers;
    out["hidden"] = go.hidden;
    out["max_node"] = spec_.maxNode;
    out["eval_max_node"] = evalFixed_.maxNodesPerGraph;
  } else if (spec_.isGps()) {
    const auto& go = static_cast<const GpsPlusPlus&>(*m.model).options();
    out["layers"] = go.layers;
    out["hidden"] = go.nodeDim;
    out["max_node"] = spec_.maxNode;
    out["eval_max_node"] = evalFixed_.maxNodesPerGraph;
  } else {
    out["layers"] = spec_.layers;
    out["hidden"] = spec_.hidden;
    if (spec_.isMessagePassing()) out["norm"] = spec_.norm;  // --norm auto's choice
  }
  out["parameters"] = m.model->numParameters();
  if (!s_.transfer.initFrom.empty()) {
    out["init_from"] = s_.transfer.initFrom;
    out["freeze_encoder"] = s_.transfer.freezeEncoder;
    int64_t trained = 0;
    for (const Variable& p : m.opt->parameters()) trained += p.value().numel();
    out["trained_parameters"] = trained;
  }
  out.update(spec_.resultJson());
  return out;
}

// The device program's record in the results (its plan, the short host requests, the stage table) and on stderr;
// its traces written.
void MoleculeRun::addDeviceResults(nlohmann::json& out) {
  const Member& m = primary();
  const Trainer& trainer = *m.trainer;
  const nlohmann::json deviceJson = df_.toJson(*m.program);  // items() must not outlive the json it iterates
  for (const auto& [k, v] : deviceJson.items()) out[k] = v;
  const nlohmann::json planJson = df_.planJson(*m.program);
  for (const auto& [k, v] : planJson.items()) out[k] = v;
  out["padded_micro_batches"] = trainer.paddedMicroBatches();
  out["dropped_micro_batches"] = trainer.droppedMicroBatches();
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
    out["stage_table"] = st;
  }
}

// Every --metric at the best epoch (of the summary `sum`) as valid_<name> and test_<name>, and which one selected
// it.
void MoleculeRun::addMetricResults(nlohmann::json& out, const nlohmann::json& sum) const {
  out["selection_metric"] = metricName_;
  out["metrics"] = nlohmann::json::array();
  for (Metric m : metrics_) {
    const std::string name = metricName(m);
    out["metrics"].push_back(name);
    for (const std::string part : {"valid", "test"}) {
      const std::string details = part + "_details";
      if (sum.contains(details) && sum[details].is_object() && sum[details].contains(name))
        out[part + "_" + name] = sum[details][name];
    }
  }
  out["evaluation_only"] = tf_.evaluationOnly();
  if (!config_.changedOutsideModel().empty()) out["changed_from_checkpoint"] = config_.changedOutsideModel();
}

}  // namespace gnn::app::detail
