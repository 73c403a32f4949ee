// IpuOptions: how a program runs on a device, with PopTorch's names and rules (ipu/README.md beside DESIGN.md):
// replicationFactor (data parallel copies), gradientAccumulation (micro-batches per weight update),
// deviceIterations (weight updates, or inference batches, per host request), outputMode (which micro-batches'
// results come back), the execution strategy of a model split into stages (Pipelined or Sharded) at named
// blocks, and autoRoundNumIpus. One host request holds micro-batch × deviceIterations × replicas ×
// accumulation samples; one weight update micro-batch × replicas × accumulation.
//
//   IpuOptions o;
//   o.replicationFactor = 2;  o.gradientAccumulation = 4;  o.pipelineSplits = {"layers/2"};
//   o.validate(/*training=*/true, /*stages=*/2);     // throws with PopTorch's wording when a rule is broken
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device/ProcessGroup.h"
#include "gnn/ops/MatmulPrecision.h"
#include "loaders/RequestShard.h"

namespace gnn {

/// Which micro-batches' outputs a host request returns (PopTorch's poptorch.OutputMode).
enum class OutputMode { Default, All, Sum, Final, EveryN };
const char* outputModeName(OutputMode m);
/// "all", "sum", "final", "every:N" / "everyN:N" (sets *period); throws on anything else.
OutputMode parseOutputMode(const std::string& text, int64_t* period);

/// How the stages of a split model run (PopTorch's execution strategies).
enum class ExecutionStrategy {
  Pipelined,  // every stage on its own IPU at once, micro-batches in flight (PopART's implicit pipelining)
  Sharded,    // stages one after the other, one IPU busy at a time
  Phased,     // one phase (a stage's block range) resident at a time: weights and optimizer state in streaming
              // memory, every micro-batch of the update through a phase before the next loads (batch
              // serialisation), activations kept in streaming memory between phases (PopTorch's SerialPhased)
};
const char* executionStrategyName(ExecutionStrategy s);
ExecutionStrategy parseExecutionStrategy(const std::string& text);

/// What a host request with fewer micro-batches than deviceIterations × replicas × accumulation (the end of
/// an epoch) does. PopTorch's DataLoader drops it silently by default; here the choice is explicit and the
/// count is reported either way.
enum class PartialRequest {
  Pad,   // completes the last weight update with weight-0 micro-batches (they change nothing); the default
  Drop,  // runs the complete weight updates only; the micro-batches left over are counted as dropped
};
const char* partialRequestName(PartialRequest p);
PartialRequest parsePartialRequest(const std::string& text);

/// Storage and compute precision of weights, activations and gradients on the device.
enum class Precision {
  FP32,
  FP16,  // IEEE half values (round to nearest even, or stochastic), fp32 master weights, optimizer state and
         // accumulation; overflow saturates to +-65504 (the IPU's default; see docs/device.md)
  BF16,  // the CPU device only: float32 values, matrix products on bfloat16 inputs with float32 accumulation
         // (gnn/ops/MatmulPrecision.h); the simulated IPU refuses it
};
/// "fp32", "fp16" or "bf16".
const char* precisionName(Precision p);
/// fp32 / float32, fp16 / float16 / half, bf16 / bfloat16; throws std::invalid_argument naming the choices.
Precision parsePrecision(const std::string& text);
/// The products' precision every context of a program with this precision runs under.
MatmulPrecision matmulPrecisionOf(Precision p);

/// Loss scaling for fp16 training (the backward's seed is multiplied by `scale`, the gradients divided by it
/// before the update).
struct LossScaling {
  enum class Mode { None, Static, Dynamic };
  Mode mode = Mode::None;
  double scale = 1;             // static: the scale; dynamic: the initial scale
  int64_t growthInterval = 1000;  // dynamic: updates without overflow before the scale doubles
  /// "none", "static:S", "dynamic" or "dynamic:S" (S: the initial scale); throws on anything else.
  static LossScaling parse(const std::string& text);
  std::string describe() const;
};

/// Options grouped by concern, as PopTorch groups them (opts.Training, opts.Precision, opts.TensorLocations,
/// opts.Distributed). IpuOptions derives from every group, so the ~300 places that read `o.gradientAccumulation`
/// or set `o.recompute` stay as they are, while code that needs one concern (the loss scaler, the memory model)
/// can take just that group.

/// Replicas, accumulation and what a host request holds and returns.
struct TrainingOptions {
  int64_t replicationFactor = 1;
  int64_t gradientAccumulation = 1;
  int64_t deviceIterations = 1;
  OutputMode outputMode = OutputMode::Default;
  /// Period of OutputMode::EveryN: micro-batch steps 0-based n-1, 2n-1, ... come back.
  int64_t outputPeriod = 1;
  PartialRequest partialRequest = PartialRequest::Pad;

  /// OutputMode::Default resolved: Final for training, All for inference (PopTorch).
  OutputMode resolvedOutputMode(bool training) const;
  /// Micro-batches in one host request (training: × accumulation; inference: accumulation must be 1).
  int64_t microBatchesPerRequest() const { return deviceIterations * replicationFactor * gradientAccumulation; }
};

/// How the stages of a model run and on how many threads.
struct ExecutionOptions {
  ExecutionStrategy executionStrategy = ExecutionStrategy::Pipelined;
  /// Block names that start a new stage ("layers/4"), in model order. Empty: one stage.
  std::vector<std::string> pipelineSplits;
  /// Round the number of IPUs (replicas × stages) up to a power of two, as PopTorch requires of real hardware.
  bool autoRoundNumIpus = false;
  /// Worker threads running tasks (0: the machine's cores, never more than the tasks that can run at once).
  int64_t workers = 0;
};

/// Storage and compute precision, and fp16's loss scaling and rounding.
struct PrecisionOptions {
  Precision precision = Precision::FP32;
  LossScaling lossScaling;        // fp16 only; default with fp16: dynamic (see resolvedLossScaling)
  bool stochasticRounding = false;  // fp16: round to half stochastically, seeded by the step's random key
  uint64_t stochasticRoundingSeed = 0;

