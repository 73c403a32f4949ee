#include "device/StageTask.h"

#include <optional>
#include <utility>

#include "device/CompileCapture.h"
#include "device/ExecutionProgram.h"
#include "gnn/system/Check.h"

namespace gnn {

StageSnapshot StageSnapshot::of(const BlockState& state) {
  StageSnapshot s;
  for (const auto& entry : state.entries()) {
    s.names.push_back(entry.first);
    s.values.push_back(entry.second.value());
    s.requiresGrad.push_back(entry.second.requiresGrad());
    s.bytes += static_cast<int64_t>(entry.second.value().nbytes());
  }
  return s;
}

BlockState StageSnapshot::toState(bool withGrad, std::vector<std::pair<std::string, Variable>>* leaves) const {
  BlockState state;
  for (size_t i = 0; i < names.size(); ++i) {
    Variable v(values[i], requiresGrad[i] && withGrad);
    if (leaves && v.requiresGrad()) leaves->push_back({names[i], v});
    state.set(names[i], v);
  }
  return state;
}

StageSlots::StageSlots(int64_t replicas, int64_t stages_, int64_t microBatches_)
    : stages(stages_), microBatches(microBatches_) {
  const size_t n = static_cast<size_t>(replicas * stages * microBatches);
  act.resize(n);
  grad.resize(n);
  stash.resize(n);
}

bool StageSlots::ready(int64_t r, const ScheduledTask& t) {
  std::lock_guard<std::mutex> lock(mu);
  if (t.kind == TaskKind::Forward) return t.stage == 0 || act[at(r, t.stage - 1, t.microBatch)].has_value();
  return t.stage == stages - 1 || grad[at(r, t.stage, t.microBatch)].has_value();
}

uint64_t roundingBase(int64_t stage, bool backward) {
  return (static_cast<uint64_t>(stage) << 40) | (backward ? uint64_t{1} << 39 : 0);
}

BlockState forwardPlain(BlockModel& model, BlockState in, const Batch& batch, size_t first, size_t last) {
  return model.runBlocks(std::move(in), batch, first, last);
}

BlockState forwardBlockByBlock(BlockModel& model, BlockState in, const Batch& batch, size_t first, size_t last,
                               CompileRecord& record) {
  BlockState out = std::move(in);
  for (size_t b = first; b < last; ++b) {
    out = model.runBlocks(std::move(out), batch, b, b + 1);
    record.blocks[b].outputBytes = stateBytes(out);
  }
  return out;
}

BlockState forwardRecompute(BlockModel& model, BlockState in, const Batch& batch, size_t first, size_t last,
                            const ExecutionContext& ctx, std::vector<StageSnapshot>& checkpoints,
                            CompileRecord* record) {
  // Only the values the next block starts from (and which of them need a gradient) are kept; the last block's
  // tape goes once the loss is read.
  BlockState cur = std::move(in);
  BlockState out;
  for (size_t b = first; b < last; ++b) {
    StageSnapshot ck = StageSnapshot::of(cur);
    ck.randomOps = ctx.randomOps();
    ck.roundingOps = ctx.roundingOps();
    checkpoints.push_back(std::move(ck));
    BlockState o = model.runBlocks(std::move(cur), batch, b, b + 1);
    if (record) record->blocks[b].outputBytes = stateBytes(o);
    if (b + 1 == last) {
      out = std::move(o);
    } else {
      cur = StageSnapshot::of(o).toState(true);
    }
  }
  return out;
}

void backwardFromLoss(Variable& loss, double seed) {
  // fp16: the seed carries the loss scale; the reduced gradients are divided by it before the update.
  if (loss.requiresGrad()) loss.backward(Tensor::full(loss.shape(), seed, loss.dtype()));
}

void backwardFromOutputs(const BlockState& out, const std::vector<Tensor>& seeds) {
  std::vector<Variable> roots;
  std::vector<Tensor> rootSeeds;
  size_t i = 0;
  for (const auto& entry : out.entries()) {
    if (!entry.second.requiresGrad()) continue;
    GNN_ASSERT(i < seeds.size(), "stage gradients do not match the stage's outputs");
    if (seeds[i].defined()) {
      roots.push_back(entry.second);
      rootSeeds.push_back(seeds[i]);
    }
    ++i;
  }
  if (!roots.empty()) Variable::backward(roots, rootSeeds);
}

namespace {
// Block b's forward once more, on the snapshot of its input: under ctx.recomputing(), so the state the first run
// updated (BatchNorm's running statistics) is not updated twice.
BlockState rerunBlock(const RecomputeBackward& a, BlockState in, size_t b) {
  struct Recomputing {
    ExecutionContext& ctx;
    explicit Recomputing(ExecutionContext& c) : ctx(c) { ctx.setRecomputing(true); }
    ~Recomputing() { ctx.setRecomputing(false); }
  } scope(a.ctx);
  return a.model.runBlocks(std::move(in), a.batch, b, b + 1);
}
}  // namespace

std::vector<Tensor> backwardRecompute(const RecomputeBackward& a, size_t first, size_t last,
                                      std::vector<StageSnapshot>& checkpoints, const std::vector<std::string>& outGrad,
                                      const std::vector<Tensor>& seeds) {
  std::vector<Tensor> back;
  std::vector<std::pair<std::string, Tensor>> seedOf;  // gradients of the outputs of the block being recomputed
  if (!a.loss)
    for (size_t i = 0; i < outGrad.size(); ++i)
      if (i < seeds.size() && seeds[i].defined()) seedOf.push_back({outGrad[i], seeds[i]});
  uint64_t backwardOps = a.rounding;
  for (size_t b = last; b-- > first;) {
    StageSnapshot ck = std::move(checkpoints[b - first]);
    checkpoints[b - first] = StageSnapshot();
    a.ctx.setRandomKey(a.key, ck.randomOps);
    a.ctx.setRoundingOps(ck.roundingOps);
    // The re-run forward is not part of the compile record (the forward ran once already).
    OpObserver* watching = a.ctx.observer();
    if (a.capture) a.ctx.setObserver(a.outer);
    std::vector<std::pair<std::string, Variable>> leaves;
    BlockState in = ck.toState(true, &leaves);
    ck.values.clear();
    BlockState out = rerunBlock(a, std::move(in), b);
    std::vector<Variable> roots;
    std::vector<Tensor> rootSeeds;
    if (a.loss && b + 1 == last) {
      Variable l = a.loss->loss(out.get("out"), a.batch);
      if (l.requiresGrad()) {
        roots.push_back(l);
        rootSeeds.push_back(Tensor::full(l.shape(), a.lossSeed, l.dtype()));
      }
    } else {
      for (const auto& entry : out.entries()) {
        if (!entry.second.requiresGrad()) continue;
        for (const auto& seed : seedOf)
          if (seed.first == entry.first) {
            roots.push_back(entry.second);
            rootSeeds.push_back(seed.second);
          }
      }
    }
    a.ctx.setObserver(watching);
    a.ctx.setRoundingOps(backwardOps);
    if (!roots.empty()) Variable::backward(roots, rootSeeds);
    backwardOps = a.ctx.roundingOps();
    roots.clear();
    out = BlockState();
    seedOf.clear();
    for (const auto& leaf : leaves) {
      Tensor g = a.sink.take(leaf.second);
      if (b == first) back.push_back(g);
      if (g.defined()) seedOf.push_back({leaf.first, std::move(g)});
    }
  }
  return back;
}

TaskRecord ExecutionProgram::taskRecord(int64_t r, const ScheduledTask& t, int64_t iteration) const {
  TaskRecord tr;
  tr.ipu = layout_.track(r, t.stage);
  tr.replica = r;
  tr.stage = t.stage;
  tr.request = requests_;
  tr.iteration = iteration;
  tr.microBatch = t.microBatch;
  tr.phase = t.phase;
  return tr;
}

void ExecutionProgram::runTask(int64_t r, const ScheduledTask& t, StageSlots& slots, Replicas& mbs,
                               int64_t iteration, int64_t step, uint64_t seed, double totalWeight) {
  IpuRuntime& ip = ipu(r, t.stage);
  ContextScope use(ip.ctx);
  MicroBatchRun& m = mbs[static_cast<size_t>(r)][static_cast<size_t>(t.microBatch)];
  const bool capture = capturing_ && r == firstLocalReplica_ && t.microBatch == 0 && iteration == 0;
  Recorder rec;
  rec.stage = t.stage;
  rec.next = ip.ctx.observer();
  const TaskRecord tr = taskRecord(r, t, iteration);
  const double start = now();
  if (t.kind == TaskKind::Forward) runForwardTask(r, t, slots, m, tr, step, seed, capture, rec, start);
  else runBackwardTask(r, t, slots, m, tr, step, seed, totalWeight, capture, rec);
  finishTask(t, slots, tr, capture, rec, start);
}

void ExecutionProgram::runForwardTask(int64_t r, const ScheduledTask& t, StageSlots& slots, MicroBatchRun& m,
                                      const TaskRecord& tr, int64_t step, uint64_t seed, bool capture, Recorder& rec,
                                      double start) {
  const int64_t s = t.stage, k = t.microBatch;
  IpuRuntime& ip = ipu(r, s);
  std::optional<NoGradGuard> noGrad;
  if (!training_) noGrad.emplace();
  BlockState in;
  std::vector<std::pair<std::string, Variable>> leaves;
  uint64_t drawn = 0;
  if (s > 0) {
    StageSnapshot p;
    {
      std::lock_guard<std::mutex> lock(slots.mu);
      auto& slot = slots.act[slots.at(r, s - 1, k)];
      GNN_ASSERT(slot.has_value(), "stage input missing");
      p = std::move(*slot);
      slot.reset();
    }
    drawn = p.randomOps;
    in = p.toState(training_, &leaves);
    TaskRecord copy = tr;
    copy.kind = TaskKind::Copy;
    copy.bytes = p.bytes;
    copy.cpu = {start, now() - start};
    recordTask(copy);
  }
  ip.ctx.setRandomKey({seed, static_cast<uint64_t>(step), static_cast<uint64_t>(m.index)}, drawn);
  ip.ctx.setRoundingOps(roundingBase(s, false));
  std::optional<ObserverScope> watch;
  if (capture) watch.emplace(rec);
  ObserverScope::mark();
  const auto first = static_cast<size_t>(stageBlocks_[static_cast<size_t>(s)].first);
  const auto last = static_cast<size_t>(stageBlocks_[static_cast<size_t>(s)].second);
  const bool recompute = options_.recompute && training_;
  std::vector<StageSnapshot> checkpoints;
  BlockState out = recompute ? forwardRecompute(replicaModel(r), std::move(in), m.batch, first, last, ip.ctx,
                                                checkpoints, capture ? &record_ : nullptr)
                   : capture ? forwardBlockByBlock(replicaModel(r), std::move(in), m.batch, first, last, record_)
                             : forwardPlain(replicaModel(r), std::move(in), m.batch, first, last);
  StageStash st;
  st.leaves = std::move(leaves);
  if (s == stages_ - 1) {
    const Variable& y = out.get("out");
    m.output = y.value();
    if (training_) {
      Variable l = loss_.loss(y, m.batch);
      GNN_CHECK_ARG(l.value().numel() == 1, "the loss function returned shape ", shapeString(l.shape()),
                    ", not a scalar");
      m.loss = l.value().item();
      if (!std::isfinite(m.loss) && !m.padding && checkLossFinite_)
        throw NonFiniteLoss(m.loss, m.index,
                            "micro-batch " + std::to_string(m.index) + " of the host request (replica " +
                                std::to_string(r) + ", device iteration " + std::to_string(tr.iteration) + ")");
      st.loss = l;
    }
  } else {
    StageSnapshot p = StageSnapshot::of(out);
    p.randomOps = ip.ctx.randomOps();
    if (capture) record_.stages[static_cast<size_t>(s)].activationBytes = p.bytes;
    std::lock_guard<std::mutex> lock(slots.mu);
    slots.act[slots.at(r, s, k)] = std::move(p);
  }
  if (!training_) return;
  if (recompute) {
    for (const auto& entry : out.entries())
      if (entry.second.requiresGrad()) st.outGrad.push_back(entry.first);
    st.checkpoints = std::move(checkpoints);
    st.leaves.clear();
    st.loss = Variable();
    out = BlockState();  // the tape of the last block goes here
  } else {
    st.out = std::move(out);
  }
  std::lock_guard<std::mutex> lock(slots.mu);
  slots.stash[slots.at(r, s, k)] = std::move(st);
}

void ExecutionProgram::runBackwardTask(int64_t r, const ScheduledTask& t, StageSlots& slots, MicroBatchRun& m,
                                       const TaskRecord& tr, int64_t step, uint64_t seed, double totalWeight,
                                       bool capture, Recorder& rec) {
  const int64_t s = t.stage, k = t.microBatch;
  IpuRuntime& ip = ipu(r, s);
  StageStash st;
  std::vector<Tensor> seeds;
  {
    std::lock_guard<std::mutex> lock(slots.mu);
    auto& slot = slots.stash[slots.at(r, s, k)];
    GNN_ASSERT(slot.has_value(), "stash missing");
    st = std::move(*slot);
    slot.reset();
    if (s < stages_ - 1) {
      auto& g = slots.grad[slots.at(r, s, k)];
      GNN_ASSERT(g.has_value(), "stage gradient missing");
      seeds = std::move(*g);
      g.reset();
    }
  }
  std::optional<ObserverScope> watch;
  if (capture) watch.emplace(rec);
  const RandomKey key{seed, static_cast<uint64_t>(step), static_cast<uint64_t>(m.index)};
  ip.ctx.setRandomKey(key);
  ip.ctx.setRoundingOps(roundingBase(s, true));
  const double lossSeed = (totalWeight > 0 ? m.weight / totalWeight : 0.0) * lossScaler_.scale();
  std::vector<Tensor> back;
  if (options_.recompute) {
    const RecomputeBackward a{replicaModel(r), m.batch, ip.ctx, ip.sink, key, roundingBase(s, true),
                              s == stages_ - 1 ? &loss_ : nullptr, lossSeed, capture, rec.next};
    back = backwardRecompute(a, static_cast<size_t>(stageBlocks_[static_cast<size_t>(s)].first),
                             static_cast<size_t>(stageBlocks_[static_cast<size_t>(s)].second), st.checkpoints,
                             st.outGrad, seeds);
  } else if (s == stages_ - 1) {
    backwardFromLoss(st.loss, lossSeed);
  } else {
    backwardFromOutputs(st.out, seeds);
  }
  if (s == 0) return;
  int64_t bytes = 0;
  for (const auto& leaf : st.leaves) back.push_back(ip.sink.take(leaf.second));
  for (const Tensor& g : back)
    if (g.defined()) bytes += static_cast<int64_t>(g.nbytes());
  {
    std::lock_guard<std::mutex> lock(slots.mu);
    slots.grad[slots.at(r, s - 1, k)] = std::move(back);
  }
  TaskRecord copy = tr;
  copy.kind = TaskKind::Copy;
  copy.ipu = layout_.track(r, s - 1);
  copy.stage = s - 1;
  copy.bytes = bytes;
  copy.cpu = {now(), 0};
  recordTask(copy);
}

void ExecutionProgram::finishTask(const ScheduledTask& t, StageSlots& slots, TaskRecord tr, bool capture,
                                  const Recorder& rec, double start) {
  const double end = now();
  tr.kind = t.kind;
  if (capture) {
    std::lock_guard<std::mutex> lock(slots.mu);
    tr.flops = addTaskOps(record_, t.stage, rec.ops);
  }
  tr.cpu = {start, end - start};
  recordTask(tr);
  std::lock_guard<std::mutex> lock(slots.mu);
  const auto s = static_cast<size_t>(t.stage);
  if (t.kind == TaskKind::Forward) {
    fwdSeconds_[s] += end - start;
    ++fwdCount_[s];
  } else {
    bwdSeconds_[s] += end - start;
    ++bwdCount_[s];
  }
}

}  // namespace gnn
