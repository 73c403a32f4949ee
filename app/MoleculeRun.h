// MoleculeRun: one run of a molecule program (app/MoleculeProgram.h) once its command line is parsed, phase by
// phase: continue or start, load the data, derive the run's configuration, train, evaluate, predict, report.
// Internal to the program: its phases are defined in app/MoleculeProgram.cpp and app/MoleculeRun*.cpp.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/Ensemble.h"
#include "app/EpochOrderFlags.h"
#include "app/HeapTuning.h"
#include "app/HtmlReport.h"
#include "app/MoleculeData.h"
#include "app/MoleculeFlags.h"
#include "app/MoleculePredictions.h"
#include "app/RegressionDefaults.h"
#include "app/Trainer.h"
#include "data/TargetScaling.h"
#include "gnn/autograd/Profiler.h"
#include "gnn/io/Checkpoint.h"
#include "gnn/metrics/Evaluation.h"
#include "gnn/system/ResidentMemory.h"
#include "loaders/FixedSizeDataLoader.h"
#include "loaders/ShapeBuckets.h"

namespace gnn::app::detail {

/// A batch shape as the run's configuration and results record it (num_nodes, num_edges, num_graphs,
/// max_nodes_per_graph).
nlohmann::json fixedToJson(const FixedSizeOptions& f);

// One run of the program, phase by phase; each phase leaves its results here for the next.
class MoleculeRun {
 public:
  MoleculeRun(Program& prog, MoleculeSettings& s, const MoleculeProgramDefaults& d, EpochOrderFlags& order)
      : prog_(prog), s_(s), d_(d), order_(order) {}

  /// The phases in order (app/MoleculeProgram.cpp); returns the exit code.
  int run();

 private:
  // Configuration, data and batch shapes (app/MoleculeRunData.cpp).
  void startOrContinue();
  void loadData();
  void deriveRunConfig();
  MoleculeTask deriveTask() const;
  std::vector<Metric> chosenMetrics() const;
  /// --loss, or with auto the data's convention's (regression_): "l1" or "mse".
  const std::string& regressionLoss() const { return s_.loss == "auto" ? regression_.loss : s_.loss; }
  std::vector<uint8_t> trainingPositives() const;
  FixedSizeOptions trainingShape() const;
  FixedSizeOptions evaluationShape() const;
  void checkOversizedMolecules() const;
  void makeTrainLoader();
  // The models and their training (app/MoleculeRunTraining.cpp).
  struct Member;
  Member makeMember(int64_t k);
  void buildModel();
  LossFn lossFunction();
  void train();
  void trainEnsemble();
  // Evaluation, the ensemble's calibration, --predict (app/MoleculeRunEvaluation.cpp).
  void evaluateEnsemble();
  void noteEnsembleScores(nlohmann::json& j, const nlohmann::json& validMetric, const std::string& calibration) const;
  void saveEnsemble(const EnsembleInfo& info);
  Evaluation evaluate(const std::vector<int64_t>& positions, const std::string& set);
  const ShapeBuckets& evalBucketsFor(const std::string& set, const std::vector<int64_t>& positions);
  void noteEvalPadding(const std::string& set, const std::vector<int64_t>& positions, const MoleculePredictions& p);
  std::string describeEvalPadding(const std::string& set, const std::vector<int64_t>& positions,
                                  const PaddingReport& r);
  void reportEvalPadding();
  void evaluateOnly();
  void writePredictions();
  // The results: stdout, the JSON, --report-html, --padding-report-only (app/MoleculeRunReport.cpp).
  int reportPadding();
  std::string reportPath() const;
  void writeReport();
  void report();
  void reportMetrics(const nlohmann::json& sum);
  void printSummary(const nlohmann::json& sum) const;

  Program& prog_;
  MoleculeSettings& s_;
  MoleculeModelSpec& spec_ = s_.spec;
  const TrainingFlags& tf_ = s_.training;
  const DeviceFlags& df_ = s_.device;
  const MoleculeProgramDefaults& d_;
  EpochOrderFlags& order_;
  // Resident memory apart: RssAnon (what the run allocated) and RssFile (the mapped dataset's pages).
  ResidentMemoryPeak memoryPeak_;
  RunConfig config_;
  // The checkpoint continued (--load, --resume) and its path; sizesFrom_ names it for the memory checks.
  std::optional<Checkpoint> ck_;
  std::string ckPath_, sizesFrom_;
  PackingStrategy strategy_ = PackingStrategy::PlannedPack;
  OverSizeStrategy overSize_ = OverSizeStrategy::Error;
  MoleculeDataOptions mo_;
  MoleculeData md_;
  // The molecules as the model reads them (SchNet: the radius graph, computed once).
  std::shared_ptr<const Dataset> all_;
  int64_t tasks_ = 0;
  MoleculeTask task_ = MoleculeTask::Regression;
  bool classification_ = false;
  TargetScaling scaling_;
  RegressionDefaults regression_;  // --loss auto's and the default --metric's choice, kept in the checkpoints
  FixedSizeOptions fixed_, evalFixed_;
  FixedSizeDataLoader::Options lo_;
  std::unique_ptr<FixedSizeDataLoader> trainLoader_;
  nlohmann::json out_;
  PaddingReport padding_;
  std::vector<Metric> metrics_;  // --metric (or the task's default); the first selects the best epoch
  std::string metricName_;
  // An evaluation-only run (--load, no epoch to train): its own scores of the best weights.
  std::optional<Evaluation> evalValid_, evalTest_;
  // Every model the run trains, each with its optimizer, trainer and device program: member 0 is the run's own
  // (the run's flags; it continues the checkpoint, and is saved, logged and reported), members 1 .. N-1 those of
  // --ensemble-size N, each with flags of its own (seed --seed + k; nothing saved, logged or checkpointed on its
  // own). train() trains members_[current_].
  struct Member {
    std::unique_ptr<TrainingFlags> flags;  // members 1 .. N-1; member 0 trains with tf_
    std::unique_ptr<BlockModel> model;
    std::unique_ptr<Optimizer> opt;
    std::unique_ptr<Trainer> trainer;
    std::unique_ptr<DeviceProgram> program;
  };
  std::vector<Member> members_;
  size_t current_ = 0;
  Member& primary() { return members_.front(); }
  const Member& primary() const { return members_.front(); }
  Member& current() { return members_[current_]; }
  // The ensemble's test predictions.
  std::optional<MoleculePredictions> ensembleTest_;
  // --report-html: the epochs each model trained in this run, and the ensemble's test predictions before
  // its calibration (kept only for the report).
  std::vector<LearningCurve> curves_;
  int64_t epochsBeforeRun_ = 0;  // of curves_[0]: trained by the run whose checkpoint this one continues
  std::optional<MoleculePredictions> ensembleTestUncalibrated_;
  std::string calibrationMethod_ = "none";
  OpProfiler profiler_;
  std::optional<HeapWarmUp> heapWarmUp_;
  int64_t steps_ = 0;
  // Inference throughput over every evaluation pass (no tape, eval mode, the training batch shape).
  double inferSeconds_ = 0;
  int64_t inferMolecules_ = 0;
  // Per evaluated set ("valid", "test"): its batch shapes (--eval-buckets), chosen once from its molecules' sizes,
  // the padding of its last pass, and that padding as JSON with one shape's for comparison.
  std::map<std::string, ShapeBuckets> evalBuckets_;
  std::map<std::string, PaddingReport> evalPadding_;
  nlohmann::json evalPaddingJson_ = nlohmann::json::object();
};

}  // namespace gnn::app::detail
