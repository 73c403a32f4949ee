#include "examples/common/TrainingFlags.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "gnn/Parallel.h"

namespace gnn::app {

namespace fs = std::filesystem;

void TrainingFlags::addTo(Program& prog, const TrainingDefaults& d) {
  epochs = d.epochs;
  lr = d.lr;
  weightDecay = d.weightDecay;
  optimizer = d.optimizer;
  schedule = d.schedule;
  warmup = d.warmup;
  clipNorm = d.clipNorm;
  prog.group("Run").add_options()(
      "threads", value(&threads, 0), "threads for ops (0: every core; more than the machine's cores is refused)")(
      "seed", value(&seed, uint64_t{0}), "seed of initialisation, shuffling, splits and dropout")(
      "json", po::bool_switch(&json), "print one JSON object with the results on stdout")(
      "quiet,q", po::bool_switch(&quiet), "no progress on stderr (the results are still printed)")(
      "log", po::value(&log), "write one JSON line per epoch to FILE.jsonl (a run continued with --load appends)")(
      "save", po::value(&save),
      "write a checkpoint FILE at the end (model, optimizer, best weights, the run's configuration); on an "
      "interrupt (Ctrl-C) or a non-finite loss, the last good state")(
      "load", po::value(&load),
      "continue the run saved in FILE: its configuration is restored (a flag that contradicts it is an error); "
      "--epochs, --lr, the schedule, early stopping and the output flags may change")(
      "checkpoint-dir", po::value(&checkpointDir)->value_name("DIR"),
      "write DIR/ckpt-<step>.ckpt after every epoch (and every --checkpoint-every steps), keeping the newest "
      "--keep-checkpoints")(
      "checkpoint-every", value(&checkpointEvery, int64_t{0}), "also checkpoint every N optimizer steps (0: at epoch ends)")(
      "keep-checkpoints", value(&keepCheckpoints, int64_t{3}), "checkpoints kept in --checkpoint-dir")(
      "resume", po::bool_switch(&resume),
      "continue from the newest valid checkpoint in --checkpoint-dir (a damaged one is reported and the one before "
      "used); a new run when there is none");
  prog.group("Training (these may change on --load)")
      .add_options()("epochs", value(&epochs, d.epochs), "epochs to reach in total (also after --load); 0: evaluate only")(
          "lr", value(&lr, d.lr), "base learning rate")(
          "optimizer", value(&optimizer, d.optimizer), "adam | adamw")(
          "weight-decay", value(&weightDecay, d.weightDecay), d.weightDecayHelp.c_str())(
          "schedule", value(&schedule, d.schedule),
          "learning-rate schedule: none | cosine (to 0 over the run) | step (x gamma every --step-size epochs) | "
          "warmup-linear (linear warmup, then linear decay to 0)")(
          "warmup", value(&warmup, d.warmup),
          "linear warmup steps (cosine, warmup-linear); a warmup as long as the run becomes a tenth of it")(
          "step-size", value(&stepSize, int64_t{0}), "epochs between decays (--schedule step; 0: a third of --epochs)")(
          "gamma", value(&gamma, 0.1), "decay factor (--schedule step)")(
          "early-stopping", value(&earlyStopping, int64_t{0}),
          "stop after this many epochs without a better validation metric (0: never)")(
          "clip-norm", value(&clipNorm, d.clipNorm), "clip the global gradient norm to this (0: no clipping)")(
          "time-budget", value(&timeBudgetMinutes, 0.0),
          "stop training after this many minutes of training steps (evaluation not counted; 0: no limit); the "
          "schedule then spans the budget, estimated from the speed of the first steps. Without --epochs, epochs "
          "continue until the budget is spent");
}

void applyThreads(int threads) {
  if (threads < 0) throw UsageError("--threads " + std::to_string(threads) + ": must be >= 0 (0 uses every core)");
  if (threads > machineCores())
    throw UsageError("--threads " + std::to_string(threads) + ": this machine has " + std::to_string(machineCores()) +
                     " core(s); more threads than cores only slows every op down (0 uses every core)");
  setNumThreads(threads);
}

void checkWritable(const std::string& flag, const std::string& path) {
  fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw UsageError(flag + " " + path + ": is a folder; give a file name");
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(dir, ec)) throw UsageError(flag + " " + path + ": the folder " + dir.string() + " does not exist");
  // Probe with a file of our own next to the target: access(2) is wrong for root and for read-only mounts.
  fs::path probe = dir / (".gnn-write-check-" + std::to_string(::getpid()));
  {
    std::ofstream f(probe);
    if (!f) throw UsageError(flag + " " + path + ": cannot write in " + dir.string() + " (" + std::strerror(errno) + ")");
  }
  fs::remove(probe, ec);
}

