#include "device/WeightUpdate.h"

#include <cmath>
#include <string>

#include "device/CompileCapture.h"
#include "device/ExecutionProgramParts.h"
#include "device/GradientExchange.h"
#include "device/GradientReduction.h"
#include "device/ProcessExchange.h"
#include "gnn/optim/GradNorm.h"

namespace gnn {

WeightUpdate::WeightUpdate(Program program)
    : p_(std::move(program)),
      lossScaler_(p_.options, p_.training),
      ownerStage_(std::make_shared<std::vector<int64_t>>(p_.weights.master().size(), -1)) {
  if (p_.training && distributed()) gradientExchange_ = std::make_unique<GradientExchange>(*p_.options.processes);
}

WeightUpdate::~WeightUpdate() = default;

bool WeightUpdate::distributed() const { return isDistributed(p_.options.processes.get()); }

IpuRuntime& WeightUpdate::ipu(int64_t replica, int64_t stage) const {
  return *p_.ipus[static_cast<size_t>(p_.layout.local(replica, stage))];
}

void WeightUpdate::clearSinks() {
  for (auto& ip : p_.ipus) ip->sink.clear();
}

DeviceProgram::ExchangeBytes WeightUpdate::exchangeBytes() const {
  DeviceProgram::ExchangeBytes b;
  if (!gradientExchange_) return b;
  b.sent = gradientExchange_->totalBytesSent();
  b.received = gradientExchange_->totalBytesReceived();
  b.updates = gradientExchanges_;
  b.gradient = p_.weights.bytes();
  return b;
}

std::vector<Tensor> WeightUpdate::reduce(std::vector<std::vector<MicroBatchRun>>& mbs, std::exception_ptr error,
                                         int64_t iteration, CompileRecord* capture, int64_t& overflows) {
  const double reduceStart = p_.now();
  const IpuLayout& layout = p_.layout;
  const uint64_t exchange = exchanges_;
  if (distributed()) {
    for (auto& ip : p_.ipus) overflows += ip->ctx.gradientOverflows();
    try {
      exchangeUpdate(*p_.options.processes, ReplicaLayout{p_.replicas, layout.stages, p_.shard},
                     p_.training, exchanges_++, mbs, error, overflows);
    } catch (...) {
      clearSinks();
      throw;
    }
  }
  if (error) {
    clearSinks();
    std::rethrow_exception(error);
  }
  if (!p_.training) return {};
  std::vector<Tensor> grads = sumGradients(exchange);
  const std::vector<Variable>& first = p_.weights.params(0);
  auto sinkOf = [&](int64_t s) -> const GradientSink& { return ipu(layout.firstLocalReplica, s).sink; };
  for (size_t i = 0; i < first.size(); ++i)
    for (int64_t s = 0; s < layout.stages && (*ownerStage_)[i] < 0; ++s)
      if (sinkOf(s).grad(first[i]).defined()) (*ownerStage_)[i] = s;
  if (capture) recordStageParameters(*capture, first, sinkOf);
  // fp16 overflow: a gradient value that saturated (or was NaN) when rounded to half on any IPU (of any process:
  // the exchange summed them), or a reduced gradient that is not finite, before unscaling.
  for (auto& ip : p_.ipus) {
    if (!distributed()) overflows += ip->ctx.gradientOverflows();
    ip->ctx.resetGradientOverflows();
    ip->sink.clear();
  }
  if (lossScaler_.active()) overflows += countNonFinite(grads);
  const double reduceEnd = p_.now();
  allReduceSeconds_ += reduceEnd - reduceStart;
  if (p_.replicas > 1) p_.onEveryIpu(TaskKind::AllReduce, iteration, reduceStart, reduceEnd);
  return grads;
}

// The replicas' gradients summed (replica, then stage): across processes by the gradient exchange, in the same
// order as reduceGradients, so the sum is the same, bit for bit, wherever each replica ran.
std::vector<Tensor> WeightUpdate::sumGradients(uint64_t exchange) {
  const IpuLayout& layout = p_.layout;
  const size_t params = p_.weights.master().size();
  auto localGrad = [&](int64_t r, int64_t s, size_t i) {
    return ipu(r, s).sink.grad(p_.weights.params(layout.localReplica(r))[i]);
  };
  if (!distributed()) return reduceGradients(p_.replicas, layout.stages, params, localGrad);
  std::vector<std::vector<std::vector<Tensor>>> mine(static_cast<size_t>(layout.localReplicas));
  for (int64_t r = 0; r < layout.localReplicas; ++r)
    for (int64_t s = 0; s < layout.stages; ++s) {
      std::vector<Tensor>& stage = mine[static_cast<size_t>(r)].emplace_back(params);
      for (size_t i = 0; i < params; ++i) stage[i] = localGrad(layout.firstLocalReplica + r, s, i);
    }
  try {
    std::vector<Tensor> grads =
        gradientExchange_->sum(mine, layout.firstLocalReplica, "the gradients of update " + std::to_string(exchange));
    ++gradientExchanges_;
    return grads;
  } catch (...) {
    clearSinks();
    throw;
  }
}

void WeightUpdate::apply(std::vector<Tensor>& grads, int64_t overflows, int64_t iteration, const RunArgs& args,
                         RunResult& result, UpdateResult& update) {
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
  const double optStart = p_.now();
  Optimizer& opt = *p_.optimizer;
  if (opt.numShards() > 0) {
    // Replicated tensor sharding: replica r updates its range of the flattened parameters from its shard of
    // the state, into its own weights (fp16: into the fp32 master, then rounded to every replica); then every
    // range is all-gathered into every replica's weights.
    const bool fp16 = p_.options.precision == Precision::FP16;
    std::vector<std::vector<Variable>> owners;
    for (int64_t r = 0; r < p_.replicas; ++r)
      owners.push_back(fp16 ? p_.weights.master() : p_.weights.params(p_.layout.localReplica(r)));
    opt.stepSharded(grads, owners);
    if (!fp16) allGatherShards(p_.weights.params(), Optimizer::balancedRanges(opt.numElements(), p_.replicas));
  } else {
    opt.step(grads);
  }
  lossScaler_.afterApplied();
  // Every replica applies the same update: the master's new weights are copied to the others.
  p_.weights.sync();
  p_.onEveryIpu(TaskKind::Optimizer, iteration, optStart, p_.now());
  ++result.updates;
}

}  // namespace gnn
