// Trainer: the epoch loop every training program shares. Per step: the dropout key, the scheduled learning
// rate, the loss checked finite before backward, the gradients checked finite (and clipped with
// --clip-norm), the optimizer step, progress, and a clean stop on SIGINT/SIGTERM. Per epoch: validation,
// the best epoch's weights and test metric kept (OGB's protocol: report test at the best validation epoch),
// early stopping, a log line, DIR/last.ckpt. Checkpoints hold the current and the best weights, the
// optimizer, this loop's state (down to the step inside an epoch) and the run's configuration, so --load
// continues to the same final weights as a run that was never stopped.
//
//   app::Trainer trainer(prog, flags, model, *opt, config, {"mae", /*higherIsBetter=*/false}, "molecules");
//   if (resuming) trainer.resume(ck);
//   trainer.run({.stepsPerEpoch = [&] { return loader.numBatches(); },
//                .trainEpoch = [&](int64_t epoch, int64_t skip) {
//                  loader.startEpoch(epoch);
//                  for (Batch b; loader.next(b);) {
//                    if (skip > 0) { --skip; continue; }
//                    trainer.step([&] { return l1Loss(model.forward(b), b.y, b.yMask); }, b.numRealGraphs);
//                  }
//                },
//                .validate = [&] { return evaluate(validLoader); }});
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/Progress.h"
#include "app/RunConfig.h"
#include "app/RunLog.h"
#include "app/TrainingFlags.h"
#include "device/Device.h"
#include "gnn/io/Checkpoint.h"
#include "gnn/io/Fnv1a.h"
#include "gnn/metrics/Evaluation.h"
#include "gnn/nn/Module.h"
#include "gnn/optim/LrSchedule.h"
#include "gnn/optim/Optimizer.h"

namespace gnn::app {

/// One trained epoch of a run's learning curve: its mean training loss, the validation metric after it and the
/// test metric (--test-every-epoch; NaN when not evaluated).
struct TrainedEpoch {
  int64_t epoch = 0;
  double loss = NAN, valid = NAN, test = NAN;
};

struct MetricSpec {
  std::string name;  // "mae", "rocauc", "acc"
  bool higherIsBetter = false;
};

class Trainer {
 public:
  struct Hooks {
    /// Steps the next epoch will run (for the schedule and the progress bar).
    std::function<int64_t()> stepsPerEpoch;
    /// Runs epoch `epoch` (0-based) through step(); the first `skip` steps' batches were already trained
    /// before an interrupt and must be drawn but not trained on.
    std::function<void(int64_t epoch, int64_t skip)> trainEpoch;
    std::function<Evaluation()> validate;
    /// Optional: evaluated whenever validation improves.
    std::function<Evaluation()> test;
  };

  Trainer(const Program& prog, const TrainingFlags& flags, Module& model, Optimizer& opt, RunConfig& config,
          MetricSpec metric, std::string unit);

  /// The seed of the dropout key (default --seed; programs with several runs give each its own).
  void setSeed(uint64_t seed) { seed_ = seed; }

  /// Continues the run saved in `ck` (read for --load; restore the configuration from it first and build the
  /// model from that): weights, optimizer state, best weights and metrics, epoch and step.
  void resume(const Checkpoint& ck, const std::string& path);

  /// The first line of --log: {"run": what}, e.g. the program, its configuration and the split. Continued runs
  /// write one too, so a log shows where each part began.
  void logRunStart(const nlohmann::json& what);

  /// One training step: `forwardLoss` runs the forward pass and returns the loss to minimise; `samples` real
  /// samples were in it; `describe` names them for error messages ("data.csv lines 12, 57, ..."). Returns
  /// false when --time-budget is spent: the epoch loop should stop drawing batches.
  bool step(const std::function<Variable()>& forwardLoss, int64_t samples,
            const std::function<std::string()>& describe = {});

  /// One host request on a device program: its weight updates, each with the scheduled learning rate, the
  /// gradients checked finite (and clipped with --clip-norm), the weights checked finite after it, and the
  /// same bookkeeping as step(). Returns false when --time-budget is spent.
  bool step(DeviceProgram& program, const Batch& request, const std::function<std::string()>& describe = {});
  /// Results of the last step(program, ...) (outputs per the output mode, padding and drops).
  const RunResult& lastRun() const { return lastRun_; }
  /// Micro-batches padded / dropped at the ends of epochs so far.
  int64_t paddedMicroBatches() const { return padded_; }
  int64_t droppedMicroBatches() const { return dropped_; }

  /// Epochs from the current one to --epochs, with validation, early stopping and checkpoints; then --save.
  void run(const Hooks& hooks);

  /// Runs `fn` with the best validation epoch's weights in the model (the current ones when none was kept),
  /// then puts the current weights back.
  void withBestWeights(const std::function<void()>& fn);

  /// Writes a checkpoint of the current state to `path` (atomic).
  void save(const std::string& path) const;

