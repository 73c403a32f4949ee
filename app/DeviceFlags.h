// DeviceFlags: the device a training program runs on and its IpuOptions, with PopTorch's names: --device
// cpu|ipu, --replicas, --grad-accum, --device-iterations, --output-mode, --pipeline-splits, --execution
// pipelined|sharded|phased, --auto-round-num-ipus, --partial-request pad|drop, --trace FILE.json, --trace-svg
// FILE.svg; precision and memory: --precision, --loss-scaling, --stochastic-rounding, --offload-optimizer,
// --recompute / --no-recompute (on by default when pipelined over more than one stage, as PopTorch),
// --replicated-tensor-sharding, --eight-bit-io; planning: --ipu mk2|bow, --tile-memory, --available-memory-proportion,
// --pipeline-splits auto[:N], --plan-only, --plan-inference (with --json: the report as JSON on stdout),
// --report FILE.json; the host and many replicas: --plan-scaling (the plan at 1, 2, 4, ..., 64 replicas),
// --host-cores, --host-prep-ms, --ipus-per-host, --ipus-per-pod.
// --batch-size stays the micro-batch: one weight update is micro-batch × replicas × accumulation.
//
//   app::DeviceFlags df;
//   df.addTo(prog);
//   ... df.apply(prog);  auto device = makeDevice(df.device);  auto program = device->compile(..., df.options);
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "app/Program.h"
#include "app/TrainingFlags.h"
#include "device/Device.h"
#include "device/PackingProfile.h"

namespace gnn {
class FixedSizeDataLoader;
}

namespace gnn::app {

/// What the plan knows of the data beside the micro-batch's shapes: the samples (real graphs) a micro-batch
/// trains on, the loader's packs, and the loader itself, whose preparation the plan commands time.
struct PlanInputs {
  double samplesPerMicroBatch = 0;
  PackingProfile packing;                  // known when a loader gave it
  FixedSizeDataLoader* loader = nullptr;   // timed by --plan-only, --plan-inference, --plan-scaling
  int64_t loaderEpoch = 0;                 // the epoch the loader is on
  /// Adds the model's own terms to the report's JSON (--plan-only --json, --report): the heterogeneous models'
  /// memory by node type and relation (app/HeteroNodeDevice.h).
  std::function<void(const Plan&, nlohmann::json&)> extendReport;
};

struct DeviceFlags {
  std::string device = "cpu";
  int64_t replicas = 1, gradAccum = 1, deviceIterations = 1;
  std::string outputMode = "default", pipelineSplits, execution = "pipelined", partialRequest = "pad";
  bool autoRound = false;
  // Precision and memory-saving options (IpuOptions), planning (device/Plan.h).
  std::string precision = "fp32", lossScaling = "auto";
  bool stochasticRounding = false, offloadOptimizer = false, recompute = false, rts = false, eightBitIo = false;
  bool noRecompute = false;  // turns off the recomputation a pipelined program has by default
  std::string ipuSpec = "mk2";
  double availableMemoryProportion = 0.6;
  int64_t tileMemory = 0;  // --tile-memory: bytes per tile (0: the --ipu's)
  bool planOnly = false, planInference = false, planScaling = false;
  // The hosts: cores per host (default: this machine's), a stated preparation time per micro-batch on one core
  // (0: timed on the loader); in the scaling table, IPUs per host (an IPU-M2000 / Bow-2000 holds 4) and per POD
  // (IPUs joined by IPU-Links: a POD64).
  int64_t hostCores = 0, ipusPerHost = 4, ipusPerPod = 64;
  double hostPrepMs = 0;
  // How the host feeds the IPUs in the plan: sync (PopTorch's DataLoader default) | async.
  std::string loaderMode = "sync";
  bool mergeAllReduce = false;
  bool syntheticData = false;  // --synthetic-data: plans without host I/O (PopTorch's enableSyntheticData)
  std::string report;
  std::string trace, traceSvg;
  int64_t traceRequests = 2;
  // Processes (mpirun) and the network the plan assumes between hosts.
  double mpiTimeout = 30;
  int64_t hosts = 1;
  double networkGbps = 100, networkLatencyUs = 10;
  IpuOptions options;

  void addTo(Program& prog);
  /// Checks the values (UsageError in flag terms) and fills `options` (under mpirun, with the job's processes).
  void apply(const Program& prog);
  bool simulated() const { return device == "ipu"; }
  /// Micro-batches per host request (the loader's microBatchesPerRequest).
  int64_t microBatchesPerRequest() const { return options.microBatchesPerRequest(); }
  /// The --json keys of the issue: device, ipus, replicas, grad_accum, device_iterations, stages, host_requests;
  /// recompute (whether the program ran with recomputation, default or asked).
  nlohmann::json toJson(const DeviceProgram& program) const;
  /// Writes --trace / --trace-svg when asked; on the simulated IPU's clock when the program has a plan. Under
  /// mpirun every rank must call it: rank 0 writes one trace holding every rank's tracks ("rank 1: IPU 1 ...").
  void writeTraces(const DeviceProgram& program, const std::string& title) const;
  /// Compiles the training (optimizer given) or inference program on the device. The simulated IPU plans it
  /// first: --plan-only prints the memory and cost report (stdout), writes --report and ends the program
  /// (EarlyExit: 0 when it fits, 3 when not; with --json the report is one JSON object on stdout, the content
  /// of --report); a plan that does not fit throws OutOfMemory (exit 3 with the report); --report is written
  /// either way. Bad options are UsageErrors. `samplesPerMicroBatch`: graphs one
  /// micro-batch trains on (the batch size), for samples/s.
  std::unique_ptr<DeviceProgram> compile(const Program& prog, BlockModel& model, LossFn lossFn, Optimizer* optimizer,
                                         const Batch& shapes, double samplesPerMicroBatch, bool quiet) const;
  /// The same, planned from the training loader: samples/s counts its real graphs per micro-batch (packs x mean
  /// real graphs per pack, PackingProfile), and the plan commands time its preparation of micro-batches (at
  /// most 20 or 2 s) against the device (HostCost). The loader is on epoch 0 and left at its start.
  std::unique_ptr<DeviceProgram> compile(const Program& prog, BlockModel& model, LossFn lossFn, Optimizer* optimizer,
                                         const Batch& shapes, FixedSizeDataLoader& loader, bool quiet) const;
  std::unique_ptr<DeviceProgram> compile(const Program& prog, BlockModel& model, LossFn lossFn, Optimizer* optimizer,
                                         const Batch& shapes, const PlanInputs& inputs, bool quiet) const;
  /// The plan's --json keys: memory_per_ipu_mb, memory_budget_mb, estimated_samples_per_s, pipeline_utilisation,
  /// bottleneck_stage (empty without a plan).
  nlohmann::json planJson(const DeviceProgram& program) const;
};

}  // namespace gnn::app
