#include "app/Trainer.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <variant>

#include "app/CheckpointDir.h"
#include "app/StopSignal.h"
#include "gnn/optim/GradNorm.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/SystemInfo.h"

namespace gnn::app {

namespace {
std::string num(double v, const char* fmt = "%.5g") {
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
const char* signalName(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

// The fp16 loss scaling's state, under "trainer"."loss_scaling" (a field list like Trainer::StateField's).
struct LossScaleField {
  const char* name;
  std::variant<int64_t LossScaleState::*, double LossScaleState::*> member;
  double ifNull = NAN;
};
const std::vector<LossScaleField>& lossScaleFields() {
  static const std::vector<LossScaleField> fields = {{"scale", &LossScaleState::scale},
                                                     {"clean_updates", &LossScaleState::cleanUpdates},
                                                     {"skipped_updates", &LossScaleState::skipped},
                                                     {"overflow_updates", &LossScaleState::overflows}};
  return fields;
}

// --schedule plateau's state, under "trainer"."plateau".
struct PlateauField {
  const char* name;
  std::variant<int64_t PlateauLr::State::*, double PlateauLr::State::*, bool PlateauLr::State::*> member;
  double ifNull = NAN;
};
const std::vector<PlateauField>& plateauFields() {
  static const std::vector<PlateauField> fields = {{"factor", &PlateauLr::State::factor},
                                                   {"best", &PlateauLr::State::best, 0.0},
                                                   {"bad_epochs", &PlateauLr::State::badEpochs},
                                                   {"seen", &PlateauLr::State::seen}};
  return fields;
}

// `fields` of `owner` as a JSON object.
template <class Owner, class Field>
nlohmann::json writeFields(const Owner& owner, const std::vector<Field>& fields) {
  nlohmann::json j = nlohmann::json::object();
  for (const Field& f : fields)
    std::visit(
        [&](auto member) {
          const auto& v = owner.*member;
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Fnv1a>)
            j[f.name] = v.value();
          else
            j[f.name] = v;
        },
        f.member);
  return j;
}

// Reads `fields` into `owner` from what `at(name)` returns (it names a missing field); a mistyped one throws
// nlohmann's exception, which the caller names.
template <class Owner, class Field, class At>
void readFields(Owner& owner, const std::vector<Field>& fields, At at) {
  for (const Field& f : fields)
    std::visit(
        [&](auto member) {
          auto& v = owner.*member;
          using T = std::decay_t<decltype(v)>;
          const nlohmann::json& j = at(f.name);
          if constexpr (std::is_same_v<T, Fnv1a>)
            v = Fnv1a(j.template get<uint64_t>());
          else if constexpr (std::is_same_v<T, double>)
            v = j.is_null() ? f.ifNull : j.template get<double>();
          else if constexpr (std::is_same_v<T, nlohmann::json>)
            v = j;
          else
            v = j.template get<T>();
        },
        f.member);
}
}  // namespace

// JSON has no NaN: a double saved as null (NaN, or an overflow) reads back as `ifNull`. Every int64_t field is a
// count a run reaches, never negative.
struct Trainer::StateField {
  const char* name;
  std::variant<int64_t Trainer::*, double Trainer::*, bool Trainer::*, nlohmann::json Trainer::*, Fnv1a Trainer::*>
      member;
  double ifNull = NAN;
};

const std::vector<Trainer::StateField>& Trainer::stateFields() {
  static const std::vector<StateField> fields = {{"completed_epochs", &Trainer::completedEpochs_},
                                                 {"step_in_epoch", &Trainer::stepInEpoch_},
                                                 {"epoch_loss_sum", &Trainer::epochLossSum_, 0.0},
                                                 {"epoch_samples", &Trainer::epochSamples_},
                                                 {"best_epoch", &Trainer::bestEpoch_},
                                                 {"best_valid", &Trainer::bestValid_},
                                                 {"best_valid_details", &Trainer::bestValidDetails_},
                                                 {"best_test", &Trainer::bestTest_},
                                                 {"since_improvement", &Trainer::sinceImprovement_},
                                                 {"stopped_early", &Trainer::stoppedEarly_},
                                                 {"loss_checksum", &Trainer::lossChecksum_},
                                                 {"last_loss", &Trainer::lastLoss_}};
  return fields;
}

Trainer::Trainer(const Program& prog, const TrainingFlags& flags, Module& model, Optimizer& opt, RunConfig& config,
                 MetricSpec metric, std::string unit)
    : prog_(prog),
      flags_(flags),
      model_(model),
      opt_(opt),
      config_(config),
      metric_(std::move(metric)),
      progress_(flags.quiet, unit),
      unit_(std::move(unit)),
      log_(prog.primary() ? flags.log : std::string(), flags.continuing()),
      params_(model.parameters()),
      seed_(flags.seed) {
  StopSignal::install();
}

bool Trainer::better(double a, double b) const {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return metric_.higherIsBetter ? a > b : a < b;
}

Checkpoint Trainer::checkpoint() const {
  Checkpoint ck;
  ck.addModule("model", model_);
  ck.addOptimizer(opt_);
  const auto named = model_.namedParameters();
  for (size_t i = 0; i < bestWeights_.size(); ++i) ck.tensors["best." + named[i].first] = bestWeights_[i].clone();
  ck.meta["format"] = "gnn-run";
  ck.meta["program"] = prog_.name();
  ck.meta["config"] = config_.toJson();
  ck.meta["metric"] = {{"name", metric_.name}, {"higher_is_better", metric_.higherIsBetter}};
  // predict computes in the precision the run evaluated in, so that it reproduces --predict bit for bit.
  ck.meta["matmul_precision"] = matmulPrecisionName(
      program_ ? matmulPrecisionOf(program_->options().precision) : ExecutionContext::current().matmulPrecision());
  // Which run wrote it: --resume continues only the command that did (TrainingFlags::checkpointToContinue).
  ck.meta["run"] = {{"id", flags_.runId()}, {"training", flags_.trainingIdentity()}};
  ck.meta["trainer"] = writeFields(*this, stateFields());
  if (program_ && program_->options().precision == Precision::FP16)
    ck.meta["trainer"]["loss_scaling"] = writeFields(program_->lossScaleState(), lossScaleFields());
  if (flags_.schedule == "plateau") ck.meta["trainer"]["plateau"] = writeFields(plateau_, plateauFields());
  // The state a person looks for first, outside the nested object.
  ck.meta["epoch"] = completedEpochs_;
  // The learning curve, for reports after a --load (JSON has no NaN: an epoch not tested holds null).
  nlohmann::json curve = nlohmann::json::array();
  for (const TrainedEpoch& e : curve_) curve.push_back({e.epoch, e.loss, e.valid, e.test});
  ck.meta["curve"] = std::move(curve);
  return ck;
}

// Under mpirun every rank holds the same state: rank 0 alone writes it.
void Trainer::save(const std::string& path) const {
  if (prog_.primary()) checkpoint().save(path);
}

std::string Trainer::saveToCheckpointDir() const {
  CheckpointDir dir(flags_.checkpointDir, flags_.keepCheckpoints);
  return prog_.primary() ? dir.write(checkpoint(), opt_.stepCount()) : dir.pathFor(opt_.stepCount());
}

void Trainer::resume(const Checkpoint& ck, const std::string& path) {
  ck.loadModule("model", model_);
  ck.loadOptimizer(opt_);
  opt_.setLr(flags_.lr);  // the checkpoint's rate does not override --lr; the schedule sets it each step
  if (!ck.meta.contains("trainer") || !ck.meta["trainer"].is_object())
    throw std::runtime_error(path + ": not a checkpoint of a training run (no trainer state)");
  const nlohmann::json& t = ck.meta["trainer"];
  // Each field read through `field`, so a missing or mistyped one is named in the message.
  std::string reading;
  const nlohmann::json* readValue = nullptr;
  auto field = [&](const nlohmann::json& obj, const std::string& prefix) {
    return [&obj, &reading, &readValue, &path, prefix](const char* key) -> const nlohmann::json& {
      reading = prefix + key;
      if (!obj.is_object() || !obj.contains(key))
        throw std::runtime_error(path + ": trainer state lacks '" + reading + "'");
      readValue = &obj.at(key);
      return *readValue;
    };
  };
  try {
    readFields(*this, stateFields(), field(t, ""));
    pendingLossScale_.reset();
    if (t.contains("loss_scaling")) {
      LossScaleState st;
      readFields(st, lossScaleFields(), field(t.at("loss_scaling"), "loss_scaling."));
      if (!st.valid())
        throw std::runtime_error(path + ": loss scaling state out of range (scale " + num(st.scale) + ")");
      pendingLossScale_ = st;
    }
    plateau_ = PlateauLr::State{};
    if (t.contains("plateau")) {  // absent when the run had another schedule: a plateau starts afresh
      readFields(plateau_, plateauFields(), field(t.at("plateau"), "plateau."));
      if (!(plateau_.factor > 0 && plateau_.factor <= 1) || plateau_.badEpochs < 0)
        throw std::runtime_error(path + ": plateau schedule state out of range (factor " + num(plateau_.factor) +
                                 ", bad_epochs " + std::to_string(plateau_.badEpochs) + ")");
    }
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(path + ": trainer state '" + reading + "' = " + (readValue ? readValue->dump() : "?") +
                             " has the wrong type");
  }
  curve_.clear();
  if (ck.meta.contains("curve") && ck.meta["curve"].is_array()) {
    auto number = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : NAN; };
    for (const nlohmann::json& e : ck.meta["curve"]) {
      if (!e.is_array() || e.size() != 4 || !e[0].is_number_integer())
        throw std::runtime_error(path + ": learning curve entry " + e.dump() + " is not [epoch, loss, valid, test]");
      curve_.push_back({e[0].get<int64_t>(), number(e[1]), number(e[2]), number(e[3])});
    }
  }
  // Counts a run can reach; step_in_epoch is checked against the epoch's steps when run() knows them.
  for (const StateField& f : stateFields())
    if (const auto* count = std::get_if<int64_t Trainer::*>(&f.member); count && this->**count < 0)
      throw std::runtime_error(path + ": trainer state out of range: " + f.name + " " +
                               std::to_string(this->**count) + " is negative; the checkpoint cannot be used");
  if (bestEpoch_ > completedEpochs_)
    throw std::runtime_error(path + ": trainer state out of range: best_epoch " + std::to_string(bestEpoch_) +
                             " is past completed_epochs " + std::to_string(completedEpochs_) +
                             "; the checkpoint cannot be used");
  bestWeights_.clear();
  const auto named = model_.namedParameters();
  bool anyBest = false;
  for (const auto& [name, p] : named) anyBest = anyBest || ck.findParameter("best", name, p.shape());
  if (anyBest) {
    for (const auto& [name, p] : named) {
      const Tensor* t = ck.findParameter("best", name, p.shape());
      if (!t || t->shape() != p.value().shape() || t->dtype() != p.value().dtype())
        throw std::runtime_error(path + ": best weights incomplete or of the wrong shape at '" + name + "'");
      ck.requireFinite("best." + name);
      bestWeights_.push_back(t->clone());
    }
  }
  resumed_ = true;
  resumedFrom_ = path;
  progress_.line(prog_.name() + ": continuing " + path + " after epoch " + std::to_string(completedEpochs_) +
                 (stepInEpoch_ > 0 ? " and " + std::to_string(stepInEpoch_) + " step(s) of the next" : "") +
                 " (optimizer step " + std::to_string(opt_.stepCount()) + ")");
}

void Trainer::logRunStart(const nlohmann::json& what) {
  nlohmann::json j = what;
  j["program"] = prog_.name();
  j["config"] = config_.toJson();
  j["continued_from_epoch"] = completedEpochs_;
  log_.write({{"run", j}});
}

std::vector<std::string> Trainer::saveOnStop() const {
  std::vector<std::string> saved;
  if (!flags_.save.empty()) {
    save(flags_.save);
    saved.push_back(flags_.save);
  }
  if (!flags_.checkpointDir.empty()) saved.push_back(saveToCheckpointDir());
  return saved;
}

void Trainer::saveForStop(const std::string& why, std::string& where) const {
  (void)why;
  const std::vector<std::string> saved = saveOnStop();
  if (saved.empty()) {
    where = "nothing was saved (add --save FILE or --checkpoint-dir DIR to keep the state)";
  } else {
    where = "the state before this step is saved in " + saved[0] + (saved.size() > 1 ? " and " + saved[1] : "");
  }
}

void Trainer::applySchedule(int64_t step) {
  if (schedule_) schedule_->apply(opt_, flags_.lr, step);
  else opt_.setLr(flags_.lr);
}

void Trainer::checkGradients(std::vector<Tensor>& grads, double lv, const std::function<std::string()>& where) {
  GradNormResult g = flags_.clipNorm > 0 ? clipGradNorm(grads, flags_.clipNorm) : gradNorm(grads);
  if (!std::isfinite(g.norm)) stopOnNonFiniteGradient(g.firstNonFinite, lv, where);
  lastGradNorm_ = g.norm;
}

void Trainer::stopOnNonFiniteGradient(int64_t index, double lv, const std::function<std::string()>& where) {
  std::string name = index >= 0 ? model_.namedParameters()[static_cast<size_t>(index)].first : std::string("?");
  std::string saved;
  saveForStop("gradient", saved);
  throw std::runtime_error("training stopped: the gradient of '" + name + "' holds non-finite values at " + where() +
                           (std::isfinite(lv) ? " (loss " + num(lv) + ")" : std::string()) +
                           "; lower --lr or set --clip-norm; " + saved);
}

void Trainer::stopOnNonFiniteWeights(int64_t index, const std::function<std::string()>& where) const {
  throw std::runtime_error("training stopped at " + where() + ": the update made the weights of '" +
                           model_.namedParameters()[static_cast<size_t>(index)].first + "' non-finite (lr " +
                           num(opt_.lr()) + " is too high); nothing was saved after it");
}

void Trainer::afterUpdate(double lv, int64_t samples, const std::function<std::string()>& where, bool checkWeights) {
  // A finite gradient times a huge learning rate can still overflow a weight: stop before such weights are
  // used or saved (--save keeps whatever it held before).
  if (checkWeights)
    if (const int64_t bad = firstNonFiniteValue(params_); bad >= 0) stopOnNonFiniteWeights(bad, where);
  lossChecksum_.add(&lv, sizeof lv);
  epochLossSum_ += lv * static_cast<double>(samples);
  epochSamples_ += samples;
  samples_ += samples;
  ++stepInEpoch_;
  ++steps_;
  progress_.step(samples);
  ++runSteps_;
  if (flags_.timeBudgetMinutes > 0) {
    const double budget = flags_.timeBudgetMinutes * 60;
    const double used =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - runStart_).count() - runEvalSeconds_;
    // The schedule spans the budget: after a few steps the speed is known, and the run's total step count with
    // it. The estimate is renewed every kRecalibrationSteps from the speed of the steps since the last one, so a
    // slow start (a first epoch sharing the machine, caches filling) does not end the schedule early and leave
    // the rest of the budget at a learning rate of 0.
    constexpr int64_t kCalibrationSteps = 20, kRecalibrationSteps = 500;
    if (runSteps_ >= kCalibrationSteps && (!budgetCalibrated_ || runSteps_ - calibratedAtStep_ >= kRecalibrationSteps)) {
      const double perStep = budgetCalibrated_ ? (used - calibratedAtSeconds_) / static_cast<double>(runSteps_ - calibratedAtStep_)
                                               : used / static_cast<double>(runSteps_);
      budgetCalibrated_ = true;
      calibratedAtStep_ = runSteps_;
      calibratedAtSeconds_ = used;
      auto total = opt_.stepCount() + static_cast<int64_t>(std::max(0.0, budget - used) / std::max(perStep, 1e-9));
      // Under mpirun the ranks' clocks differ: rank 0's estimate sets everyone's schedule (the same learning
      // rates, so the same weights).
      if (ProcessGroup* g = prog_.processes().get(); isDistributed(g))
        total = static_cast<int64_t>(g->gatherDoubles(static_cast<double>(total), "the time budget's schedule")[0]);
      schedule_ = flags_.makeSchedule(total, spe_, &plateau_, metric_.higherIsBetter);
    }
    if (used >= budget) budgetSpent_ = true;
  }
}

