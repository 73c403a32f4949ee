// NodeRuns: a node program's runs over --runs seeds and what every node program reports of them, whatever its
// graph (homogeneous: app/NodeTraining.h; heterogeneous: app/HeteroNodeTraining.h): the per-op profile, the
// summary line, and the --json keys of the accuracies, times and per-run checksums.
//
//   app::NodeRuns runs = app::trainNodeRuns(settings, profiler, [&](uint64_t seed) { return trainNodeRun(in, seed); });
//   app::addNodeRunsJson(j, settings, runs, profiler);          // with --json
//   app::printNodeRunsLine(datasetName, settings, runs);        // without
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "app/NodeFlags.h"
#include "app/NodeTraining.h"
#include "gnn/autograd/Profiler.h"

namespace gnn::app {

/// Every seed's run, in order, with their epochs' and evaluations' times.
struct NodeRuns {
  std::vector<NodeRunResult> results;
  std::vector<double> epochMs, inferMs;
};

/// --runs runs from seeds --seed .. --seed + runs - 1, each by `runOne(seed)`, profiled into `profiler` with
/// --profile (the table printed on stderr after the last).
NodeRuns trainNodeRuns(const NodeSettings& s, OpProfiler& profiler,
                       const std::function<NodeRunResult(uint64_t seed)>& runOne);

/// The median of v (0 for none).
double medianOf(std::vector<double> v);
/// The mean of `field` over the runs and its sample standard deviation (0 for one run).
std::pair<double, double> meanStd(const std::vector<NodeRunResult>& results, double NodeRunResult::*field);

/// The runs' keys of --json: test_acc_mean/std, test_acc_final_epoch_mean, val_acc_mean, inference,
/// epoch_ms_median, infer_ms_median, threads, the compute information, device (or the device's keys),
/// peak_rss_mb, per run test_acc, best_epoch, final_loss, loss_checksum, predictions_checksum, param_l2,
/// param_checksum (and loader_runs), and with --profile the profile.
void addNodeRunsJson(nlohmann::json& j, const NodeSettings& s, const NodeRuns& runs, const OpProfiler& profiler);
/// The summary line on stdout: "<dataset>: test accuracy ..." with the best validation epoch (one run) or the
/// spread (several), the median epoch and inference times and param_l2.
void printNodeRunsLine(const std::string& dataset, const NodeSettings& s, const NodeRuns& runs);

}  // namespace gnn::app
