#include "device/StageTask.h"

#include <optional>
#include <utility>

#include "device/CompileCapture.h"
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

}  // namespace gnn
