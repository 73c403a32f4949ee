// CostModel: how long a step takes on the simulated IPUs, from the compile record's FLOPs and bytes and the
// IpuSpec's figures. Per op, the terms fitted to published kernel-level IPU measurements (device/CostFit.h,
// device/costfit/): a fixed cost and element-wise bytes per cycle; matmuls on the AMP units at a shape-dependent
// share of peak; gathers and scatters by indices, table rows and bytes on the tile exchange; arithmetic-heavy ops
// bounded by the vector units. Per stage: the sum of its ops. Per weight update: the pipeline schedule played out
// with those durations and the inter-IPU copies (the same PipelineSchedule the engine runs), then the gradient
// all-reduce over the replicas (ring), the optimizer step (with streaming-memory traffic when its state is
// offloaded), the host transfers and phase loads. Every figure is a field of IpuSpec with its source; nothing is
// fitted to a whole model's throughput (those are the checks).
//
//   CostPlan c = planCost(profile, stages, options, IpuSpec::bow(), /*samplesPerMicroBatch=*/64);
//   c.samplesPerSecond;  c.bottleneckStage;  c.split.bubble;
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "device/MemoryModel.h"
#include "device/Trace.h"

namespace gnn {

/// Seconds of one op on one IPU at `precision` (a backward pass when op.backward); `ampBytes` caps a matmul's
/// temporaries (slower plan beyond).
double opSeconds(const OpCost& op, Precision precision, const IpuSpec& spec, double ampBytes);

/// Seconds to send the state block `lastBlock` hands on to the next IPU over the IPU-Links.
double copySeconds(const ModelProfile& model, int64_t lastBlock, const IpuOptions& options, const IpuSpec& spec);

struct StageCost {
  double forward = 0, backward = 0, recompute = 0;  // seconds per micro-batch
  double compute = 0, exchange = 0;                 // of forward + backward + recompute: by op class
  double copyOut = 0;                               // activations to the next stage (and gradients back)
  double accumulate = 0;  // of backward: adding the weights' gradients to their accumulators (accumulation > 1)
  double busy = 0;                                  // per update: all its tasks
};

/// Blocks [first, last) on one IPU, per micro-batch (busy is left 0); `sendsOn`: a stage follows (copyOut).
StageCost stageCost(const ModelProfile& model, int64_t first, int64_t last, bool sendsOn, const IpuOptions& options,
                    const IpuSpec& spec);

/// One task of one weight update on the IPU clock (seconds from the update's start).
struct TimedTask {
  TaskKind kind = TaskKind::Forward;
  int64_t stage = 0, microBatch = 0;
  double start = 0, duration = 0;
};

/// Where one weight update's time goes; the parts add up to stepSeconds.
struct StepSplit {
  double compute = 0, exchange = 0, bubble = 0, allReduce = 0, hostIo = 0, optimizer = 0, streaming = 0;
};

struct CostPlan {
  std::vector<StageCost> stages;
  double pipelineSeconds = 0;   // the forward/backward schedule of one update (makespan)
  double allReduceSeconds = 0;  // gradients over the replicas (and RTS's all-gather)
  double networkSeconds = 0;    // the part of it between PODs (GW-Links) or hosts (IpuOptions::hosts > 1)
  int64_t collectives = 0;      // all-reduces per update on the slowest stage (one per weight tensor, or merged)
  std::string collectiveMethod; // GCL's method for the largest of them ("meet-in-the-middle ring", ...)
  double optimizerSeconds = 0;
  double hostSeconds = 0;       // per update: its micro-batches' transfers + callSeconds
  double callSeconds = 0;       // per update: the host request's call / device iterations (host-side work)
  double streamingSeconds = 0;  // phase loads and stores (phased execution)
  double stepSeconds = 0;       // per weight update (inference: per device iteration)
  double samplesPerUpdate = 0;
  double samplesPerSecond = 0;
  double utilisation = 0;       // busy time of all stages / (stages x pipeline time)
  int64_t bottleneckStage = 0;
  StepSplit split;
  std::vector<TimedTask> timeline;  // one update, including all-reduce and optimizer slices
};

CostPlan planCost(const ModelProfile& model, const StageBlocks& stages, const IpuOptions& options,
                  const IpuSpec& spec, double samplesPerMicroBatch);

}  // namespace gnn