  /// With fp16 and no loss scaling asked for: dynamic scaling from 2^16 (as PyTorch's GradScaler); with fp32:
  /// none.
  LossScaling resolvedLossScaling() const;
};

/// The options that trade memory for time (PopTorch's TensorLocations and recomputation). Each is exact: the
/// fp32 weights after training are the same as without it.
struct MemoryOptions {
  bool offloadOptimizer = false;    // optimizer state (and fp32 master weights) in streaming memory
  bool recompute = false;           // keep each block's input only; recompute the blocks in the backward
  /// PopTorch's default: a training program pipelined over more than one stage recomputes even without
  /// `recompute` (its compiler sets PopART's autoRecomputation to Pipeline when pipelining over more than one IPU,
  /// unless the option was set). false: only `recompute` decides (PopART's RecomputationType::NoRecompute).
  bool recomputeWhenPipelined = true;
  bool replicatedTensorSharding = false;  // optimizer state sharded over the replicas, shards all-gathered
  bool eightBitIo = false;          // integer features cross the host link as uint8, widened on the device
};

/// Planning (memory and cost models; device/IpuSpec.h).
struct PlanningOptions {
  std::string ipuSpec = "mk2";             // "mk2" (GC200) or "bow"
  double availableMemoryProportion = 0.6;  // PopTorch's default: share of tile memory matmul temporaries may use
  bool autoPipelineSplits = false;         // choose pipelineSplits with the cost model (--pipeline-splits auto)
  int64_t autoStages = 0;                  // with autoPipelineSplits: stages wanted (0: the fewest that fit)
  int64_t bytesPerTile = 0;                // 0: the IpuSpec's (624 KiB); a smaller or larger tile memory to plan for
  double samplesPerMicroBatch = 0;         // graphs one micro-batch trains on (0: the compile batch's real graphs)
  /// How the host feeds the device (device/HostCost.h): false, PopTorch's DataLoader default (DataLoaderMode.Sync):
  /// each host request is prepared between calls; true (an AsynchronousDataAccessor, DataLoaderMode.Async): a
  /// worker prepares requests while the IPUs run.
  bool asyncLoading = false;
  /// The gradients' all-reduce over the replicas: false, PopART's default (SessionOptions
  /// replicatedCollectivesSettings.mergeAllReduceCollectives = false): one collective per weight tensor, each
  /// paying the ring's latency; true: merged into one collective per stage (what Graphcore's examples turn on).
  bool mergeAllReduce = false;
  /// IPUs joined by IPU-Links (an IPU-POD64's 2D torus): replicas beyond it reach the others over GW-Links, in
  /// GCL's three phases (device/Collectives.h).
  int64_t ipusPerPod = 64;
  /// PopTorch's Options.enableSyntheticData: the device makes its inputs (no host transfers) and the host
  /// prepares nothing, as Graphcore's device-bound benchmarks run; each host request still costs its call.
  bool syntheticData = false;
};

/// Replicas across processes (MPI; PopTorch: Options.Distributed.configureProcessId(rank, size) with PopRun).
struct DistributedOptions {
  /// The processes the replicas are spread over (null or one process: every replica here). This process runs
  /// its share (shard()); its loader must give it only those micro-batches (FixedSizeDataLoader::Options::shard).
  std::shared_ptr<ProcessGroup> processes;
  /// Planning only: hosts the replicas are spread over (1: every IPU-Link is inside one host), and the network
  /// between hosts (the cost model's all-reduce crosses it when hosts > 1). Default: 100 Gb/s Ethernet, as the
  /// host network of an IPU-POD (assumption: ../shared/ipu/README.md gives no inter-host figure), 10 us latency.
  int64_t hosts = 1;
  double networkBytesPerSecond = 12.5e9;
  double networkLatencySeconds = 10e-6;
};

struct IpuOptions : TrainingOptions,
                    ExecutionOptions,
                    PrecisionOptions,
                    MemoryOptions,
                    PlanningOptions,
                    DistributedOptions {
  /// This process's micro-batches of a host request (every one without processes).
  RequestShard shard(bool training) const;

  /// Checks every rule that does not need the model; `stages` = pipelineSplits.size() + 1. Throws
  /// std::invalid_argument saying what to change.
  void validate(bool training, int64_t stages) const;
  /// Whether a program of `stages` stages recomputes: `recompute`, or PopTorch's default for a training program
  /// pipelined over more than one stage (recomputeWhenPipelined). An inference program has no backward to
  /// recompute for; the flag then changes nothing.
  bool recomputes(bool training, int64_t stages) const;
  /// True when recomputes() is on by that default alone (`recompute` not set).
  bool recomputesByDefault(bool training, int64_t stages) const;
  /// Simulated IPUs: replicas × stages, rounded up to a power of two with autoRoundNumIpus.
  int64_t numIpus(int64_t stages) const;
  /// The memory-saving and precision options in force, comma-separated ("fp16, dynamic loss scaling from 65536,
  /// recompute"); "" when none.
  std::string describeMemoryOptions() const;
  /// One line: "2 replicas x 4 stages (pipelined), accumulation 8, 1 device iteration(s), output final".
  std::string describe(int64_t stages) const;
};

}  // namespace gnn
