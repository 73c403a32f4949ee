// MoleculeRun: one run of a molecule program (app/MoleculeProgram.h) once its command line is parsed, phase by
// phase: continue or start, load the data, derive the run's configuration, train, evaluate, predict, report.
// Internal to the program: its phases are defined in app/MoleculeProgram.cpp and app/MoleculeRun*.cpp.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/Ensemble.h"
#include "app/EvalPaddingReport.h"
#include "app/EpochOrderFlags.h"
#include "app/HeapTuning.h"
#include "app/HtmlReport.h"
#include "app/MoleculeData.h"
#include "app/MoleculeFlags.h"
#include "app/MoleculePredictions.h"
#include "app/MoleculeResults.h"
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

// What makeTrainLoader() gives the results: the data's part of them, the training loader's included, with the
// padding of its first epoch.
struct TrainData {
  nlohmann::json results = nlohmann::json::object();
  PaddingReport padding;
};

// Inference throughput over evaluation passes (no tape, eval mode).
struct InferenceTime {
  double seconds = 0;
  int64_t molecules = 0;
};

// What the training of every model gave: their learning curves (--report-html), and the throughput of the
// evaluations between their epochs.
struct Training {
  std::vector<LearningCurve> curves;
  int64_t epochsBeforeRun = 0;  // of curves[0]: trained by the run whose checkpoint this one continues
  InferenceTime inference;
};

// The ensemble's evaluation (or one model's uncertainty and calibration): its block of the results, and its test
// predictions, calibrated, and before the calibration (kept only for --report-html).
struct EnsembleScores {
  nlohmann::json results;  // the results' "ensemble" block ("uncertainty" for one model)
  std::optional<MoleculePredictions> test, testUncalibrated;
  std::string calibration = "none";  // the method fitted on validation
};

// An evaluation-only run's own scores of the best weights (none in a run that trains).
struct OwnScores {
  std::optional<Evaluation> valid, test;
};

// One run of the program, phase by phase; run() hands each phase's results on to the next.
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
  TrainData makeTrainLoader();
  // The models and their training (app/MoleculeRunTraining.cpp).
  struct Member;
  Member makeMember(int64_t k);
  void buildModel();
  LossFn lossFunction();
  Training trainMembers();
  LearningCurve train(InferenceTime& inference);
  bool scoresAnEnsemble() const;
  // Evaluation, the ensemble's calibration, --predict (app/MoleculeRunEvaluation.cpp).
  EnsembleScores evaluateEnsemble();
  void noteEnsembleScores(nlohmann::json& j, const nlohmann::json& validMetric, const std::string& calibration) const;
  void saveEnsemble(const EnsembleInfo& info);
  Evaluation evaluate(const std::vector<int64_t>& positions, const std::string& set, InferenceTime& inference);
  OwnScores evaluateOnly(InferenceTime& inference);
  void writePredictions(const std::optional<EnsembleScores>& ensemble);
  // The results: their JSON, --report-html, --padding-report-only (app/MoleculeRunReport.cpp).
  int reportPadding(const TrainData& data);
  std::string reportPath() const;
  void writeReport(const nlohmann::json& results, const Training& training,
                   const std::optional<EnsembleScores>& ensemble, bool evaluationOnly);
  MoleculeResults collectResults(nlohmann::json out, const std::optional<EnsembleScores>& ensemble,
                                 const OwnScores& own, const InferenceTime& inference);
  nlohmann::json modelResults() const;
  void addDeviceResults(nlohmann::json& out);
  void addMetricResults(nlohmann::json& out, const nlohmann::json& sum) const;

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
  // Each evaluated set's batch shapes (chosen once for the run) and the padding of its evaluations.
  std::optional<EvalPaddingReport> evalPadding_;
  std::vector<Metric> metrics_;  // --metric (or the task's default); the first selects the best epoch
  std::string metricName_;
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
  std::optional<HeapWarmUp> heapWarmUp_;
  // --profile: the training steps of every model.
  OpProfiler profiler_;
  int64_t steps_ = 0;
};

}  // namespace gnn::app::detail
