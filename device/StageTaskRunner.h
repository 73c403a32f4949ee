// StageTaskRunner: the stage tasks of one weight update (or one inference pass), built for that update from what
// its tasks read: the program's stages, replicas and models (StageTaskProgram), the update's micro-batches, step,
// seed and loss seeds (UpdateTasks), and where tasks report (the trace, the compile record's capture, the stages'
// measured times). It owns the slots through which stages hand activations forward and gradients back; the task
// scheduler's workers call ready() and run(). The blocks themselves run through device/StageTask.h.
//
//   StageTaskRunner tasks(program, update, reports, replicas);
//   runLanes(lanes, workers, [&](r, t) { return tasks.ready(r, t); }, [&](r, t) { tasks.run(r, t); });
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "device/CompileRecord.h"
#include "device/Device.h"
#include "device/ExecutionProgramParts.h"
#include "device/IpuLayout.h"
#include "device/StageSplit.h"
#include "device/StageTimes.h"
#include "device/Trace.h"

namespace gnn {

/// What every task reads of the program: the same for every update.
struct StageTaskProgram {
  const IpuLayout& layout;
  const StageBlocks& blocks;  // [first, last) blocks of each stage
  const LossFn& loss;
  const std::vector<std::unique_ptr<IpuRuntime>>& ipus;  // this process's, at layout.local(replica, stage)
  const std::vector<BlockModel*>& models;                // this process's replicas' models, from its first
  bool training = false;
  bool recompute = false;        // --recompute (training only)
  bool checkLossFinite = true;   // a non-finite loss of a real micro-batch stops the request (NonFiniteLoss)
};

/// One update: its micro-batches and what seeds them.
struct UpdateTasks {
  std::vector<std::vector<MicroBatchRun>>& microBatches;  // [replica][micro-batch], replicas by job number
  int64_t request = 0, iteration = 0, step = 0;
  uint64_t seed = 0;
  double totalWeight = 0;  // of the update's real micro-batches: each loss is seeded with its share
  double lossScale = 1;
  bool capture = false;    // the compile record's capture: of this process's first replica's first micro-batch
};

/// Where tasks report. `trace` and `now` are called from several workers at once.
struct StageTaskReports {
  CompileRecord& record;
  StageTimes& times;
  std::function<void(const TaskRecord&)> trace;
  std::function<double()> now;
};

class StageTaskRunner {
 public:
  /// `replicas`: in the job (the slots are indexed by the replica's job number).
  StageTaskRunner(const StageTaskProgram& program, const UpdateTasks& update, StageTaskReports& reports,
                  int64_t replicas);

  /// Whether the replica's task has its inputs (the previous stage's activations, the next stage's gradients).
  bool ready(int64_t replica, const ScheduledTask& t) { return slots_.ready(replica, t); }
  /// Runs the task under its simulated IPU's context; throws what the task throws (NonFiniteLoss, ...).
  void run(int64_t replica, const ScheduledTask& t);

 private:
  struct Task;
  void forward(Task& k);
  BlockState runForwardBlocks(Task& k, BlockState in, std::vector<StageSnapshot>& checkpoints);
  void finishForward(Task& k, BlockState out, StageStash st, std::vector<StageSnapshot> checkpoints);
  void backward(Task& k);
  void handGradientsBack(Task& k, const StageStash& st, std::vector<Tensor> back);
  void finish(Task& k);

  const StageTaskProgram p_;
  const UpdateTasks u_;
  StageTaskReports& reports_;
  StageSlots slots_;
};

}  // namespace gnn
