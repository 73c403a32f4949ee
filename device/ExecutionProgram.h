// ExecutionProgram: the compiled program both devices run. A host request is split into micro-batches; each
// (replica, stage, micro-batch, forward|backward) is a task, ordered per stage by PipelineSchedule and run by a
// fixed pool of worker threads (no more than the cores, each task under its simulated IPU's ExecutionContext:
// thread budget, memory account, random key per micro-batch, a GradientSink for its parameters). Stages hand
// activations forward and their gradients back through per-micro-batch slots; the gradients of the replicas
// and micro-batches are summed in a fixed order (replica, then stage; micro-batches in order within a stage),
// so the weights never depend on thread timing. Then one weight update (learning rate, gradient check and
// clipping, loss scaling, optimizer) and the replicas' weights are made equal to the updated ones again.
//
// The loss of micro-batch k is seeded with weight_k / W (W: the update's total weight), so the update's
// gradient is the mean over every labelled term of the update: R replicas × G micro-batches of B graphs give
// the gradient of one batch of R·G·B graphs (PopTorch's Mean reduction when micro-batches weigh the same).
//
//   ExecutionProgram p("ipu", model, lossFn, &opt, firstBatch, options, /*simulated=*/true);
//   RunResult r = p.run(request, args);
//
// Where things are: the stage tasks (StageTaskRunner, running the blocks through StageTask), the worker pool
// (TaskScheduler), the replicas' weights (ReplicaWeights), one weight update (WeightUpdate: the gradient sum and
// the all-gather of GradientReduction, loss scaling of LossScaler), the host link (HostIo), the compile record's
// capture (CompileCapture), the exchanges between processes (ProcessExchange, over WireFormat); the types they
// share are in ExecutionProgramParts.h.
#pragma once
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "device/Device.h"
#include "device/IpuLayout.h"
#include "device/LossScaler.h"
#include "device/PipelineSchedule.h"
#include "device/ReplicaWeights.h"
#include "device/StageSplit.h"
#include "device/StageTimes.h"
#include "device/WeightUpdate.h"
#include "gnn/autograd/GradientSink.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {

struct IpuRuntime;
struct MicroBatchRun;

class ExecutionProgram : public DeviceProgram {
 public:
  /// `simulated` = false: the CPU device (one replica, one stage, run on the calling thread).
  ExecutionProgram(std::string deviceName, BlockModel& model, LossFn lossFn, Optimizer* optimizer, const Batch& shapes,
                   const IpuOptions& options, bool simulated);
  ~ExecutionProgram() override;

  RunResult run(const Batch& request, const RunArgs& args) override;
  bool training() const override { return training_; }
  const IpuOptions& options() const override { return options_; }
  std::vector<std::string> stageNames() const override;
  int64_t numIpus() const override { return numIpus_; }
  int64_t hostRequests() const override { return requests_; }
  int64_t updatesFor(int64_t microBatches) const override;
  std::string stageTable() const override;
  const CompileRecord& record() const override { return record_; }
  void enableTrace(int64_t requests) override { traceRequests_ = requests; }
  const Trace& trace() const override { return trace_; }
  double lossScale() const override { return update_->lossScaler().scale(); }
  int64_t skippedUpdates() const override { return update_->lossScaler().skipped(); }
  LossScaleState lossScaleState() const override { return update_->lossScaler().state(); }
  void setLossScaleState(const LossScaleState& st) override { update_->lossScaler().setState(st); }
  double allReduceSeconds() const override { return update_->allReduceSeconds(); }
  ExchangeBytes exchangeBytes() const override;
  /// Updates whose gradients overflowed in half (skipped ones included; with static scaling they were applied).
  int64_t overflowUpdates() const { return update_->lossScaler().overflows(); }
  /// Worker threads the tasks run on.
  int64_t workers() const { return workers_; }
  /// Off: a non-finite loss does not stop the request (a compile-time capture records the ops whatever the
  /// loss's value). On by default: NonFiniteLoss.
  void checkLossFinite(bool on) { checkLossFinite_ = on; }
  /// The memory account of simulated IPU `id` (replica-major: replica · stages + stage).
  const MemoryAccount& ipuMemory(int64_t id) const;
  /// Streaming memory (off-chip): offloaded optimizer state and fp16's fp32 master weights live here.
  const MemoryAccount& streamingMemory() const { return *streaming_; }