void TrainingFlags::apply(const Program& prog) {
  applyThreads(threads);
  // Under mpirun, rank 0 reports progress for the job; the others stay quiet unless they fail.
  if (!prog.primary()) quiet = true;
  // A time budget alone trains until it is spent.
  if (timeBudgetMinutes > 0 && !prog.given("epochs")) epochs = kEpochsUntilBudget;
  requireAtLeast("--epochs", static_cast<double>(epochs), 0);
  requirePositive("--lr", lr);
  requireOneOf("--optimizer", optimizer, {"adam", "adamw"});
  if (!(weightDecay >= 0 && std::isfinite(weightDecay))) throw UsageError("--weight-decay " + formatNumber(weightDecay) + ": must be a finite number >= 0");
  requireOneOf("--schedule", schedule, {"none", "cosine", "step", "warmup-linear"});
  requireAtLeast("--warmup", static_cast<double>(warmup), 0);
  requireAtLeast("--step-size", static_cast<double>(stepSize), 0);
  if (!(gamma > 0 && gamma <= 1)) throw UsageError("--gamma " + formatNumber(gamma) + ": must be in (0, 1]");
  requireAtLeast("--early-stopping", static_cast<double>(earlyStopping), 0);
  if (!(timeBudgetMinutes >= 0 && std::isfinite(timeBudgetMinutes)))
    throw UsageError("--time-budget " + formatNumber(timeBudgetMinutes) + ": must be a finite number of minutes >= 0");
  if (!(clipNorm >= 0 && std::isfinite(clipNorm))) throw UsageError("--clip-norm " + formatNumber(clipNorm) + ": must be a finite number >= 0 (0: no clipping)");
  if (warmup > 0 && schedule != "cosine" && schedule != "warmup-linear")
    throw UsageError("--warmup " + std::to_string(warmup) + " needs --schedule cosine or warmup-linear (got " + schedule + ")");
  if (stepSize > 0 && schedule != "step") throw UsageError("--step-size needs --schedule step (got " + schedule + ")");
  if (!save.empty()) checkWritable("--save", save);
  if (!log.empty()) checkWritable("--log", log);
  if (!load.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(load, ec)) throw UsageError("--load " + load + ": no such file");
  }
  requireAtLeast("--checkpoint-every", static_cast<double>(checkpointEvery), 0);
  requireAtLeast("--keep-checkpoints", static_cast<double>(keepCheckpoints), 1);
  if ((checkpointEvery > 0 || resume) && checkpointDir.empty())
    throw UsageError(std::string(resume ? "--resume" : "--checkpoint-every") + " needs --checkpoint-dir DIR");
  if (resume && !load.empty()) throw UsageError("--resume and --load both choose where to continue from; give one");
  // Temporary files of our own atomic writes that a killed process left behind.
  if (!save.empty()) CheckpointDir::removeStaleTemporaries(fs::path(save).parent_path().string());
  if (!checkpointDir.empty()) {
    std::error_code ec;
    fs::create_directories(checkpointDir, ec);
    if (ec) throw UsageError("--checkpoint-dir " + checkpointDir + ": cannot create (" + ec.message() + ")");
    checkWritable("--checkpoint-dir", (fs::path(checkpointDir) / "probe.ckpt").string());
    CheckpointDir::removeStaleTemporaries(checkpointDir);
  }
}

std::optional<CheckpointDir::Found> TrainingFlags::checkpointToContinue() const {
  continuing_ = false;
  if (!load.empty()) {
    continuing_ = true;
    return CheckpointDir::Found{load, Checkpoint::load(load)};
  }
  if (!resume) return std::nullopt;
  std::optional<CheckpointDir::Found> f = CheckpointDir(checkpointDir, keepCheckpoints).newestValid(std::cerr);
  if (!f) {
    if (!quiet) std::cerr << "--resume: no checkpoint in " << checkpointDir << " yet; starting a new run\n";
    return std::nullopt;
  }
  continuing_ = true;
  return f;
}

std::unique_ptr<Optimizer> TrainingFlags::makeOptimizer(std::vector<ParamGroup> groups) const {
  if (optimizer == "adamw") return std::make_unique<AdamW>(std::move(groups), lr);
  return std::make_unique<Adam>(std::move(groups), lr);
}

std::unique_ptr<LrSchedule> TrainingFlags::makeSchedule(int64_t totalSteps, int64_t stepsPerEpoch) const {
  totalSteps = std::max<int64_t>(totalSteps, 2);
  // A warmup as long as the whole run (a short run with a program's default warmup) shrinks to a tenth of it.
  const int64_t w = warmup < totalSteps ? warmup : totalSteps / 10;
  if (schedule == "cosine") return std::make_unique<CosineLr>(totalSteps, 0.0, w);
  if (schedule == "warmup-linear") return std::make_unique<WarmupLinearLr>(w, totalSteps, 0.0);
  if (schedule == "step") {
    const int64_t everyEpochs = stepSize > 0 ? stepSize : std::max<int64_t>(1, epochs / 3);
    return std::make_unique<StepLr>(everyEpochs * std::max<int64_t>(stepsPerEpoch, 1), gamma);
  }
  return std::make_unique<ConstantLr>();
}

}  // namespace gnn::app
