// TrainingFlags: the flags every training program shares, with one meaning everywhere: threads, seed,
// epochs (the total to reach, also after --load), output (--json, --quiet, --log), checkpoints (--save,
// --load, --checkpoint-dir), and the optimisation (--lr, --optimizer, --weight-decay, --schedule, --warmup,
// --step-size, --gamma, --patience, --min-lr, --early-stopping, --clip-norm). Each program gives its own defaults. A run holds its
// --checkpoint-dir for its whole life (gnn/system/FolderLock.h), and its checkpoints name the run (an id and the
// training flags) so that --resume continues only the command that wrote them.
//
//   app::TrainingFlags tf;
//   tf.addTo(prog, {.epochs = 100, .lr = 1e-3});
//   return prog.run(argc, argv, [&] { tf.apply(prog); ... });
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/CheckpointDir.h"
#include "app/Program.h"
#include "app/RunConfig.h"
#include "gnn/optim/LrSchedule.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/FolderLock.h"

namespace gnn::app {

struct TrainingDefaults {
  int64_t epochs = 1;
  double lr = 1e-3;
  double weightDecay = 0.0;
  std::string weightDecayHelp = "weight decay (L2 with adam, decoupled with adamw)";
  std::string optimizer = "adam";
  std::string schedule = "none";
  int64_t warmup = 0;
  double clipNorm = 0.0;
};

struct TrainingFlags {
  /// --epochs when only --time-budget bounds the run.
  static constexpr int64_t kEpochsUntilBudget = 1000000;
  int threads = 0;
  uint64_t seed = 0;
  int64_t epochs = 1;
  bool json = false, quiet = false;
  std::string log, save, load, checkpointDir;
  std::string optimizer = "adam", schedule = "none";
  double lr = 1e-3, weightDecay = 0.0, gamma = 0.1, clipNorm = 0.0, minLr = 0.0;
  int64_t warmup = 0, stepSize = 0, earlyStopping = 0, patience = 10;
  double timeBudgetMinutes = 0;  // 0: none
  int64_t checkpointEvery = 0, keepCheckpoints = 3;
  bool resume = false;
  bool testEveryEpoch = false;  // --test-every-epoch (else test once, at the best epoch's weights)
  /// A program's own flags that decide the weights (e.g. molecule_property's class_balance: {"class_balance":
  /// true}), set before the run starts: part of trainingIdentity(), so --resume refuses a change and --load may
  /// make one, as for --lr.
  nlohmann::json programTraining = nlohmann::json::object();

  /// Adds the flags to `prog` under "Run" and "Training" headings.
  void addTo(Program& prog, const TrainingDefaults& defaults);
  /// Checks every value (UsageError in flag terms), sets the thread count, and checks that --save, --log and
  /// --checkpoint-dir can be written before any work starts. The primary process locks --checkpoint-dir until
  /// this object goes (a folder another run holds is refused, naming it), and a new run (neither --resume nor
  /// --load) is refused a folder that already holds checkpoints. Call first thing in the program's body.
  void apply(const Program& prog);
  /// The optimizer named by --optimizer over `groups` (their weight decays as given) at --lr.
  std::unique_ptr<Optimizer> makeOptimizer(std::vector<ParamGroup> groups) const;
  /// The checkpoint to continue from: --load FILE, or with --resume the newest valid one in --checkpoint-dir
  /// (damaged newer ones are reported on stderr); empty for a new run. With --resume, a checkpoint whose run
  /// had other training flags (trainingIdentity()) is refused naming each; --load may change them. A continued
  /// run takes the checkpoint's run id.
  std::optional<CheckpointDir::Found> checkpointToContinue() const;
  /// checkpointToContinue(), refused unless `prog` wrote it (its metadata's "program"), with `config` restored
  /// from it (RunConfig::restore): what every training program does before it reads its data. A --load whose run
  /// has reached --epochs already is evaluation-only (evaluationOnly()): its flags bound outside the model
  /// (RunConfig::bindOutsideModel: batching, metrics) may differ from the checkpoint's.
  std::optional<CheckpointDir::Found> continueRun(const Program& prog, RunConfig& config) const;
  /// Whether continueRun() found a --load that trains nothing more (--epochs at most the epochs it completed).
  bool evaluationOnly() const { return evaluationOnly_; }
  /// The run's id, 16 hex digits: drawn when the run first starts, kept by every run that continues it.
  const std::string& runId() const { return runId_; }
  /// The flags that decide the weights besides the run's configuration (RunConfig): lr, epochs, optimizer,
  /// weight_decay, schedule, warmup, step_size, gamma, early_stopping, clip_norm, time_budget, and programTraining.
  nlohmann::json trainingIdentity() const;
  /// Whether this run continues an earlier one (--load, or --resume with a checkpoint found).
  bool continuing() const { return continuing_; }
  /// The --schedule over a run of `totalSteps` optimizer steps, `stepsPerEpoch` per epoch.
  /// --schedule plateau keeps its state in `plateau` (the caller's, checkpointed with it) and reads the validation
  /// metric's direction from higherIsBetter.
  std::unique_ptr<LrSchedule> makeSchedule(int64_t totalSteps, int64_t stepsPerEpoch,
                                           PlateauLr::State* plateau = nullptr, bool higherIsBetter = false) const;

 private:
  mutable bool continuing_ = false, evaluationOnly_ = false;
  mutable std::string runId_;
  // Held from apply() to the end of the program (shared: TrainingFlags stays copyable).
  std::shared_ptr<FolderLock> checkpointDirLock_;
};

/// Throws (in flag terms) unless a file can be created at `path`: its folder exists and is writable and the
/// path is not a folder. Nothing is left behind.
void checkWritable(const std::string& flag, const std::string& path);
/// --threads: 0 = every core; negative or more than the machine's cores is refused. n > 0 holds the whole
/// process to n cores: this thread's budget, the default of every other context (device stages, prefetch
/// threads) and the core slots.
void applyThreads(int threads);

}  // namespace gnn::app
