// Device: where a model's steps run. compile() fixes the model, the loss, the optimizer, the micro-batch's
// shapes and the IpuOptions into a DeviceProgram; program.run(hostRequest) then runs one host request (its
// forwards, backwards and weight updates) and returns the outputs the output mode asks for. A training loop is
// written once against this interface and runs on CpuDevice (one thread of control, today's behaviour) or
// SimulatedIpu (replicas, pipeline stages and micro-batches as tasks on a few worker threads). Data goes one way:
// what the device needs (the random seed, the learning rates, the clipping norm) comes in RunArgs, what happened
// (per update: loss, samples, gradient norm) comes back in RunResult, and a check that stops a request throws a
// typed exception (NonFiniteLoss, NonFiniteGradient, NonFiniteWeights); the device never calls its caller back.
//
//   SimulatedIpu ipu;
//   auto program = ipu.compile(model, l1Loss, &opt, firstBatch, options);
//   for (Batch request; loader.nextRequest(request);) {
//     RunResult r = program->run(request, args);        // r.outputs per options.outputMode, r.updateResults
//   }
#pragma once
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "device/CompileRecord.h"
#include "device/IpuOptions.h"
#include "device/Trace.h"
#include "gnn/optim/LrSchedule.h"
#include "gnn/optim/Optimizer.h"
#include "loaders/Batch.h"
#include "models/BlockModel.h"

