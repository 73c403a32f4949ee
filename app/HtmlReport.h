// HtmlReport: one self-contained HTML page about a molecule_property run (--report-html FILE): its
// configuration and machine, learning curves, the predicted set scored per target (a parity plot for
// regression; ROC and precision-recall curves for classification), the calibration of its uncertainty when it
// has one, the molecules predicted worst, and the results as --json prints them. No network and no external
// file: plots are inline SVG (app/SvgPlot.h), the style sheet is inline, and a short inline script checks on
// load that every plot was laid out with its points and says so as <body data-plots-rendered="N">
// (data-plots="N" is the number of plots), which a headless browser's --dump-dom shows.
//
//   app::HtmlReportInput in;
//   in.program = "molecule_property";  in.task = app::MoleculeTask::Regression;  in.targetNames = {"logS"};
//   in.results = resultsJson;  in.predicted = &testPredictions;  in.dataset = dataset.get();
//   in.curves.push_back({"seed 0", {{1, 0.81, 1.02, NAN}, {2, 0.55, 0.87, NAN}}});
//   app::writeHtmlReport("run.html", in);
#pragma once
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/MoleculePredictions.h"
#include "data/NpzDataset.h"

namespace gnn::app {

/// One trained epoch: the mean training loss, the validation metric and (--test-every-epoch) the test metric
/// (NaN when not evaluated).
struct EpochRecord {
  int64_t epoch = 0;
  double loss = NAN, valid = NAN, test = NAN;
};

/// The epochs one model trained in this run ("seed 3": an ensemble has one curve per member).
struct LearningCurve {
  std::string name;
  std::vector<EpochRecord> epochs;
};

struct HtmlReportInput {
  std::string program;
  MoleculeTask task = MoleculeTask::Regression;
  std::vector<std::string> targetNames;
  std::string metricName;  // the selection metric ("mae", "rocauc"), for the learning curves' axis
  /// The run's flags as its checkpoints keep them (RunConfig::toJson; "derived" is left out of the page), and
  /// the training flags (TrainingFlags::trainingIdentity).
  nlohmann::json configuration = nlohmann::json::object(), training = nlohmann::json::object();
  /// The run's results, the object --json prints (data, split, sizes, metrics, threads, compute info).
  nlohmann::json results = nlohmann::json::object();
  std::vector<LearningCurve> curves;
  /// How many of the first curve's epochs an earlier run trained (the checkpoint of a --load or --resume kept
  /// them); the page says so. All of them for an evaluation-only run.
  int64_t epochsBeforeRun = 0;
  bool evaluationOnly = false;
  /// The set scored ("test", or "valid" when the split has no test molecule) and its predictions with the
  /// weights the run reports (an ensemble's mean; calibrated when a calibration was fitted); null: none.
  std::string predictedSet = "test";
  const MoleculePredictions* predicted = nullptr;
  /// The same predictions before the calibration, when one was fitted (`calibration` names it); null: none.
  const MoleculePredictions* uncalibrated = nullptr;
  std::string calibration = "none";
  /// The molecules' SMILES and source lines (the worst predictions' table); null: left out.
  const NpzDataset* dataset = nullptr;
  /// At most this many targets get plots (every target is in the tables); larger sets of points are thinned
  /// evenly to maxPointsPerPlot (the page says so).
  int64_t maxPlottedTargets = 12, maxPointsPerPlot = 20000;
};

/// The page as text.
std::string htmlReport(const HtmlReportInput& in);

/// Writes htmlReport(in) to `path` through a temporary file renamed into place; std::runtime_error naming
/// the path when it cannot be written.
void writeHtmlReport(const std::string& path, const HtmlReportInput& in);

}  // namespace gnn::app
