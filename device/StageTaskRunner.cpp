#include "device/StageTaskRunner.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "device/CompileCapture.h"
#include "device/StageTask.h"
#include "gnn/system/Check.h"

namespace gnn {

// One task as it runs: its replica's stage's runtime and model, its micro-batch, its trace slice so far.
struct StageTaskRunner::Task {
  int64_t replica, stage, microBatch;
  const ScheduledTask& scheduled;
  IpuRuntime& ipu;
  BlockModel& model;
  MicroBatchRun& m;
  size_t first, last;  // the stage's blocks
  bool capture;
  TaskRecord record;
  Recorder rec;
  double start;
};

StageTaskRunner::StageTaskRunner(const StageTaskProgram& program, const UpdateTasks& update,
                                 StageTaskReports& reports, int64_t replicas)
    : p_(program),
      u_(update),
      reports_(reports),
      slots_(replicas, program.layout.stages, static_cast<int64_t>(update.microBatches.front().size())) {}

void StageTaskRunner::run(int64_t r, const ScheduledTask& t) {
  const IpuLayout& layout = p_.layout;
  IpuRuntime& ip = *p_.ipus[static_cast<size_t>(layout.local(r, t.stage))];
  ContextScope use(ip.ctx);
  const auto& blocks = p_.blocks[static_cast<size_t>(t.stage)];
  Task k{r,
         t.stage,
         t.microBatch,
         t,
         ip,
         *p_.models[static_cast<size_t>(layout.localReplica(r))],
         u_.microBatches[static_cast<size_t>(r)][static_cast<size_t>(t.microBatch)],
         static_cast<size_t>(blocks.first),
         static_cast<size_t>(blocks.second),
         u_.capture && r == layout.firstLocalReplica && t.microBatch == 0,
         TaskRecord(),
         Recorder(),
         reports_.now()};
  k.rec.stage = t.stage;
  k.rec.next = ip.ctx.observer();
  k.record.ipu = layout.track(r, t.stage);
  k.record.replica = r;
  k.record.stage = t.stage;
  k.record.request = u_.request;
  k.record.iteration = u_.iteration;
  k.record.microBatch = t.microBatch;
  k.record.phase = t.phase;
  if (t.kind == TaskKind::Forward) forward(k);
  else backward(k);
  finish(k);
}

void StageTaskRunner::forward(Task& k) {
  std::optional<NoGradGuard> noGrad;
  if (!p_.training) noGrad.emplace();
  BlockState in;
  StageStash st;
  uint64_t drawn = 0;
  if (k.stage > 0) {
    StageSnapshot p;
    {
      std::lock_guard<std::mutex> lock(slots_.mu);
      auto& slot = slots_.act[slots_.at(k.replica, k.stage - 1, k.microBatch)];
      GNN_ASSERT(slot.has_value(), "stage input missing");
      p = std::move(*slot);
      slot.reset();
    }
    drawn = p.randomOps;
    in = p.toState(p_.training, &st.leaves);
    TaskRecord copy = k.record;
    copy.kind = TaskKind::Copy;
    copy.bytes = p.bytes;
    copy.cpu = {k.start, reports_.now() - k.start};
    reports_.trace(copy);
  }
  k.ipu.ctx.setRandomKey({u_.seed, static_cast<uint64_t>(u_.step), static_cast<uint64_t>(k.m.index)}, drawn);
  k.ipu.ctx.setRoundingOps(roundingBase(k.stage, false));
  std::optional<ObserverScope> watch;
  if (k.capture) watch.emplace(k.rec);
  ObserverScope::mark();
  std::vector<StageSnapshot> checkpoints;
  BlockState out = runForwardBlocks(k, std::move(in), checkpoints);
  finishForward(k, std::move(out), std::move(st), std::move(checkpoints));
}

BlockState StageTaskRunner::runForwardBlocks(Task& k, BlockState in, std::vector<StageSnapshot>& checkpoints) {
  if (p_.recompute && p_.training)
    return forwardRecompute(k.model, std::move(in), k.m.batch, k.first, k.last, k.ipu.ctx, checkpoints,
                            k.capture ? &reports_.record : nullptr);
  if (k.capture) return forwardBlockByBlock(k.model, std::move(in), k.m.batch, k.first, k.last, reports_.record);
  return forwardPlain(k.model, std::move(in), k.m.batch, k.first, k.last);
}

// The stage's output handed on (or, on the last stage, the loss computed) and what its backward needs stashed.
void StageTaskRunner::finishForward(Task& k, BlockState out, StageStash st, std::vector<StageSnapshot> checkpoints) {
  if (k.stage == p_.layout.stages - 1) {
    const Variable& y = out.get("out");
    k.m.output = y.value();
    if (p_.training) {
      Variable l = p_.loss.loss(y, k.m.batch);
      GNN_CHECK_ARG(l.value().numel() == 1, "the loss function returned shape ", shapeString(l.shape()),
                    ", not a scalar");
      k.m.loss = l.value().item();
      if (!std::isfinite(k.m.loss) && !k.m.padding && p_.checkLossFinite)
        throw NonFiniteLoss(k.m.loss, k.m.index,
                            "micro-batch " + std::to_string(k.m.index) + " of the host request (replica " +
                                std::to_string(k.replica) + ", device iteration " + std::to_string(u_.iteration) + ")");
      st.loss = l;
    }
  } else {
    StageSnapshot p = StageSnapshot::of(out);
    p.randomOps = k.ipu.ctx.randomOps();
    if (k.capture) reports_.record.stages[static_cast<size_t>(k.stage)].activationBytes = p.bytes;
    std::lock_guard<std::mutex> lock(slots_.mu);
    slots_.act[slots_.at(k.replica, k.stage, k.microBatch)] = std::move(p);
  }
  if (!p_.training) return;
  if (p_.recompute) {
    for (const auto& entry : out.entries())
      if (entry.second.requiresGrad()) st.outGrad.push_back(entry.first);
    st.checkpoints = std::move(checkpoints);
    st.leaves.clear();
    st.loss = Variable();
    out = BlockState();  // the tape of the last block goes here
  } else {
    st.out = std::move(out);
  }
  std::lock_guard<std::mutex> lock(slots_.mu);
  slots_.stash[slots_.at(k.replica, k.stage, k.microBatch)] = std::move(st);
}

void StageTaskRunner::backward(Task& k) {
  const int64_t s = k.stage;
  StageStash st;
  std::vector<Tensor> seeds;
  {
    std::lock_guard<std::mutex> lock(slots_.mu);
    auto& slot = slots_.stash[slots_.at(k.replica, s, k.microBatch)];
    GNN_ASSERT(slot.has_value(), "stash missing");
    st = std::move(*slot);
    slot.reset();
    if (s < p_.layout.stages - 1) {
      auto& g = slots_.grad[slots_.at(k.replica, s, k.microBatch)];
      GNN_ASSERT(g.has_value(), "stage gradient missing");
      seeds = std::move(*g);
      g.reset();
    }
  }
  std::optional<ObserverScope> watch;
  if (k.capture) watch.emplace(k.rec);
  const RandomKey key{u_.seed, static_cast<uint64_t>(u_.step), static_cast<uint64_t>(k.m.index)};
  k.ipu.ctx.setRandomKey(key);
  k.ipu.ctx.setRoundingOps(roundingBase(s, true));
  const bool last = s == p_.layout.stages - 1;
  const double lossSeed = (u_.totalWeight > 0 ? k.m.weight / u_.totalWeight : 0.0) * u_.lossScale;
  std::vector<Tensor> back;
  if (p_.recompute) {
    const RecomputeBackward a{k.model, k.m.batch, k.ipu.ctx, k.ipu.sink, key, roundingBase(s, true),
                              last ? &p_.loss : nullptr, lossSeed, k.capture, k.rec.next};
    back = backwardRecompute(a, k.first, k.last, st.checkpoints, st.outGrad, seeds);
  } else if (last) {
    backwardFromLoss(st.loss, lossSeed);
  } else {
    backwardFromOutputs(st.out, seeds);
  }
  if (s > 0) handGradientsBack(k, st, std::move(back));
}

// The gradients of the stage's inputs to the previous stage, traced as a copy on that stage's track.
void StageTaskRunner::handGradientsBack(Task& k, const StageStash& st, std::vector<Tensor> back) {
  int64_t bytes = 0;
  for (const auto& leaf : st.leaves) back.push_back(k.ipu.sink.take(leaf.second));
  for (const Tensor& g : back)
    if (g.defined()) bytes += static_cast<int64_t>(g.nbytes());
  {
    std::lock_guard<std::mutex> lock(slots_.mu);
    slots_.grad[slots_.at(k.replica, k.stage - 1, k.microBatch)] = std::move(back);
  }
  TaskRecord copy = k.record;
  copy.kind = TaskKind::Copy;
  copy.ipu = p_.layout.track(k.replica, k.stage - 1);
  copy.stage = k.stage - 1;
  copy.bytes = bytes;
  copy.cpu = {reports_.now(), 0};
  reports_.trace(copy);
}

// The task's trace slice, its ops into the compile record (capture), the stage's measured time.
void StageTaskRunner::finish(Task& k) {
  const double end = reports_.now();
  k.record.kind = k.scheduled.kind;
  if (k.capture) {
    std::lock_guard<std::mutex> lock(slots_.mu);
    k.record.flops = addTaskOps(reports_.record, k.stage, k.rec.ops);
  }
  k.record.cpu = {k.start, end - k.start};
  reports_.trace(k.record);
  std::lock_guard<std::mutex> lock(slots_.mu);
  reports_.times.add(k.scheduled.kind, k.stage, end - k.start);
}

}  // namespace gnn