namespace gnn {

/// The loss of a micro-batch and its weight. `loss` is a mean over `weight(microBatch)` terms (its labels), so
/// the device seeds micro-batch k's backward with weight_k / (the update's total weight): the update's gradient
/// is the mean over every labelled term of the update, however it was split into micro-batches and replicas.
/// The weight is read from the batch before any forward runs (a pipeline starts backwards before the last
/// micro-batch's forward). Without `weight`, every micro-batch weighs its labels (yMask ones; numRealGraphs
/// when there is no mask).
struct LossFn {
  std::function<Variable(const Variable& output, const Batch& microBatch)> loss;
  std::function<double(const Batch& microBatch)> weight;
};
/// Labels of a micro-batch: ones of `mask`, or `fallback` when the mask is undefined.
double labelCount(const Tensor& mask, double fallback);

/// What a host request needs besides its micro-batches: data only.
struct RunArgs {
  /// Random streams: micro-batch k of a request trained at optimizer step t draws from (seed, t, k) (dropout
  /// masks, stochastic rounding), so a resumed run draws what an uninterrupted one would.
  uint64_t seed = 0;
  /// Inference programs: the step of that key (training uses the optimizer's step count).
  int64_t step = 0;
  /// Each update's learning rate: baseLr × schedule->factor(t) at the optimizer step t it makes (baseLr
  /// without a schedule). Unset: the optimizer's rate as it is.
  std::optional<double> baseLr;
  const LrSchedule* schedule = nullptr;
  /// > 0: the update's reduced gradients are clipped to this global L2 norm (clipGradNorm) before it is applied.
  double clipNorm = 0;
  /// Stop the request with NonFiniteGradient when an update's gradients hold NaN or Inf (before it is applied),
  /// and with NonFiniteWeights when an update made a weight non-finite. Off: they are applied as they are
  /// (fp16 with static loss scaling counts such an update as an overflow).
  bool checkFinite = false;
};

/// One weight update of a host request (RunResult::updateResults, in order).
struct UpdateResult {
  double loss = NAN;       // weighted mean over its micro-batches
  int64_t samples = 0;     // real graphs
  double gradNorm = NAN;   // global L2 norm of its reduced gradients before clipping (with clipNorm or
                           // checkFinite); NaN when not computed or the update was skipped
  bool skipped = false;    // fp16, dynamic loss scaling: skipped on gradient overflow (its micro-batches ran)
};

/// One micro-batch's result on one replica.
struct MicroBatchOutput {
  int64_t iteration = 0;   // device iteration (weight update) within the request
  int64_t microBatch = 0;  // micro-batch within the update, per replica (0 .. accumulation-1)
  int64_t replica = 0;
  double loss = 0;         // training only (Sum: the sum over the request)
  double weight = 0;
  Tensor output;           // the model's output (Sum: summed over the request)
};

struct RunResult {
  std::vector<MicroBatchOutput> outputs;  // per the output mode
  int64_t updates = 0;                    // weight updates applied
  int64_t microBatches = 0;               // real micro-batches run (per replica summed)
  int64_t paddedMicroBatches = 0;         // weight-0 micro-batches added to complete the last update
  int64_t droppedMicroBatches = 0;        // micro-batches of a partial request not run (PartialRequest::Drop)
  int64_t samples = 0;                    // real graphs trained on
  int64_t skippedUpdates = 0;             // fp16, dynamic loss scaling: updates skipped on gradient overflow
                                          // (not applied, not counted in `updates` nor in the optimizer's steps)
  double seconds = 0;                     // wall time of the request
  std::vector<UpdateResult> updateResults;  // training: every update run, skipped ones included, in order
};

struct Plan;

/// fp16 loss scaling's state between updates (see ExecutionProgram: dynamic scaling halves on overflow and doubles
/// after growthInterval clean updates).
struct LossScaleState {
  double scale = 1;
  int64_t cleanUpdates = 0;  // clean updates in a row since the scale last changed
  int64_t skipped = 0;       // updates skipped on overflow
  int64_t overflows = 0;     // updates whose gradients overflowed (skipped or, with static scaling, applied)
  /// A finite, positive scale and counts that are not negative (what a checkpoint may hand back).
  bool valid() const { return std::isfinite(scale) && scale > 0 && cleanUpdates >= 0 && skipped >= 0 && overflows >= 0; }
};

/// A compiled program: fixed shapes, fixed options.
class DeviceProgram {
 public:
  virtual ~DeviceProgram() = default;
  /// The memory and cost plan made when it was compiled (device/Plan.h); null on the CPU device.
  const Plan* plan() const { return plan_.get(); }
  void setPlan(std::shared_ptr<const Plan> plan) { plan_ = std::move(plan); }
  /// Runs one host request: a micro-batch or microBatchesPerRequest() micro-batches stacked by
  /// stackMicroBatches (fewer at the end of an epoch: see PartialRequest). Throws std::invalid_argument when a
  /// micro-batch's shapes differ from the compiled ones (naming the field and both shapes).
  /// A check that stops the request part-way throws a RequestStopped (the updates before it stay applied).
  virtual RunResult run(const Batch& request, const RunArgs& args = {}) = 0;
  virtual bool training() const = 0;
  virtual const IpuOptions& options() const = 0;
  /// Stages as block ranges, e.g. {"input..layers/1", "layers/2..head"}.
  virtual std::vector<std::string> stageNames() const = 0;
  /// Simulated IPUs used (1 on CpuDevice).
  virtual int64_t numIpus() const = 0;
  /// Totals since compile.
  virtual int64_t hostRequests() const = 0;
  /// Weight updates a host request of `microBatches` micro-batches makes (the epoch's last one may be short:
  /// PartialRequest decides); 0 for inference programs.
  virtual int64_t updatesFor(int64_t microBatches) const = 0;
  /// Per-stage summary for people: ops, parameters, FLOPs per micro-batch, measured ms per micro-batch.
  virtual std::string stageTable() const = 0;
  /// What the first request captured: ops per stage, shapes, parameters per stage (see CompileRecord).
  virtual const CompileRecord& record() const = 0;
  /// Records the tasks of the first `requests` host requests (0: none) for trace().
  virtual void enableTrace(int64_t requests) = 0;
  virtual const Trace& trace() const = 0;
  /// fp16: the loss scale the next update uses (1 without loss scaling).
  virtual double lossScale() const { return 1; }
  /// fp16 with dynamic loss scaling: updates skipped since compile (or since the run a checkpoint continues).
  virtual int64_t skippedUpdates() const { return 0; }
  /// Loss scaling's state, which a checkpoint carries so that a resumed fp16 run continues with the scale (and
  /// the count towards its next growth) it stopped with and reaches the bits of an uninterrupted run.
  virtual LossScaleState lossScaleState() const { return {}; }
  /// Sets it (from a checkpoint), before the first request; refuses a scale that is not finite and positive.
  virtual void setLossScaleState(const LossScaleState&) {}
  /// Wall seconds spent since compile reducing the replicas' gradients (across processes: the exchange,
  /// waiting for the slowest rank included), and the updates they were for.
  virtual double allReduceSeconds() const { return 0; }
  /// Across processes: the bytes this process sent and received summing the replicas' gradients (totals since
  /// compile, and the updates they were for), and the bytes of one summed gradient. All 0 in one process.
  struct ExchangeBytes {
    int64_t sent = 0, received = 0, updates = 0, gradient = 0;
  };
  virtual ExchangeBytes exchangeBytes() const { return {}; }