 private:
  using Replicas = std::vector<std::vector<MicroBatchRun>>;  // [replica][micro-batch] of one update

  // Construction (ExecutionProgram.cpp).
  void makeIpus();
  void placeOptimizerState();
  void makeTracks();

  // A host request's phases (ExecutionProgram.cpp).
  RunResult runRequest(const Batch& request, const RunArgs& args);
  std::vector<MicroBatchRun> splitIntoMicroBatches(const Batch& request, const std::string& req,
                                                   std::exception_ptr& error);
  // Pads (weight 0) or drops to whole updates; returns the micro-batches run.
  int64_t completeUpdates(std::vector<MicroBatchRun>& all, const std::string& req, RunResult& result);
  void sendToDevice(std::vector<MicroBatchRun>& all, int64_t real, const Batch& request, double start);
  void fillPadding(std::vector<MicroBatchRun>& all, int64_t real);
  void runUpdates(std::vector<MicroBatchRun>& all, const RunArgs& args, RunResult& result,
                  std::vector<MicroBatchRun>& done);
  void runInference(std::vector<MicroBatchRun>& all, const RunArgs& args, RunResult& result,
                    std::vector<MicroBatchRun>& done);
  void collectOutputs(const std::vector<MicroBatchRun>& done, RunResult& result);

  // One weight update (training) or one inference pass over `mbs` (per replica, G micro-batches each): the
  // tasks on the worker pool (StageTaskRunner), then the gradients reduced and the weights updated (WeightUpdate).
  UpdateResult runUpdate(Replicas& mbs, int64_t iteration, int64_t step, const RunArgs& args, RunResult& result);
  void recordTask(const TaskRecord& r);
  // The same slice (all-reduce, optimizer) on every simulated IPU's track.
  void recordOnEveryIpu(TaskKind kind, int64_t iteration, double start, double end);
  // Micro-batches a request of `microBatches` runs: whole updates, padded or dropped per PartialRequest.
  int64_t microBatchesToRun(int64_t microBatches) const;
  double now() const;
  // Replicas spread over processes (ProcessExchange.cpp).
  bool distributed() const { return isDistributed(options_.processes.get()); }

  std::string deviceName_;
  BlockModel& master_;
  LossFn loss_;
  Optimizer* opt_;
  IpuOptions options_;
  bool training_;
  int64_t replicas_ = 1, accumulation_ = 1, numIpus_ = 1, workers_ = 1;
  // The stages, this process's replicas, simulated or the CPU, and (replica, stage) -> IPU number, runtime and
  // trace track.
  IpuLayout layout_;
  RequestShard shard_;
  Batch shapes_;              // padding for a process none of whose micro-batches of a short request are real
  StageBlocks stageBlocks_;
  PipelineSchedule schedule_;
  bool fp16_ = false;
  std::unique_ptr<ReplicaWeights> weights_;  // this process's replicas' weights and the optimizer's master copy
  std::unique_ptr<WeightUpdate> update_;
  std::shared_ptr<MemoryAccount> streaming_;
  std::vector<std::unique_ptr<IpuRuntime>> ipus_;  // local replicas, replica-major: at layout_.local(r, s)
  CompileRecord record_;
  Trace trace_;
  int64_t traceRequests_ = 0;
  int64_t requests_ = 0;
  bool capturing_ = false;
  bool checkLossFinite_ = true;
  std::chrono::steady_clock::time_point t0_;
  bool started_ = false;
  StageTimes stageTimes_;
};

}  // namespace gnn