void Trainer::afterRequest(int64_t stepBefore, const std::function<std::string()>& where) {
  bool stop = StopSignal::requested();
  if (ProcessGroup* g = prog_.processes().get(); isDistributed(g)) {
    // Every rank stops after the same request (a signal or a spent budget seen by one is seen by all): a rank
    // that went on alone would wait for the others at its next gradient exchange.
    const std::vector<double> seen = g->gatherDoubles((stop ? 1.0 : 0.0) + (budgetSpent_ ? 2.0 : 0.0), "the stop decision");
    for (double v : seen) {
      stop = stop || (static_cast<int>(v) & 1);
      budgetSpent_ = budgetSpent_ || (static_cast<int>(v) & 2);
    }
  }
  if (stop) {
    const std::vector<std::string> saved = saveOnStop();
    progress_.clear();
    // Under mpirun a rank may stop for a signal another rank received.
    const int sig = StopSignal::requested() ? StopSignal::signal() : SIGTERM;
    throw Interrupted(sig, std::string("interrupted by ") + signalName(sig) +
                          (StopSignal::requested() ? "" : " (on another MPI rank)") + " after " + where() + "; " +
                          (saved.empty() ? "nothing was saved (add --save FILE to keep the state)"
                                         : "the state is saved in " + saved[0] + " (continue with --load " + saved[0] +
                                               (flags_.checkpointDir.empty() ? ")" : " or --resume)")));
  }
  // Crash safety: a checkpoint every N steps, so a killed run loses at most N steps (--resume continues). A host
  // request of several updates checkpoints after it when it crossed a multiple of N.
  if (flags_.checkpointEvery > 0 && !flags_.checkpointDir.empty() &&
      opt_.stepCount() / flags_.checkpointEvery > stepBefore / flags_.checkpointEvery)
    saveToCheckpointDir();
}

