// ExecutionProgram's weight update: the tasks of one update on the worker pool, the replicas' gradients reduced
// (across processes: exchanged first), fp16 loss scaling, the gradient check and clipping RunArgs asks for, and
// the optimizer (with replicated tensor sharding: each replica its range, then the all-gather).
#include <cmath>

#include "device/CompileCapture.h"
#include "device/ExecutionProgram.h"
#include "device/ExecutionProgramParts.h"
#include "device/GradientExchange.h"
#include "device/GradientReduction.h"
#include "device/ProcessExchange.h"
#include "device/TaskScheduler.h"
#include "gnn/optim/GradNorm.h"

namespace gnn {

UpdateResult ExecutionProgram::runUpdate(Replicas& mbs, int64_t iteration, int64_t step, const RunArgs& args,
                                         RunResult& result) {
  const int64_t G = static_cast<int64_t>(mbs.front().size());
  const PipelineSchedule schedule = G == accumulation_ ? schedule_
                                    : training_ ? PipelineSchedule::training(stages_, G, options_.executionStrategy)
                                                : PipelineSchedule::inference(stages_, G, options_.executionStrategy);
  double totalWeight = 0;
  for (const auto& rep : mbs)
    for (const auto& m : rep) totalWeight += m.padding ? 0.0 : m.weight;
  for (auto& ip : ipus_) {
    ip->sink.clear();
    ip->ctx.resetGradientOverflows();
  }
  syncReplicas();
  StageSlots slots(replicas_, stages_, G);
  const std::exception_ptr error = runLanes(
      lanesOf(schedule, firstLocalReplica_, localReplicas_), workers_,
      [&](int64_t r, const ScheduledTask& t) { return slots.ready(r, t); },
      [&](int64_t r, const ScheduledTask& t) { runTask(r, t, slots, mbs, iteration, step, args.seed, totalWeight); });
  int64_t overflows = 0;
  std::vector<Tensor> grads = reduceUpdateGradients(mbs, error, iteration, overflows);
  UpdateResult update;
  if (training_) applyUpdate(grads, overflows, iteration, args, result, update);
  return update;
}

std::vector<Tensor> ExecutionProgram::reduceUpdateGradients(Replicas& mbs, std::exception_ptr error,
                                                            int64_t iteration, int64_t& overflows) {
  const double reduceStart = now();
  const size_t params = masterParams_.size();
  auto localGrad = [&](int64_t r, int64_t s, size_t i) { return ipu(r, s).sink.grad(replicaParams(r)[i]); };
  const uint64_t exchange = exchanges_;
  if (distributed()) {
    for (auto& ip : ipus_) overflows += ip->ctx.gradientOverflows();
    try {
      exchangeUpdate(*options_.processes, ReplicaLayout{replicas_, stages_, shard_}, training_, exchanges_++, mbs,
                     error, overflows);
    } catch (...) {
      for (auto& ip : ipus_) ip->sink.clear();
      throw;
    }
  }
  if (error) {
    for (auto& ip : ipus_) ip->sink.clear();
    std::rethrow_exception(error);
  }
  if (!training_) return {};
  // Across processes, GradientExchange sums every replica's gradients in the same order as reduceGradients: the
  // sum is the same, bit for bit, wherever each replica ran.
  std::vector<Tensor> grads;
  if (distributed()) {
    std::vector<std::vector<std::vector<Tensor>>> mine(static_cast<size_t>(localReplicas_));
    for (int64_t r = 0; r < localReplicas_; ++r)
      for (int64_t s = 0; s < stages_; ++s) {
        std::vector<Tensor>& stage = mine[static_cast<size_t>(r)].emplace_back(params);
        for (size_t i = 0; i < params; ++i) stage[i] = localGrad(firstLocalReplica_ + r, s, i);
      }
    try {
      grads = gradientExchange_->sum(mine, firstLocalReplica_, "the gradients of update " + std::to_string(exchange));
      ++gradientExchanges_;
    } catch (...) {
      for (auto& ip : ipus_) ip->sink.clear();
      throw;
    }
  } else {
    grads = reduceGradients(replicas_, stages_, params, localGrad);
  }
  const std::vector<Variable>& first = replicaParams_.front();
  for (size_t i = 0; i < params; ++i)
    for (int64_t s = 0; s < stages_ && (*ownerStage_)[i] < 0; ++s)
      if (ipu(firstLocalReplica_, s).sink.grad(first[i]).defined()) (*ownerStage_)[i] = s;
  if (capturing_ && iteration == 0)
    recordStageParameters(record_, first,
                          [&](int64_t s) -> const GradientSink& { return ipu(firstLocalReplica_, s).sink; });
  // fp16 overflow: a gradient value that saturated (or was NaN) when rounded to half on any IPU (of any process:
  // the exchange summed them), or a reduced gradient that is not finite, before unscaling.
  for (auto& ip : ipus_) {
    if (!distributed()) overflows += ip->ctx.gradientOverflows();
    ip->ctx.resetGradientOverflows();
    ip->sink.clear();
  }
  if (lossScaler_.active()) overflows += countNonFinite(grads);
  const double reduceEnd = now();
  allReduceSeconds_ += reduceEnd - reduceStart;
  if (replicas_ > 1) recordOnEveryIpu(TaskKind::AllReduce, iteration, reduceStart, reduceEnd);
  return grads;
}

void ExecutionProgram::applyUpdate(std::vector<Tensor>& grads, int64_t overflows, int64_t iteration,
                                   const RunArgs& args, RunResult& result, UpdateResult& update) {
  if (lossScaler_.skipUpdate(overflows)) {
    ++result.skippedUpdates;
    update.skipped = true;
    return;
  }
  lossScaler_.unscale(grads);
  if (args.clipNorm > 0 || args.checkFinite) {
    const GradNormResult g = args.clipNorm > 0 ? clipGradNorm(grads, args.clipNorm) : gradNorm(grads);
    if (args.checkFinite && !std::isfinite(g.norm)) throw NonFiniteGradient(g.firstNonFinite, iteration);
    update.gradNorm = g.norm;
  }
  const double optStart = now();
  if (opt_->numShards() > 0) {
    // Replicated tensor sharding: replica r updates its range of the flattened parameters from its shard of
    // the state, into its own weights (fp16: into the fp32 master, then rounded to every replica); then every
    // range is all-gathered into every replica's weights.
    std::vector<std::vector<Variable>> owners;
    for (int64_t r = 0; r < replicas_; ++r) owners.push_back(fp16_ ? masterParams_ : replicaParams(r));
    opt_->stepSharded(grads, owners);
    if (!fp16_) allGatherShards(replicaParams_, Optimizer::balancedRanges(opt_->numElements(), replicas_));
  } else {
    opt_->step(grads);
  }
  lossScaler_.afterApplied();
  // Every replica applies the same update: the master's new weights are copied to the others.
  syncReplicas();
  recordOnEveryIpu(TaskKind::Optimizer, iteration, optStart, now());
  ++result.updates;
}

}  // namespace gnn