  /// Results for the program's JSON: epochs, best_epoch, valid_<metric>, test_<metric>, final_loss, ...
  nlohmann::json summary() const;
  int64_t completedEpochs() const { return completedEpochs_; }
  int64_t bestEpoch() const { return bestEpoch_; }
  double bestValid() const { return bestValid_; }
  const nlohmann::json& bestTest() const { return bestTest_; }
  /// Every epoch the run trained, in order, those before a --load / --resume included (kept in checkpoints;
  /// a checkpoint written before curves were kept starts it at its epoch).
  const std::vector<TrainedEpoch>& curve() const { return curve_; }
  double lastLoss() const { return lastLoss_; }
  /// FNV-1a over the bits of every step's loss since the run began (carried through --load).
  uint64_t lossChecksum() const { return lossChecksum_.value(); }
  double trainSeconds() const { return trainSeconds_; }
  Progress& progress() { return progress_; }

 private:
  Checkpoint checkpoint() const;
  void applySchedule(int64_t step);
  // Checks gradients (one per parameter) and clips them; throws naming the parameter when one is not finite.
  void checkGradients(std::vector<Tensor>& grads, double loss, const std::function<std::string()>& where);
  // Saves what --save / --checkpoint-dir ask for and throws: parameter `index`'s gradient is not finite (-1:
  // the norm overflowed).
  [[noreturn]] void stopOnNonFiniteGradient(int64_t index, double loss, const std::function<std::string()>& where);
  // After an update: weights finite (unless the device checked them: `checkWeights` false), loss bookkeeping,
  // progress, the time budget.
  void afterUpdate(double loss, int64_t samples, const std::function<std::string()>& where, bool checkWeights = true);
  // Throws: the update made parameter `index`'s weights non-finite.
  [[noreturn]] void stopOnNonFiniteWeights(int64_t index, const std::function<std::string()>& where) const;
  // After a step or request: SIGINT/SIGTERM, --checkpoint-every.
  void afterRequest(int64_t stepBefore, const std::function<std::string()>& where);
  void saveForStop(const std::string& why, std::string& where) const;
  // Writes --save and a --checkpoint-dir checkpoint, whichever the run has, when it stops early (a signal, a
  // non-finite loss or gradient); the paths written.
  std::vector<std::string> saveOnStop() const;
  // The loop's state a checkpoint carries under "trainer", one row per field: written by checkpoint(), read
  // back by resume().
  struct StateField;
  static const std::vector<StateField>& stateFields();
  // A checkpoint in --checkpoint-dir (rank 0 writes it); its path.
  std::string saveToCheckpointDir() const;
  bool better(double a, double b) const;
  std::string epochSummary(int64_t epoch, double valid, bool improved, double seconds, double rate) const;

  const Program& prog_;
  const TrainingFlags& flags_;
  Module& model_;
  Optimizer& opt_;
  RunConfig& config_;
  MetricSpec metric_;
  Progress progress_;
  std::string unit_;
  RunLog log_;
  std::unique_ptr<LrSchedule> schedule_;
  PlateauLr::State plateau_;  // --schedule plateau's, checkpointed under "trainer"."plateau"
  std::vector<Variable> params_;
  std::vector<Tensor> bestWeights_;

  int64_t completedEpochs_ = 0, stepInEpoch_ = 0, epochSamples_ = 0, steps_ = 0, samples_ = 0;
  double epochLossSum_ = 0, lastLoss_ = NAN, trainSeconds_ = 0, evalSeconds_ = 0, lastGradNorm_ = NAN;
  int64_t bestEpoch_ = 0, sinceImprovement_ = 0;
  double bestValid_ = NAN;
  nlohmann::json bestValidDetails_ = nlohmann::json::object(), bestTest_ = nlohmann::json::object();
  std::vector<TrainedEpoch> curve_;
  bool stoppedEarly_ = false, resumed_ = false, budgetSpent_ = false, budgetCalibrated_ = false;
  std::string resumedFrom_;  // the checkpoint resume() read: errors about its state found later name it
  std::chrono::steady_clock::time_point runStart_;
  double runEvalSeconds_ = 0;
  int64_t calibratedAtStep_ = 0;      // run step of the last --time-budget estimate
  double calibratedAtSeconds_ = 0;    // training seconds at it
  int64_t runSteps_ = 0, spe_ = 0;
  Fnv1a lossChecksum_;  // over every update's loss, in order
  uint64_t seed_ = 0;
  RunResult lastRun_;
  int64_t padded_ = 0, dropped_ = 0;
  // The device program of the last step (its fp16 loss scaling goes into checkpoints) and the state a resumed
  // checkpoint holds for it, handed over at the first step (the program is compiled after resume()).
  const DeviceProgram* program_ = nullptr;
  std::optional<LossScaleState> pendingLossScale_;
};

}  // namespace gnn::app
