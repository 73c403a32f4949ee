#include "app/TrainingFlags.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "gnn/system/Check.h"
#include "gnn/system/Parallel.h"

namespace gnn::app {

namespace fs = std::filesystem;

namespace {
// 64 random bits as 16 hex digits; the clock and the pid are mixed in should random_device be a poor source.
std::string newRunId() {
  std::random_device rd;
  uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  v ^= static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) * 0x9e3779b97f4a7c15ULL;
  v ^= static_cast<uint64_t>(::getpid()) << 17;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(v));
  return hex;
}
}  // namespace

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
      "--keep-checkpoints; one run at a time per DIR, and a new run needs one without checkpoints")(
      "checkpoint-every", value(&checkpointEvery, int64_t{0}), "also checkpoint every N optimizer steps (0: at epoch ends)")(
      "keep-checkpoints", value(&keepCheckpoints, int64_t{3}), "checkpoints kept in --checkpoint-dir")(
      "resume", po::bool_switch(&resume),
      "continue from the newest valid checkpoint in --checkpoint-dir (a damaged one is reported and the one before "
      "used); a new run when there is none. Continues the same command: other training flags are refused (--load "
      "FILE may change them)");
  prog.group("Training (these may change on --load)")
      .add_options()("epochs", value(&epochs, d.epochs), "epochs to reach in total (also after --load); 0: evaluate only")(
          "lr", value(&lr, d.lr), "base learning rate")(
          "optimizer", value(&optimizer, d.optimizer), "adam | adamw")(
          "weight-decay", value(&weightDecay, d.weightDecay), d.weightDecayHelp.c_str())(
          "schedule", value(&schedule, d.schedule),
          "learning-rate schedule: none | cosine (to 0 over the run) | step (x gamma every --step-size epochs) | "
          "warmup-linear (linear warmup, then linear decay to 0) | noam (Chemprop's NoamLR: linear from lr/10 to lr "
          "over the warmup, 2 epochs of steps unless --warmup, then exponentially to lr/10 at the end) | plateau "
          "(torch's ReduceLROnPlateau on the validation metric: x gamma after more than --patience epochs without "
          "a better one, down to --min-lr)")(
          "warmup", value(&warmup, d.warmup),
          "linear warmup steps (cosine, warmup-linear, noam); a warmup as long as the run becomes a tenth of it")(
          "step-size", value(&stepSize, int64_t{0}), "epochs between decays (--schedule step; 0: a third of --epochs)")(
          "gamma", value(&gamma, 0.1), "decay factor (--schedule step, plateau)")(
          "patience", value(&patience, int64_t{10}),
          "--schedule plateau: epochs without a better validation metric before a decay (torch's default 10)")(
          "min-lr", value(&minLr, 0.0), "--schedule plateau: the learning rate decays no lower")(
          "early-stopping", value(&earlyStopping, int64_t{0}),
          "stop after this many epochs without a better validation metric (0: never)")(
          "test-every-epoch", po::bool_switch(&testEveryEpoch),
          "evaluate the test set after every epoch (in the log); by default it is evaluated once, on the best "
          "validation epoch's weights, after training")(
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
  if (threads == 0) return;
  // The whole process, not only this thread's context: the contexts a device program runs its stages and
  // replicas on, and the loader's prefetch thread, take the process default (every core), so --threads 1 once
  // ran the training's ops on two threads. The core slots cap every thread's loops together; an MPI rank's
  // share of the host (already set as the slots) is never raised.
  setDefaultThreads(threads);
  setCoreSlots(std::min(threads, coreSlots()));
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
  requireOneOf("--schedule", schedule, {"none", "cosine", "step", "warmup-linear", "noam", "plateau"});
  requireAtLeast("--warmup", static_cast<double>(warmup), 0);
  requireAtLeast("--step-size", static_cast<double>(stepSize), 0);
  if (!(gamma > 0 && gamma <= 1)) throw UsageError("--gamma " + formatNumber(gamma) + ": must be in (0, 1]");
  requireAtLeast("--early-stopping", static_cast<double>(earlyStopping), 0);
  if (!(timeBudgetMinutes >= 0 && std::isfinite(timeBudgetMinutes)))
    throw UsageError("--time-budget " + formatNumber(timeBudgetMinutes) + ": must be a finite number of minutes >= 0");
  if (!(clipNorm >= 0 && std::isfinite(clipNorm))) throw UsageError("--clip-norm " + formatNumber(clipNorm) + ": must be a finite number >= 0 (0: no clipping)");
  if (warmup > 0 && schedule != "cosine" && schedule != "warmup-linear" && schedule != "noam")
    throw UsageError("--warmup " + std::to_string(warmup) + " needs --schedule cosine, warmup-linear or noam (got " +
                     schedule + ")");
  if (stepSize > 0 && schedule != "step") throw UsageError("--step-size needs --schedule step (got " + schedule + ")");
  requireAtLeast("--patience", static_cast<double>(patience), 0);
  if (!(minLr >= 0 && minLr <= lr))
    throw UsageError("--min-lr " + formatNumber(minLr) + ": must be in [0, --lr " + formatNumber(lr) + "]");
  if (schedule == "plateau" && gamma >= 1) throw UsageError("--schedule plateau: --gamma must be below 1");
  if ((prog.given("patience") || prog.given("min-lr")) && schedule != "plateau")
    throw UsageError(std::string("--") + (prog.given("patience") ? "patience" : "min-lr") +
                     " needs --schedule plateau (got " + schedule + ")");
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
    // One writer per folder: two runs in one folder would rotate away each other's checkpoints, and --resume
    // would go on from whichever wrote last. Rank 0 alone writes, so it alone locks; every rank learns the
    // outcome, so that all of them end together.
    std::string refused;
    if (prog.primary()) {
      try {
        std::ostringstream tookOver;
        checkpointDirLock_ =
            std::make_shared<FolderLock>(FolderLock::acquire(checkpointDir, "--checkpoint-dir", &tookOver));
        if (std::string line = tookOver.str(); !line.empty() && !quiet) prog.note(line.substr(0, line.size() - 1));
      } catch (const std::runtime_error& e) {
        refused = e.what();  // FolderInUse, or a filesystem without locks
      }
      if (refused.empty() && !resume && load.empty()) {
        const std::vector<std::string> held = CheckpointDir(checkpointDir, keepCheckpoints).files();
        if (!held.empty())
          refused = "--checkpoint-dir " + checkpointDir + " holds the checkpoints of an earlier run (newest " +
                    held.front() + ") that a new run would replace; add --resume to continue that run, or remove " +
                    "them or choose another folder";
      }
    }
    if (ProcessGroup* g = prog.processes().get(); isDistributed(g)) {
      const std::vector<double> seen = g->gatherDoubles(refused.empty() ? 0.0 : 1.0, "the --checkpoint-dir lock");
      if (refused.empty() && seen[0] != 0) refused = "--checkpoint-dir " + checkpointDir + ": refused on rank 0";
    }
    if (!refused.empty()) {
      checkpointDirLock_.reset();
      throw UsageError(refused);
    }
    CheckpointDir::removeStaleTemporaries(checkpointDir);
  }
  // A new run's id; a continued one takes its checkpoint's (checkpointToContinue). Only rank 0's is written.
  runId_ = newRunId();
}

