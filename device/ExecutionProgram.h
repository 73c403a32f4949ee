// ExecutionProgram: the compiled program both devices run. A host request is split into micro-batches; each
// (replica, stage, micro-batch, forward|backward) is a task, ordered per stage by PipelineSchedule and run by a
// fixed pool of worker threads (no more than the cores, each task under its simulated IPU's ExecutionContext:
// thread budget, memory account, random key per micro-batch, a GradientSink for its parameters). Stages hand
// activations forward and their gradients back through per-micro-batch slots; the gradients of the replicas
// and micro-batches are summed in a fixed order (replica, then stage; micro-batches in order within a stage),
// so the weights never depend on thread timing. Then one weight update (hooks, optimizer) and the replicas'
// weights are made equal to the updated ones again.
//
// The loss of micro-batch k is seeded with weight_k / W (W: the update's total weight), so the update's
// gradient is the mean over every labelled term of the update: R replicas × G micro-batches of B graphs give
// the gradient of one batch of R·G·B graphs (PopTorch's Mean reduction when micro-batches weigh the same).
//
//   ExecutionProgram p("ipu", model, lossFn, &opt, firstBatch, options, /*simulated=*/true);
//   RunResult r = p.run(request, hooks);
#pragma once
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "device/Device.h"
#include "device/PipelineSchedule.h"
#include "gnn/ExecutionContext.h"
#include "gnn/GradientSink.h"

namespace gnn {

class ExecutionProgram : public DeviceProgram {
 public:
  /// `simulated` = false: the CPU device (one replica, one stage, run on the calling thread).
  ExecutionProgram(std::string deviceName, BlockModel& model, LossFn lossFn, Optimizer* optimizer, const Batch& shapes,
                   const IpuOptions& options, bool simulated);
  ~ExecutionProgram() override;

  RunResult run(const Batch& request, const UpdateHooks& hooks) override;
  bool training() const override { return training_; }
  const IpuOptions& options() const override { return o_; }
  std::vector<std::string> stageNames() const override;
  int64_t numIpus() const override { return numIpus_; }
  int64_t hostRequests() const override { return requests_; }
  int64_t updatesFor(int64_t microBatches) const override;
  std::string stageTable() const override;
  const CompileRecord& record() const override { return record_; }
  void enableTrace(int64_t requests) override { traceRequests_ = requests; }
  const Trace& trace() const override { return trace_; }
  double lossScale() const override { return lossScale_; }
  int64_t skippedUpdates() const override { return skippedTotal_; }
  LossScaleState lossScaleState() const override { return {lossScale_, cleanUpdates_, skippedTotal_, overflowTotal_}; }
  void setLossScaleState(const LossScaleState& st) override;
  double allReduceSeconds() const override { return allReduceSeconds_; }
  /// Updates whose gradients overflowed in half (skipped ones included; with static scaling they were applied).
  int64_t overflowUpdates() const { return overflowTotal_; }
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
  struct Ipu;
  struct Slots;
  struct MicroBatchRun;
  RunResult runRequest(const Batch& request, const UpdateHooks& hooks);
  // One weight update (training) or one inference pass over `mbs` (per replica, G micro-batches each).
  void runUpdate(std::vector<std::vector<MicroBatchRun>>& mbs, int64_t iteration, int64_t step, uint64_t seed,
                 RunResult& result);
  void runTask(int64_t replica, const ScheduledTask& t, Slots& slots, std::vector<std::vector<MicroBatchRun>>& mbs,
               int64_t iteration, int64_t step, uint64_t seed, double totalWeight);
  void recordTask(const TaskRecord& r);
  // The same slice (all-reduce, optimizer) on every simulated IPU's track.
  void recordOnEveryIpu(TaskKind kind, int64_t iteration, double start, double end);
  // Micro-batches a request of `microBatches` runs: whole updates, padded or dropped per PartialRequest.
  int64_t microBatchesToRun(int64_t microBatches) const;
  double now() const;
  // Every replica's weights from the master's (fp16: rounded to half).
  void syncReplicas();
  // --eight-bit-io: integer features through the host link as uint8 (checked), widened again; returns the
  // bytes that crossed the link.
  int64_t narrowIntegerFeatures(Batch& b, int64_t microBatch) const;
  // Replica r is global (0 .. R-1); this process holds replicas [rLo_, rLo_ + Rl_).
  Ipu& ipu(int64_t replica, int64_t stage) { return *ipus_[static_cast<size_t>((replica - rLo_) * P_ + stage)]; }
  BlockModel& replica(int64_t r) { return *replicas_[static_cast<size_t>(r - rLo_)]; }
  std::vector<Variable>& replicaParams(int64_t r) { return params_[static_cast<size_t>(r - rLo_)]; }
  bool local(int64_t r) const { return r >= rLo_ && r < rLo_ + Rl_; }
  // Replicas spread over processes: every process's per-micro-batch weights and samples at the start of a request
  // (into `all`, global order), and at the end of an update (or inference pass) the losses, outputs and gradients
  // of the other processes' replicas, or the error one of them hit.
  bool distributed() const { return isDistributed(o_.processes.get()); }
  void exchangeRequest(std::vector<MicroBatchRun>& mine, std::exception_ptr error, std::vector<MicroBatchRun>& all);
  void exchangeUpdate(std::vector<std::vector<MicroBatchRun>>& mbs, std::exception_ptr error, int64_t& overflows,
                      std::vector<std::vector<std::vector<Tensor>>>& remoteGrads);

  std::string deviceName_;
  BlockModel& master_;
  LossFn loss_;
  Optimizer* opt_;
  IpuOptions o_;
  bool training_, simulated_;
  int64_t P_ = 1, R_ = 1, G_ = 1, numIpus_ = 1, workers_ = 1;
  int64_t rLo_ = 0, Rl_ = 1;  // this process's replicas
  RequestShard shard_;
  Batch shapes_;              // padding for a process none of whose micro-batches of a short request are real
  std::vector<std::pair<size_t, size_t>> stageBlocks_;
  PipelineSchedule schedule_;
  std::vector<std::unique_ptr<Module>> clones_;   // local replicas after the first (fp16: every one)
  std::vector<BlockModel*> replicas_;             // local; [0] = the model itself (fp16: a clone holding half weights)
  std::vector<std::vector<Variable>> params_;     // per local replica, in the optimizer's order
  std::vector<Variable> masterParams_;            // the optimizer's (fp32 master) parameters
  bool fp16_ = false;
  LossScaling scaling_;
  double lossScale_ = 1;
  int64_t cleanUpdates_ = 0, skippedTotal_ = 0, overflowTotal_ = 0;
  std::shared_ptr<MemoryAccount> streaming_;
  // Stage whose sink first received parameter i's gradient (-1: not yet known): where its state lives.
  std::shared_ptr<std::vector<int64_t>> ownerStage_;
  std::vector<std::unique_ptr<Ipu>> ipus_;        // local replicas, replica-major: ipu(r, s)
  uint64_t exchanges_ = 0;
  double allReduceSeconds_ = 0;
  CompileRecord record_;
  Trace trace_;
  int64_t traceRequests_ = 0;
  int64_t requests_ = 0;
  bool capturing_ = false;
  bool checkLossFinite_ = true;
  UpdateHooks hooks_;
  std::chrono::steady_clock::time_point t0_;
  bool started_ = false;
  // Measured seconds and counts of forward / backward tasks per stage.
  std::vector<double> fwdSeconds_, bwdSeconds_;
  std::vector<int64_t> fwdCount_, bwdCount_;
};

}  // namespace gnn