bool Trainer::step(const std::function<Variable()>& forwardLoss, int64_t samples,
                   const std::function<std::string()>& describe) {
  const int64_t step = opt_.stepCount();
  // Dropout masks come from (seed, optimizer step, micro-batch): the step count is in the checkpoint, so a
  // continued run draws the masks an uninterrupted one would.
  ExecutionContext::current().setRandomKey({seed_, static_cast<uint64_t>(step), 0});
  applySchedule(step);
  opt_.zeroGrad();
  Variable loss = forwardLoss();
  const double lv = loss.value().item();
  auto where = [&] {
    return "epoch " + std::to_string(completedEpochs_ + 1) + ", step " + std::to_string(stepInEpoch_ + 1) +
           " of the epoch (optimizer step " + std::to_string(step + 1) + ")" +
           (describe ? ", on " + describe() : std::string());
  };
  if (!std::isfinite(lv)) {
    std::string saved;
    saveForStop("loss", saved);
    throw std::runtime_error("training stopped: the loss is " + num(lv) + " at " + where() +
                             "; check those inputs' targets or lower --lr; " + saved);
  }
  loss.backward();
  std::vector<Tensor> grads;
  for (const Variable& p : params_) grads.push_back(p.hasGrad() ? p.grad() : Tensor());
  checkGradients(grads, lv, where);
  opt_.step(grads);
  afterUpdate(lv, samples, where);
  afterRequest(step, where);
  return !budgetSpent_;
}