 protected:
  std::shared_ptr<const Plan> plan_;
};

/// A host request stopped part-way by a check. completedUpdates(): the updates of the request applied before it,
/// in order, which the caller books as if run() had returned them.
class RequestStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  const std::vector<UpdateResult>& completedUpdates() const { return completed_; }
  void setCompletedUpdates(std::vector<UpdateResult> updates) { completed_ = std::move(updates); }

 private:
  std::vector<UpdateResult> completed_;
};

/// A micro-batch's loss was NaN or infinite: nothing of its weight update was applied.
class NonFiniteLoss : public RequestStopped {
 public:
  /// `where`: "micro-batch 3 of the host request (replica 1, device iteration 0)".
  NonFiniteLoss(double value, int64_t microBatch, std::string where)
      : RequestStopped("the loss is " + std::to_string(value) + " on " + where), value_(value),
        microBatch_(microBatch), where_(std::move(where)) {}
  const std::string& where() const { return where_; }
  double value() const { return value_; }
  /// Position of the micro-batch in the host request (stackMicroBatches order).
  int64_t microBatch() const { return microBatch_; }

 private:
  double value_;
  int64_t microBatch_;
  std::string where_;
};

/// RunArgs::checkFinite found a parameter holding NaN or Inf after update `update` of the request (0-based).
class NonFiniteParameter : public RequestStopped {
 public:
  NonFiniteParameter(const std::string& message, int64_t parameter, int64_t update)
      : RequestStopped(message), parameter_(parameter), update_(update) {}
  int64_t parameter() const { return parameter_; }
  int64_t update() const { return update_; }

 private:
  int64_t parameter_, update_;
};

/// The update's reduced gradient held NaN or Inf, first that of optimizer parameter `parameter` (the optimizer's
/// order); the update was not applied.
class NonFiniteGradient : public NonFiniteParameter {
 public:
  NonFiniteGradient(int64_t parameter, int64_t update)
      : NonFiniteParameter("the gradient of parameter " + std::to_string(parameter) +
                               " holds non-finite values in update " + std::to_string(update) + " of the host request",
                           parameter, update) {}
};

/// The update made the weights of model parameter `parameter` (parameters() order) non-finite; the update stays
/// applied.
class NonFiniteWeights : public NonFiniteParameter {
 public:
  NonFiniteWeights(int64_t parameter, int64_t update)
      : NonFiniteParameter("update " + std::to_string(update) + " of the host request made the weights of parameter " +
                               std::to_string(parameter) + " non-finite",
                           parameter, update) {}
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const char* name() const = 0;
  /// Training program (optimizer given) or inference program (optimizer null, lossFn may be empty).
  /// SimulatedIpu plans the program first (planProgram): a plan that does not fit throws OutOfMemory
  /// (device/Plan.h) with the out-of-memory report, as a real IPU's compile fails.
  /// `shapes`: a micro-batch of the fixed shapes every later micro-batch must have.
  virtual std::unique_ptr<DeviceProgram> compile(BlockModel& model, LossFn lossFn, Optimizer* optimizer,
                                                 const Batch& shapes, const IpuOptions& options) = 0;
};

/// What compiling `options` for `model` on simulated IPUs would use, without changing the model: one
/// micro-batch (`shapes`) runs forward and backward on a copy of the model to capture its compile record, then
/// the memory and cost models plan `options` on it (with options.autoPipelineSplits, choosing the splits).
/// `optimizer` only tells the optimizer's state per parameter (null: an inference program).
Plan planProgram(BlockModel& model, const LossFn& lossFn, const Optimizer* optimizer, const Batch& shapes,
                 const IpuOptions& options);

/// "cpu" or "ipu" -> a device; throws naming the choices otherwise.
std::unique_ptr<Device> makeDevice(const std::string& name);

/// L2 norm of every parameter value of a model, summed in double in parameter order (--json's param_l2).
double paramL2(const Module& model);
/// FNV-1a over the bytes of every parameter value, in parameter order, as 16 hex digits (--json's
/// param_checksum): equal exactly when the weights are the same bits.
std::string paramChecksum(const Module& model);

}  // namespace gnn
