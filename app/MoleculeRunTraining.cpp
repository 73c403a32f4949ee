#include "app/MoleculeRun.h"

#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gnn/ops/GaussianNllLoss.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"

namespace gnn::app::detail {

// The model, its optimizer and the Trainer (continuing the checkpoint, if any), and the device program that
// runs every training step: the model whole on this machine (cpu), or replicas, pipeline stages and
// micro-batches on simulated IPUs (ipu), compiled once for the training batch's fixed shapes.
void MoleculeRun::buildModel() {
  model_ = makeMoleculeModel(spec_, tf_.seed);
  if (df_.simulated()) useStaticShapes(*model_);
  // --init-from: the encoder from another run (a new run only); --freeze-encoder: the head alone is trained.
  const std::vector<Variable> trained = s_.transfer.prepare(*model_, spec_, tf_.continuing(), prog_, tf_.quiet);
  opt_ = tf_.makeOptimizer({{trained, tf_.weightDecay}});
  metricName_ = metricName(metrics_.front());
  trainer_ = std::make_unique<Trainer>(prog_, tf_, *model_, *opt_, config_,
                                       MetricSpec{metricName_, higherIsBetter(metrics_.front())}, "molecules");
  if (ck_) trainer_->resume(*ck_, ckPath_);
  if (!tf_.quiet)
    std::cerr << prog_.name() << ": " << md_.size << " molecules (" << md_.split.kind << " split "
              << md_.split.train.size() << "/" << md_.split.valid.size() << "/" << md_.split.test.size() << "), "
              << moleculeTaskName(task_) << " of " << tasks_ << " target(s), "
              << spec_.describe() << " (" << model_->numParameters() << " parameters), batches of "
              << fixed_.numNodes << " atoms, " << fixed_.numEdges << " directed bonds, " << fixed_.numGraphs
              << " graph slots, " << numThreads() << " thread(s)\n";
  trainer_->logRunStart({{"data", mo_.path}, {"split", md_.split.toJson()}, {"molecules", md_.size}});
  trainLoader_->startEpoch(0);
  const Batch shapes = trainLoader_->collateBatch(0);
  program_ = df_.compile(prog_, *model_, lossFunction(), opt_.get(), shapes, *trainLoader_, tf_.quiet);
  if (!df_.trace.empty() || !df_.traceSvg.empty()) program_->enableTrace(df_.traceRequests);
  if (!tf_.quiet && df_.simulated())
    std::cerr << prog_.name() << ": " << df_.options.describe(static_cast<int64_t>(program_->stageNames().size()))
              << " on " << program_->numIpus() << " simulated IPU(s); one weight update = " << s_.batchSize
              << " graph slots x " << df_.replicas << " replica(s) x " << df_.gradAccum
              << " micro-batch(es), one host request = " << df_.microBatchesPerRequest() << " micro-batches\n";
  if (!tf_.quiet && isDistributed(prog_.processes().get()))
    std::cerr << prog_.name() << ": the replicas spread over " << prog_.processes()->size() << " MPI processes ("
              << prog_.processes()->localSize() << " on this host, " << numThreads()
              << " thread(s) each); this rank runs " << df_.options.shard(true).describe() << "\n";
}

LossFn MoleculeRun::lossFunction() {
  return {[this](const Variable& pred, const Batch& b) {
            if (classification_) return bceWithLogits(pred, b.y, b.yMask);
            if (task_ == MoleculeTask::RegressionMve) return gaussianNllLoss(pred, scaling_.standardize(b.y), b.yMask);
            return regressionLoss() == "mse" ? mseLoss(pred, scaling_.standardize(b.y), b.yMask)
                                    : l1Loss(pred, scaling_.standardize(b.y), b.yMask);
          },
          {}};
}

void MoleculeRun::train() {
  Trainer& trainer = *trainer_;
  Trainer::Hooks hooks;
  hooks.stepsPerEpoch = [&] {
    trainLoader_->startEpoch(trainer.completedEpochs());
    return program_->updatesFor(trainLoader_->numBatches());
  };
  hooks.trainEpoch = [&](int64_t epoch, int64_t skip) {
    // The profile covers the training steps only, not the evaluations between epochs.
    std::optional<ObserverScope> profiling;
    if (s_.profile) profiling.emplace(profiler_);
    trainLoader_->startEpoch(epoch);
    for (Batch b; trainLoader_->nextRequest(b);) {
      if (skip > 0) {
        // Updates already trained before an interrupt (interrupts come between host requests).
        skip -= program_->updatesFor(trainLoader_->lastRequestMicroBatches());
        continue;
      }
      const bool more = trainer.step(*program_, b, [&] {
        std::vector<int64_t> pos;
        for (int64_t g : b.graphIndex) pos.push_back(md_.split.train[static_cast<size_t>(g)]);
        return describeMolecules(md_, pos);
      });
      steps_ += trainer.lastRun().updates;
      if (!more) break;  // --time-budget spent
    }
  };
  hooks.validate = [&] { return evaluate(md_.split.valid, "valid"); };
  if (!md_.split.test.empty()) hooks.test = [&] { return evaluate(md_.split.test, "test"); };
  if (curves_.empty()) epochsBeforeRun_ = static_cast<int64_t>(trainer.curve().size());
  trainer.run(hooks);
  // The learning curve (--report-html): the trainer's, with the epochs before a --load.
  LearningCurve curve{"seed " + std::to_string(tf_.seed + curves_.size()), {}};
  for (const TrainedEpoch& e : trainer.curve()) curve.epochs.push_back({e.epoch, e.loss, e.valid, e.test});
  curves_.push_back(std::move(curve));
  if (s_.profile && prog_.primary()) {
    std::cerr << "per-op profile of " << steps_ << " training steps (forward and backward; optimizer not included)\n";
    profiler_.print(std::cerr);
    out_["profile"] = profiler_.json();
    out_["profile_steps"] = steps_;
  }
}

// --ensemble-size N: members 1 .. N-1 trained as member 0 was (the same split, batches and flags; Chemprop v2
// also keeps the data order and changes the initialisation per member), from seeds --seed + k, each through
// train() with its model, optimizer, trainer and device program in place of member 0's.
void MoleculeRun::trainEnsemble() {
  if (s_.ensembleSize <= 1) {
    // One model with an uncertainty (mean-variance estimation) or a calibration of its probabilities: scored,
    // calibrated on validation and kept in the checkpoint as an ensemble of one.
    if (task_ == MoleculeTask::RegressionMve || s_.uncertainty == "mc-dropout" ||
        (classification_ && (s_.calibration == "platt" || s_.calibration == "isotonic")))
      evaluateEnsemble();
    return;
  }
  auto swapIn = [this](Member& m) {
    std::swap(model_, m.model);
    std::swap(opt_, m.opt);
    std::swap(trainer_, m.trainer);
    std::swap(program_, m.program);
  };
  for (int64_t k = 1; k < s_.ensembleSize; ++k) {
    Member m;
    m.flags = std::make_unique<TrainingFlags>(tf_);
    m.flags->seed = tf_.seed + static_cast<uint64_t>(k);
    m.flags->save.clear();  // the ensemble's checkpoint is written once every member is trained
    m.flags->checkpointDir.clear();
    m.flags->log.clear();
    m.model = makeMoleculeModel(spec_, m.flags->seed);
    if (df_.simulated()) useStaticShapes(*m.model);
    const std::vector<Variable> trained = s_.transfer.prepare(*m.model, spec_, false, prog_, /*quiet=*/true);
    m.opt = m.flags->makeOptimizer({{trained, tf_.weightDecay}});
    m.trainer =
        std::make_unique<Trainer>(prog_, *m.flags, *m.model, *m.opt, config_,
                                  MetricSpec{metricName_, higherIsBetter(metrics_.front())}, "molecules");
    trainLoader_->startEpoch(0);
    m.program = df_.compile(prog_, *m.model, lossFunction(), m.opt.get(), trainLoader_->collateBatch(0),
                            *trainLoader_, /*quiet=*/true);
    if (!tf_.quiet)
      std::cerr << prog_.name() << ": ensemble member " << k + 1 << " of " << s_.ensembleSize << " (seed "
                << m.flags->seed << ")\n";
    swapIn(m);
    try {
      train();
    } catch (...) {
      swapIn(m);
      throw;
    }
    swapIn(m);
    members_.push_back(std::move(m));
  }
  evaluateEnsemble();
}

}  // namespace gnn::app::detail