bool Trainer::step(DeviceProgram& program, const Batch& request, const std::function<std::string()>& describe) {
  const int64_t stepBefore = opt_.stepCount();
  program_ = &program;
  if (pendingLossScale_) {
    if (program.options().precision == Precision::FP16) program.setLossScaleState(*pendingLossScale_);
    pendingLossScale_.reset();
  }
  const bool single = program.options().microBatchesPerRequest() == 1;
  auto where = [&] {
    return "epoch " + std::to_string(completedEpochs_ + 1) + ", step " + std::to_string(stepInEpoch_ + 1) +
           " of the epoch (optimizer step " + std::to_string(opt_.stepCount() + 1) + ")" +
           (describe ? (single ? ", on " : ", in the host request of ") + describe() : std::string());
  };
  // Data goes one way: the device gets the seed (each micro-batch's dropout key derives from it, the optimizer
  // step and the micro-batch), the learning-rate schedule and the clipping norm, checks the gradients and the
  // weights itself, and reports every update; the updates are booked here, in order, once run() returns. So with
  // --time-budget the schedule is recalibrated between host requests only: a request's updates all use the
  // schedule it started with.
  RunArgs args;
  args.seed = seed_;
  args.baseLr = flags_.lr;
  args.schedule = schedule_.get();
  args.clipNorm = flags_.clipNorm;
  args.checkFinite = true;
  auto book = [&](const UpdateResult& u) {
    if (!u.skipped) lastGradNorm_ = u.gradNorm;
    afterUpdate(u.loss, u.samples, where, /*checkWeights=*/false);
  };
  try {
    lastRun_ = program.run(request, args);
  } catch (const RequestStopped& e) {
    // The updates before the one that stopped were applied: they count as they would have.
    for (const UpdateResult& u : e.completedUpdates()) book(u);
    if (const auto* g = dynamic_cast<const NonFiniteGradient*>(&e)) stopOnNonFiniteGradient(g->parameter(), NAN, where);
    if (const auto* w = dynamic_cast<const NonFiniteWeights*>(&e)) stopOnNonFiniteWeights(w->parameter(), where);
    const auto* l = dynamic_cast<const NonFiniteLoss*>(&e);
    if (!l) throw;
    std::string saved;
    saveForStop("loss", saved);
    throw std::runtime_error("training stopped: the loss is " + num(l->value()) + " at " + where() +
                             (single ? std::string() : " (" + l->where() + ")") +
                             "; check those inputs' targets or lower --lr; " + saved);
  }
  for (const UpdateResult& u : lastRun_.updateResults) book(u);
  padded_ += lastRun_.paddedMicroBatches;
  dropped_ += lastRun_.droppedMicroBatches;
  afterRequest(stepBefore, where);
  return !budgetSpent_;
}