nlohmann::json TrainingFlags::trainingIdentity() const {
  nlohmann::json j = {{"lr", lr},
                      {"epochs", epochs},
                      {"optimizer", optimizer},
                      {"weight_decay", weightDecay},
                      {"schedule", schedule},
                      {"warmup", warmup},
                      {"step_size", stepSize},
                      {"gamma", gamma},
                      {"patience", patience},
                      {"min_lr", minLr},
                      {"early_stopping", earlyStopping},
                      {"clip_norm", clipNorm},
                      {"time_budget", timeBudgetMinutes}};
  for (const auto& [key, value] : programTraining.items()) j[key] = value;
  return j;
}

namespace {

// A value of trainingIdentity() as it is typed on the command line.
std::string shown(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.dump();  // --epochs 300, not 3e+02
  if (v.is_number()) return formatNumber(v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// --resume continues the command that wrote the checkpoint: refused when `found` was written with other
// training flags than `mine`. Checkpoints from before runs were named (no "run") are accepted.
void requireSameTraining(const CheckpointDir::Found& found, const nlohmann::json& mine) {
  const nlohmann::json& meta = found.checkpoint.meta;
  if (!meta.contains("run") || !meta["run"].is_object()) return;
  const nlohmann::json& run = meta["run"];
  if (!run.contains("training") || !run["training"].is_object()) return;
  const nlohmann::json& theirs = run["training"];
  std::string differ;
  for (const auto& [key, value] : mine.items()) {
    if (!theirs.contains(key)) continue;
    const nlohmann::json& t = theirs[key];
    const bool same = t.is_number() && value.is_number() ? t.get<double>() == value.get<double>() : t == value;
    if (same) continue;
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    differ += (differ.empty() ? "" : ", ") + flag + " " + shown(t) + " (this command: " + shown(value) + ")";
  }
  if (differ.empty()) return;
  const std::string id = run.contains("id") && run["id"].is_string() ? run["id"].get<std::string>() : "?";
  throw UsageError("--resume: " + found.path + " belongs to run " + id + ", trained with " + differ +
                   "; --resume continues the same command: to continue that run with other flags use --load " +
                   found.path + ", or use another --checkpoint-dir for a new run");
}

}  // namespace

std::optional<CheckpointDir::Found> TrainingFlags::checkpointToContinue() const {
  continuing_ = false;
  // The run id a continued run keeps (absent from checkpoints written before runs were named).
  auto inheritRunId = [&](const Checkpoint& ck) {
    if (ck.meta.contains("run") && ck.meta["run"].is_object() && ck.meta["run"].contains("id") &&
        ck.meta["run"]["id"].is_string())
      runId_ = ck.meta["run"]["id"].get<std::string>();
  };
  if (!load.empty()) {
    continuing_ = true;
    CheckpointDir::Found f{load, Checkpoint::load(load)};
    inheritRunId(f.checkpoint);
    return f;
  }
  if (!resume) return std::nullopt;
  std::optional<CheckpointDir::Found> f = CheckpointDir(checkpointDir, keepCheckpoints).newestValid(std::cerr);
  if (!f) {
    if (!quiet) std::cerr << "--resume: no checkpoint in " << checkpointDir << " yet; starting a new run\n";
    return std::nullopt;
  }
  requireSameTraining(*f, trainingIdentity());
  inheritRunId(f->checkpoint);
  continuing_ = true;
  return f;
}

std::optional<CheckpointDir::Found> TrainingFlags::continueRun(const Program& prog, RunConfig& config) const {
  evaluationOnly_ = false;
  std::optional<CheckpointDir::Found> found = checkpointToContinue();
  if (!found) return found;
  const nlohmann::json& meta = found->checkpoint.meta;
  const nlohmann::json& written = meta.contains("program") ? meta["program"] : nlohmann::json();
  const std::string program = written.is_string() ? written.get<std::string>() : written.dump();
  if (program != prog.name())
    throw std::runtime_error(found->path + ": not a checkpoint of " + prog.name() + " (program '" + program + "')");
  // Epochs the loaded run completed (a malformed state is named later, when the trainer reads it).
  const nlohmann::json* trainer = meta.contains("trainer") && meta["trainer"].is_object() ? &meta["trainer"] : nullptr;
  const bool knownEpochs = trainer && trainer->contains("completed_epochs") && (*trainer)["completed_epochs"].is_number_integer();
  evaluationOnly_ = !load.empty() && knownEpochs && epochs <= (*trainer)["completed_epochs"].get<int64_t>();
  config.restore(meta.contains("config") ? meta["config"] : nlohmann::json(), prog, found->path, evaluationOnly_);
  return found;
}

std::unique_ptr<Optimizer> TrainingFlags::makeOptimizer(std::vector<ParamGroup> groups) const {
  if (optimizer == "adamw") return std::make_unique<AdamW>(std::move(groups), lr);
  return std::make_unique<Adam>(std::move(groups), lr);
}

std::unique_ptr<LrSchedule> TrainingFlags::makeSchedule(int64_t totalSteps, int64_t stepsPerEpoch,
                                                       PlateauLr::State* plateau, bool higherIsBetter) const {
  if (schedule == "plateau") {
    GNN_CHECK_ARG(plateau != nullptr, "--schedule plateau: no state to keep (a program without validation)");
    return std::make_unique<PlateauLr>(*plateau, gamma, patience, minLr / lr, higherIsBetter);
  }
  totalSteps = std::max<int64_t>(totalSteps, 2);
  // A warmup as long as the whole run (a short run with a program's default warmup) shrinks to a tenth of it.
  const int64_t w = warmup < totalSteps ? warmup : totalSteps / 10;
  if (schedule == "cosine") return std::make_unique<CosineLr>(totalSteps, 0.0, w);
  if (schedule == "warmup-linear") return std::make_unique<WarmupLinearLr>(w, totalSteps, 0.0);
  if (schedule == "noam") {
    // Chemprop's warmup_epochs 2 when --warmup is not given.
    const int64_t noamWarmup = warmup > 0 ? w : std::min(2 * std::max<int64_t>(stepsPerEpoch, 1), totalSteps / 2);
    return std::make_unique<NoamLr>(noamWarmup, totalSteps);
  }
  if (schedule == "step") {
    const int64_t everyEpochs = stepSize > 0 ? stepSize : std::max<int64_t>(1, epochs / 3);
    return std::make_unique<StepLr>(everyEpochs * std::max<int64_t>(stepsPerEpoch, 1), gamma);
  }
  return std::make_unique<ConstantLr>();
}

}  // namespace gnn::app
