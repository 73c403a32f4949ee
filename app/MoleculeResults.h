// MoleculeResults: what a molecule program reports at the end of its run, and its writer: the results as one JSON
// object (--json) or as a summary of the best epoch's scores on stdout.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "gnn/metrics/Evaluation.h"

namespace gnn::app {

struct MoleculeResults {
  /// Every result: the object --json prints (valid_metric, test_metric, valid_<name> per --metric, param_l2, ...).
  nlohmann::json json = nlohmann::json::object();
  /// The trainer's summary of the best epoch (an evaluation-only run's own scores in it): test_details and
  /// train_samples_per_s for the summary.
  nlohmann::json summary = nlohmann::json::object();
  std::vector<Metric> metrics;  // --metric (or the task's default); the first selected the best epoch
  int64_t targets = 1;
  int64_t bestEpoch = 0, epochs = 0;  // of the epochs trained (an earlier run's included)
};

/// With `asJson`, `r.json` on one line; else the summary: the selection metric and the other --metric values
/// at the best epoch, the test set's selection metric per target when there are several, the training speed.
void writeMoleculeResults(std::ostream& os, const MoleculeResults& r, bool asJson);

}  // namespace gnn::app
