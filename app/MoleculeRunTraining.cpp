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

// Member k's model, optimizer and Trainer: member 0 with the run's flags, the others with their own (seed
// --seed + k; the ensemble's checkpoint is written once every member is trained, nothing on their own).
MoleculeRun::Member MoleculeRun::makeMember(int64_t k) {
  Member m;
  if (k > 0) {
    m.flags = std::make_unique<TrainingFlags>(tf_);
    m.flags->seed = tf_.seed + static_cast<uint64_t>(k);
    m.flags->save.clear();
    m.flags->checkpointDir.clear();
    m.flags->log.clear();
  }
  const TrainingFlags& f = k > 0 ? *m.flags : tf_;
  m.model = makeMoleculeModel(spec_, f.seed);
  if (df_.simulated()) useStaticShapes(*m.model);
  // --init-from: the encoder from another run (a new run only); --freeze-encoder: the head alone is trained.
  const std::vector<Variable> trained =
      s_.transfer.prepare(*m.model, spec_, k == 0 && tf_.continuing(), prog_, k == 0 ? tf_.quiet : true);
  m.opt = f.makeOptimizer({{trained, tf_.weightDecay}});
  m.trainer = std::make_unique<Trainer>(prog_, f, *m.model, *m.opt, config_,
                                        MetricSpec{metricName_, higherIsBetter(metrics_.front())}, "molecules");
  return m;
}

// Member 0 (continuing the checkpoint, if any), and the device program that runs every training step: the
// model whole on this machine (cpu), or replicas, pipeline stages and micro-batches on simulated IPUs (ipu),
// compiled once for the training batch's fixed shapes.
void MoleculeRun::buildModel() {
  metricName_ = metricName(metrics_.front());
  members_.clear();
  current_ = 0;
  members_.push_back(makeMember(0));
  Member& m = primary();
  if (ck_) m.trainer->resume(*ck_, ckPath_);
  if (!tf_.quiet)
    std::cerr << prog_.name() << ": " << md_.size << " molecules (" << md_.split.kind << " split "
              << md_.split.train.size() << "/" << md_.split.valid.size() << "/" << md_.split.test.size() << "), "
              << moleculeTaskName(task_) << " of " << tasks_ << " target(s), "
              << spec_.describe() << " (" << m.model->numParameters() << " parameters), batches of "
              << fixed_.numNodes << " atoms, " << fixed_.numEdges << " directed bonds, " << fixed_.numGraphs
              << " graph slots, " << numThreads() << " thread(s)\n";
  m.trainer->logRunStart({{"data", mo_.path}, {"split", md_.split.toJson()}, {"molecules", md_.size}});
  trainLoader_->startEpoch(0);
  const Batch shapes = trainLoader_->collateBatch(0);
  m.program = df_.compile(prog_, *m.model, lossFunction(), m.opt.get(), shapes, *trainLoader_, tf_.quiet);
  if (!df_.trace.empty() || !df_.traceSvg.empty()) m.program->enableTrace(df_.traceRequests);
  if (!tf_.quiet && df_.simulated())
    std::cerr << prog_.name() << ": " << df_.options.describe(static_cast<int64_t>(m.program->stageNames().size()))
              << " on " << m.program->numIpus() << " simulated IPU(s); one weight update = " << s_.batchSize
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

// The current member's training; its evaluations between epochs add to `inference`. Returns its learning curve
// (--report-html): the trainer's, with the epochs before a --load.
LearningCurve MoleculeRun::train(InferenceTime& inference) {
  Trainer& trainer = *current().trainer;
  DeviceProgram& program = *current().program;
  Trainer::Hooks hooks;
  hooks.stepsPerEpoch = [&] {
    trainLoader_->startEpoch(trainer.completedEpochs());
    return program.updatesFor(trainLoader_->numBatches());
  };
  hooks.trainEpoch = [&](int64_t epoch, int64_t skip) {
    // The profile covers the training steps only, not the evaluations between epochs.
    std::optional<ObserverScope> profiling;
    if (s_.profile) profiling.emplace(profiler_);
    trainLoader_->startEpoch(epoch);
    for (Batch b; trainLoader_->nextRequest(b);) {
      if (skip > 0) {
        // Updates already trained before an interrupt (interrupts come between host requests).
        skip -= program.updatesFor(trainLoader_->lastRequestMicroBatches());
        continue;
      }
      const bool more = trainer.step(program, b, [&] {
        std::vector<int64_t> pos;
        for (int64_t g : b.graphIndex) pos.push_back(md_.split.train[static_cast<size_t>(g)]);
        return describeMolecules(md_, pos);
      });
      steps_ += trainer.lastRun().updates;
      if (!more) break;  // --time-budget spent
    }
  };
  hooks.validate = [&] { return evaluate(md_.split.valid, "valid", inference); };
  if (!md_.split.test.empty()) hooks.test = [&] { return evaluate(md_.split.test, "test", inference); };
  trainer.run(hooks);
  LearningCurve curve{"seed " + std::to_string(tf_.seed + current_), {}};
  for (const TrainedEpoch& e : trainer.curve()) curve.epochs.push_back({e.epoch, e.loss, e.valid, e.test});
  if (s_.profile && prog_.primary()) {
    std::cerr << "per-op profile of " << steps_ << " training steps (forward and backward; optimizer not included)\n";
    profiler_.print(std::cerr);
  }
  return curve;
}

// Member 0, then with --ensemble-size N members 1 .. N-1, trained as member 0 was (the same split, batches and
// flags; Chemprop v2 also keeps the data order and changes the initialisation per member), from seeds --seed + k,
// each through train() as the current member.
Training MoleculeRun::trainMembers() {
  Training t;
  t.epochsBeforeRun = static_cast<int64_t>(primary().trainer->curve().size());
  t.curves.push_back(train(t.inference));
  for (int64_t k = 1; k < s_.ensembleSize; ++k) {
    members_.push_back(makeMember(k));
    Member& m = members_.back();
    trainLoader_->startEpoch(0);
    m.program = df_.compile(prog_, *m.model, lossFunction(), m.opt.get(), trainLoader_->collateBatch(0),
                            *trainLoader_, /*quiet=*/true);
    if (!tf_.quiet)
      std::cerr << prog_.name() << ": ensemble member " << k + 1 << " of " << s_.ensembleSize << " (seed "
                << m.flags->seed << ")\n";
    current_ = members_.size() - 1;
    try {
      t.curves.push_back(train(t.inference));
    } catch (...) {
      // A member whose training stopped is no member: member 0 is current again, as for the report.
      current_ = 0;
      members_.pop_back();
      throw;
    }
    current_ = 0;
  }
  return t;
}

// Whether the models are scored as an ensemble (evaluateEnsemble): N members of --ensemble-size, or one model
// with an uncertainty (mean-variance estimation, MC dropout) or a calibration of its probabilities, scored,
// calibrated on validation and kept in the checkpoint as an ensemble of one.
bool MoleculeRun::scoresAnEnsemble() const {
  return s_.ensembleSize > 1 || task_ == MoleculeTask::RegressionMve || s_.uncertainty == "mc-dropout" ||
         (classification_ && (s_.calibration == "platt" || s_.calibration == "isotonic"));
}

}  // namespace gnn::app::detail
