// The parts of ExecutionProgram its files share (device/*.cpp only, not for users): a simulated IPU's runtime,
// a micro-batch as a replica runs it, the snapshot of a stage's tensors, and the slots stages hand each other.
#pragma once
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device/PipelineSchedule.h"
#include "gnn/autograd/GradientSink.h"
#include "gnn/autograd/OpInfo.h"
#include "gnn/system/ExecutionContext.h"
#include "loaders/Batch.h"
#include "models/BlockState.h"

namespace gnn {

// One simulated IPU: the context its tasks run under and the sink its parameters' gradients go to.
struct IpuRuntime {
  ExecutionContext ctx;
  GradientSink sink;
  std::shared_ptr<MemoryAccount> memory;
};

// A micro-batch of the request as one replica runs it.
struct MicroBatchRun {
  Batch batch;
  int64_t index = 0;  // position in the host request
  double weight = 0;
  bool padding = false;
  double loss = NAN;
  Tensor output;
  int64_t samples = 0;  // real graphs (known for every process's micro-batches)
};

// A stage's tensors as values: what crosses a stage boundary (stage s -> s+1), and with --recompute what a
// block's recomputation starts from, with the random-op and rounding counts at that point so dropout masks and
// stochastic rounding redraw identically.
struct StageSnapshot {
  std::vector<std::string> names;
  std::vector<Tensor> values;
  std::vector<bool> requiresGrad;
  uint64_t randomOps = 0, roundingOps = 0;
  int64_t bytes = 0;  // of the values

  static StageSnapshot of(const BlockState& state);
  // The entries as fresh leaves (a gradient where one was needed and `withGrad`); the leaves that need one are
  // appended to `leaves` (when given), in entry order.
  BlockState toState(bool withGrad, std::vector<std::pair<std::string, Variable>>* leaves = nullptr) const;
};

// What a stage keeps of a micro-batch's forward for its backward.
struct StageStash {
  std::vector<std::pair<std::string, Variable>> leaves;  // received activations that need a gradient
  BlockState out;                                        // the stage's output (the tape hangs from it)
  Variable loss;                                         // last stage
  // --recompute instead: one snapshot per block of the stage, and the names of the stage's outputs that need a
  // gradient (in entry order); no tape.
  std::vector<StageSnapshot> checkpoints;
  std::vector<std::string> outGrad;
};

// What crosses the stage boundaries of one update, per [replica][stage][micro-batch].
struct StageSlots {
  std::mutex mu;
  int64_t stages = 1, microBatches = 1;
  std::vector<std::optional<StageSnapshot>> act;         // stage s -> s+1, stored at s
  std::vector<std::optional<std::vector<Tensor>>> grad;  // stage s+1 -> s, stored at s
  std::vector<std::optional<StageStash>> stash;

  StageSlots(int64_t replicas, int64_t stages, int64_t microBatches);
  size_t at(int64_t r, int64_t s, int64_t k) const { return static_cast<size_t>((r * stages + s) * microBatches + k); }
  // Whether task `t` of replica r has its inputs (the previous stage's activations, the next stage's gradients).
  bool ready(int64_t r, const ScheduledTask& t);
};

// The caller's observer (a profiler) seeing the ops of tasks that run on several workers at once.
struct SharedObserver : OpObserver {
  OpObserver* target = nullptr;
  std::mutex mu;
  void onOp(const OpEvent& e) override {
    std::lock_guard<std::mutex> lock(mu);
    target->onOp(e);
  }
};

}  // namespace gnn