void Trainer::withBestWeights(const std::function<void()>& fn) {
  if (bestWeights_.empty()) {
    fn();
    return;
  }
  auto swapAll = [&] {
    for (size_t i = 0; i < params_.size(); ++i) std::swap(params_[i].value(), bestWeights_[i]);
  };
  swapAll();
  try {
    fn();
  } catch (...) {
    swapAll();
    throw;
  }
  swapAll();
}

// The progress line of a finished epoch.
std::string Trainer::epochSummary(int64_t epoch, double valid, bool improved, double seconds, double rate) const {
  return "epoch " + std::to_string(epoch) +
         (flags_.epochs == TrainingFlags::kEpochsUntilBudget ? std::string() : "/" + std::to_string(flags_.epochs)) +
         "  loss " + num(lastLoss_, "%.5f") + "  valid " + metric_.name + " " + num(valid, "%.5f") +
         (improved ? " *" : "  (best " + num(bestValid_, "%.5f") + " at epoch " + std::to_string(bestEpoch_) + ")") +
         "  lr " + num(opt_.lr(), "%.3g") + "  " + num(seconds, "%.1f") + " s  " + num(rate, "%.0f") + " " + unit_ +
         "/s";
}

void Trainer::run(const Hooks& hooks) {
  const int64_t spe = hooks.stepsPerEpoch ? hooks.stepsPerEpoch() : 0;
  spe_ = spe;
  // A resumed epoch skips the step_in_epoch steps it already trained: more than the epoch has would train
  // nothing and still report a loss and a best epoch. Equal is a run stopped after the epoch's last step.
  if (resumed_ && spe > 0 && stepInEpoch_ > spe && completedEpochs_ < flags_.epochs)
    throw std::runtime_error(resumedFrom_ + ": trainer state out of range: step_in_epoch " +
                             std::to_string(stepInEpoch_) + " is more than the " + std::to_string(spe) +
                             " step(s) epoch " + std::to_string(completedEpochs_ + 1) +
                             " has on this data; the checkpoint cannot be used");
  schedule_ = flags_.makeSchedule(flags_.epochs * std::max<int64_t>(spe, 1), spe, &plateau_, metric_.higherIsBetter);
  runStart_ = std::chrono::steady_clock::now();
  runEvalSeconds_ = 0;
  runSteps_ = 0;
  budgetSpent_ = budgetCalibrated_ = false;
  const bool patienceSpent = flags_.earlyStopping > 0 && sinceImprovement_ >= flags_.earlyStopping;
  if (patienceSpent && completedEpochs_ < flags_.epochs)
    progress_.line(prog_.name() + ": no better validation " + metric_.name + " for " +
                   std::to_string(sinceImprovement_) + " epochs (--early-stopping " +
                   std::to_string(flags_.earlyStopping) + "): not training further");
  for (int64_t epoch = completedEpochs_; epoch < flags_.epochs && !patienceSpent && !budgetSpent_; ++epoch) {
    progress_.startEpoch(epoch + 1, flags_.epochs, spe);
    const int64_t skip = stepInEpoch_;
    if (skip == 0) {
      epochLossSum_ = 0;
      epochSamples_ = 0;
    }
    const int64_t samplesBefore = samples_;
    Stopwatch sw;
    hooks.trainEpoch(epoch, skip);
    const double sec = sw.ms() / 1000;
    trainSeconds_ += sec;
    lastLoss_ = epochSamples_ > 0 ? epochLossSum_ / static_cast<double>(epochSamples_) : NAN;
    completedEpochs_ = epoch + 1;
    stepInEpoch_ = 0;

    sw.reset();
    Evaluation v = hooks.validate();
    nlohmann::json line = {{"epoch", epoch + 1}, {"loss", lastLoss_}, {"valid_" + metric_.name, v.metric}};
    const bool improved = better(v.metric, bestValid_);
    if (improved) {
      bestEpoch_ = epoch + 1;
      bestValid_ = v.metric;
      bestValidDetails_ = v.details;
      sinceImprovement_ = 0;
      bestWeights_.resize(params_.size());
      for (size_t i = 0; i < params_.size(); ++i) bestWeights_[i] = params_[i].value().clone();
      bestTest_ = nlohmann::json::object();  // the new best's test metric is taken after the last epoch
    } else {
      ++sinceImprovement_;
    }
    // The next epoch's rate (--schedule plateau), from this one's validation metric.
    if (auto* plateau = dynamic_cast<PlateauLr*>(schedule_.get())) plateau->observe(v.metric);
    curve_.push_back({epoch + 1, lastLoss_, v.metric, NAN});
    if (hooks.test && flags_.testEveryEpoch) {
      Evaluation t = hooks.test();
      line["test_" + metric_.name] = t.metric;
      curve_.back().test = t.metric;
      if (improved) bestTest_ = {{"metric", t.metric}, {"details", t.details}};
    }
    const double evalSec = sw.ms() / 1000;
    evalSeconds_ += evalSec;
    runEvalSeconds_ += evalSec;
    const double rate = sec > 0 ? static_cast<double>(samples_ - samplesBefore) / sec : 0.0;
    line["valid"] = v.details;
    line["best_epoch"] = bestEpoch_;
    line["lr"] = opt_.lr();
    line["grad_norm"] = lastGradNorm_;
    line["seconds"] = sec;
    line["eval_seconds"] = evalSec;
    line["samples_per_s"] = rate;
    log_.write(line);
    progress_.endEpoch(epochSummary(epoch + 1, v.metric, improved, sec, rate));
    if (!flags_.checkpointDir.empty())
      saveToCheckpointDir();
    if (budgetSpent_) {
      progress_.line("time budget of " + num(flags_.timeBudgetMinutes, "%g") + " min spent in epoch " +
                     std::to_string(epoch + 1) + " (it counts as done); the best was epoch " +
                     std::to_string(bestEpoch_));
      break;
    }
    if (flags_.earlyStopping > 0 && sinceImprovement_ >= flags_.earlyStopping) {
      stoppedEarly_ = true;
      progress_.line("early stopping: no better validation " + metric_.name + " in " +
                     std::to_string(sinceImprovement_) + " epochs; the best was epoch " + std::to_string(bestEpoch_));
      break;
    }
  }
  // The test metric of the best epoch, once, on its weights (OGB's protocol), rather than at every improvement:
  // on PCQM4Mv2-sized sets each test pass costs as much as a validation pass. The same weights give the same
  // bits as an evaluation right after that epoch did.
  if (hooks.test && bestEpoch_ > 0 && !bestTest_.contains("metric")) {
    Stopwatch sw;
    withBestWeights([&] {
      Evaluation t = hooks.test();
      bestTest_ = {{"metric", t.metric}, {"details", t.details}};
    });
    evalSeconds_ += sw.ms() / 1000;
  }
  if (bestEpoch_ == 0 && std::isnan(bestValid_) && hooks.validate) {
    // Nothing validated yet (--epochs 0 on fresh weights, or a metric that was NaN every epoch): report the
    // current weights.
    Evaluation v = hooks.validate();
    bestValid_ = v.metric;
    bestValidDetails_ = v.details;
    if (hooks.test) {
      Evaluation t = hooks.test();
      bestTest_ = {{"metric", t.metric}, {"details", t.details}};
    }
  }
  if (!flags_.save.empty()) {
    save(flags_.save);
    progress_.line(prog_.name() + ": saved " + flags_.save);
  }
}

nlohmann::json Trainer::summary() const {
  const std::string hex = lossChecksum_.hex();
  nlohmann::json j = {{"epochs", completedEpochs_},
                      {"best_epoch", bestEpoch_},
                      {"metric", metric_.name},
                      {"valid_" + metric_.name, bestValid_},
                      {"valid_details", bestValidDetails_},
                      {"final_loss", lastLoss_},
                      {"steps", opt_.stepCount()},
                      {"train_seconds", trainSeconds_},
                      {"eval_seconds", evalSeconds_},
                      {"train_samples_per_s", trainSeconds_ > 0 ? static_cast<double>(samples_) / trainSeconds_ : 0.0},
                      {"stopped_early", stoppedEarly_},
                      {"stopped_by_time_budget", budgetSpent_},
                      {"loss_checksum", hex}};
  if (bestTest_.contains("metric")) {
    j["test_" + metric_.name] = bestTest_["metric"];
    j["test_details"] = bestTest_["details"];
  }
  return j;
}

}  // namespace gnn::app
