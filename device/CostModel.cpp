#include "device/CostModel.h"

#include <algorithm>
#include <cmath>

#include "device/Collectives.h"
#include "device/PipelineSchedule.h"

namespace gnn {

namespace {
// Non-matmul arithmetic runs on the tiles' vector units: an assumption of 8 fp32 (16 fp16) FLOP per cycle per
// tile, a quarter of the AMP unit's peak (the IPU's f32v2/f16v4 instructions on a 6-thread tile). No kernel data
// was found to fit it; it binds only for arithmetic-heavy element-wise ops.
constexpr double kVectorShareOfPeak = 0.25;

// Exchange ops that move rows by index into a table (scatter-adds, segment reductions, sparse products, fused
// message sums) are charged the scatter terms; the rest (gathers, lookups, layout changes) the gather terms.
// A backward swaps them: a gather's gradient is a scatter-add, a scatter's a gather.
bool scatterLike(const std::string& name) {
  return name.rfind("scatter", 0) == 0 || name.rfind("segment", 0) == 0 || name == "spmm" ||
         name == "reluMessageSum" || name == "filterMessageSum";
}

// Cycles of one op (device/CostFit.h's terms, read from `spec`); `backward`: the op is a backward pass.
double opCycles(const OpCost& op, bool backward, Precision p, const IpuSpec& spec, double ampBytes) {
  const bool fp16 = p == Precision::FP16;
  const double bytes = static_cast<double>(op.bytes) * (op.floating ? floatScale(p) : 1.0);
  const double flops = static_cast<double>(op.flops);
  const double tiles = static_cast<double>(spec.tiles);
  const double peak = tiles * (fp16 ? spec.flopsPerCycleFp16 : spec.flopsPerCycleFp32);  // FLOP per cycle
  const double vector = flops / (peak * kVectorShareOfPeak);
  switch (op.cls) {
    case OpClass::Matmul: {
      // h = MKN / (MK + KN + MN), about the smallest dimension: 2 x FLOPs over the fp32 bytes the op records.
      const double h = op.bytes > 0 ? 2.0 * flops / static_cast<double>(op.bytes) : 0.0;
      double eff = spec.matmulPeakShare * (h > 0 ? h / (h + spec.matmulHalfDim) : 1.0);
      // Poplar's planner keeps a matmul's temporaries within availableMemoryProportion: a larger working set is
      // computed in serial passes, which we charge as proportionally lower efficiency.
      if (bytes > ampBytes && ampBytes > 0) eff *= ampBytes / bytes;
      const double compute = eff > 0 ? flops / (peak * eff) : 0.0;
      return spec.opCycles + std::max(compute, bytes / spec.elementwiseBytesPerCycle);
    }
    case OpClass::Exchange: {
      const double indices = static_cast<double>(op.indices), table = static_cast<double>(op.tableRows);
      const double moved = scatterLike(op.name) != backward
                               ? spec.scatterCycles + spec.scatterCyclesPerIndex * indices + bytes / spec.scatterBytesPerCycle
                               : spec.gatherCycles + spec.gatherCyclesPerIndex * indices +
                                     spec.gatherCyclesPerTableRow * table + bytes / spec.gatherBytesPerCycle;
      return std::max(moved, vector);
    }
    case OpClass::Elementwise:
      break;
  }
  return spec.opCycles + std::max(bytes / spec.elementwiseBytesPerCycle, vector);
}

}  // namespace

double opSeconds(const OpCost& op, Precision p, const IpuSpec& spec, double ampBytes) {
  return opCycles(op, op.backward, p, spec, ampBytes) / spec.clockHz;
}

double copySeconds(const ModelProfile& m, int64_t lastBlock, const IpuOptions& o, const IpuSpec& spec) {
  const double bytes = static_cast<double>(m.blocks[static_cast<size_t>(lastBlock)].outputBytes) * floatScale(o.precision);
  return bytes / (spec.ipuLinkBytesPerSecond * static_cast<double>(spec.linksBetweenStages)) + spec.ipuLinkLatencySeconds;
}

StageCost stageCost(const ModelProfile& m, int64_t first, int64_t last, bool sendsOn, const IpuOptions& o,
                    const IpuSpec& spec) {
  const double ampBytes = o.availableMemoryProportion * static_cast<double>(spec.memoryBytes());
  StageCost sc;
  double fwdCompute = 0, fwdExchange = 0;
  for (int64_t b = first; b < last; ++b) {
    const BlockProfile& bp = m.blocks[static_cast<size_t>(b)];
    for (const OpCost& op : bp.forward) {
      const double t = opCycles(op, false, o.precision, spec, ampBytes) / spec.clockHz;
      sc.forward += t;
      (op.cls == OpClass::Exchange ? fwdExchange : fwdCompute) += t;
    }
    if (!m.training) continue;
    for (const OpCost& op : bp.backward) {
      const double t = opCycles(op, true, o.precision, spec, ampBytes) / spec.clockHz;
      sc.backward += t;
      (op.cls == OpClass::Exchange ? sc.exchange : sc.compute) += t;
    }
  }
  sc.compute += fwdCompute;
  sc.exchange += fwdExchange;
  // Gradient accumulation: PopART's Adam/SGD decomposition (popart `patterns/adamdecompose.cpp`) adds to each weight's
  // accumulator an AccumulateOp that runs every micro-batch, in the backward, while the optimizer's own ops run once
  // per update; the accumulator is float32 (PopTorch's `accum_type` default). One op per weight tensor reading the
  // gradient and the accumulator and writing the accumulator; without accumulation there is none.
  if (m.training && o.gradientAccumulation > 1) {
    double tensors = 0, params = 0;
    for (int64_t b = first; b < last; ++b) {
      tensors += static_cast<double>(m.blocks[static_cast<size_t>(b)].parameterTensors);
      params += static_cast<double>(m.blocks[static_cast<size_t>(b)].parameters);
    }
    const double gradBytes = o.precision == Precision::FP16 ? 2.0 : 4.0;
    sc.accumulate = (tensors * spec.opCycles + params * (gradBytes + 8.0) / spec.elementwiseBytesPerCycle) / spec.clockHz;
    sc.backward += sc.accumulate;
    sc.compute += sc.accumulate;
  }
  if (m.training && o.recompute) {
    sc.recompute = sc.forward;  // the forward runs again in the backward
    sc.compute += fwdCompute;
    sc.exchange += fwdExchange;
  }
  if (sendsOn) sc.copyOut = copySeconds(m, last - 1, o, spec);
  return sc;
}

namespace {

// What planCost's phases share: one weight update's shape under the options.
struct UpdateShape {
  int64_t P = 0, R = 0, G = 0;  // stages, replicas, micro-batches per update (inference: per device iteration)
  bool fp16 = false, phased = false;
  double fs = 1;    // floatScale(precision)
  int64_t pb = 4;   // bytes per weight
};

UpdateShape updateShape(const ModelProfile& m, const StageBlocks& stages, const IpuOptions& o) {
  UpdateShape u;
  u.P = static_cast<int64_t>(stages.size());
  u.R = o.replicationFactor;
  u.G = m.training ? o.gradientAccumulation : o.deviceIterations;
  u.fp16 = o.precision == Precision::FP16;
  u.fs = floatScale(o.precision);
  u.phased = o.executionStrategy == ExecutionStrategy::Phased;
  u.pb = u.fp16 ? 2 : 4;
  return u;
}

// Each stage's parameter count.
std::vector<int64_t> stageParameters(const ModelProfile& m, const StageBlocks& stages) {
  std::vector<int64_t> params(stages.size(), 0);
  for (size_t s = 0; s < stages.size(); ++s) {
    const auto [first, last] = stages[s];
    for (int64_t b = first; b < last; ++b) params[s] += m.blocks[static_cast<size_t>(b)].parameters;
  }
  return params;
}

// When each (stage, micro-batch)'s forward and backward ended on the update's clock; -1 until they have run.
struct TaskEnds {
  int64_t G;
  std::vector<double> forward, backward;
  size_t at(int64_t s, int64_t k) const { return static_cast<size_t>(s * G + k); }
};

// Moves `ready` to when task t's input is there: the previous stage's forward, or the next stage's backward (the
// last stage's backward: its own forward), with the copy between the IPUs; false while that task has not run.
bool inputReady(const ScheduledTask& t, const TaskEnds& ends, const UpdateShape& u, const CostPlan& c, double& ready) {
  if (t.kind == TaskKind::Forward) {
    if (t.stage > 0) {
      const double e = ends.forward[ends.at(t.stage - 1, t.microBatch)];
      if (e < 0) return false;
      ready = std::max(ready, e + (u.phased ? 0.0 : c.stages[static_cast<size_t>(t.stage - 1)].copyOut));
    }
  } else if (t.stage < u.P - 1) {
    const double e = ends.backward[ends.at(t.stage + 1, t.microBatch)];
    if (e < 0) return false;
    ready = std::max(ready, e + (u.phased ? 0.0 : c.stages[static_cast<size_t>(t.stage)].copyOut));
  } else if (ends.forward[ends.at(t.stage, t.microBatch)] < 0) {
    return false;
  }
  return true;
}

// Phased: loading a phase's weights (and, for its backward, its accumulators) from streaming memory when the lane
// enters another phase, and the micro-batches' activations stored and loaded between phases; delays `start`.
void streamPhase(const ScheduledTask& t, const ModelProfile& m, const StageBlocks& stages,
                 const std::vector<int64_t>& params, const UpdateShape& u, const IpuSpec& spec, int64_t& lastPhase,
                 double& start, CostPlan& c) {
  const int64_t phaseId = t.kind == TaskKind::Forward ? t.stage : u.P + t.stage;
  if (phaseId != lastPhase) {
    const double w = static_cast<double>(params[static_cast<size_t>(t.stage)] * u.pb);
    const double acc = t.kind == TaskKind::Backward ? static_cast<double>(params[static_cast<size_t>(t.stage)] * 4) : 0;
    const double load = (w + acc) / spec.streamingBytesPerSecond;
    c.streamingSeconds += load;
    start += load;
    lastPhase = phaseId;
  }
  // Activations between phases: stored after a forward, loaded before the next phase's task.
  if (u.P > 1) {
    const double act = static_cast<double>(m.blocks[static_cast<size_t>(stages[static_cast<size_t>(t.stage)].second - 1)].outputBytes) * u.fs;
    const double io = 2 * act / spec.streamingBytesPerSecond;
    c.streamingSeconds += io;
    start += io;
  }
}

// Plays the schedule: the lanes the engine runs, each task as soon as its lane and its input are free. Fills the
// timeline, each stage's busy time, the phases' streaming and the pipeline's makespan.
void playSchedule(const ModelProfile& m, const StageBlocks& stages, const std::vector<int64_t>& params,
                  const UpdateShape& u, const IpuOptions& o, const IpuSpec& spec, CostPlan& c) {
  const std::vector<std::vector<ScheduledTask>> lanes =
      (m.training ? PipelineSchedule::training(u.P, u.G, o.executionStrategy)
                  : PipelineSchedule::inference(u.P, u.G, o.executionStrategy)).lanes;
  const size_t n = static_cast<size_t>(u.P * u.G);
  TaskEnds ends{u.G, std::vector<double>(n, -1), std::vector<double>(n, -1)};
  std::vector<size_t> next(lanes.size(), 0);
  std::vector<double> laneFree(lanes.size(), 0);
  std::vector<int64_t> lastPhase(lanes.size(), -1);
  size_t remaining = 0;
  for (const auto& l : lanes) remaining += l.size();
  while (remaining > 0) {
    bool progressed = false;
    for (size_t li = 0; li < lanes.size(); ++li) {
      while (next[li] < lanes[li].size()) {
        const ScheduledTask& t = lanes[li][next[li]];
        const StageCost& sc = c.stages[static_cast<size_t>(t.stage)];
        double start = laneFree[li];
        if (!inputReady(t, ends, u, c, start)) break;
        if (u.phased) streamPhase(t, m, stages, params, u, spec, lastPhase[li], start, c);
        const double dur = t.kind == TaskKind::Forward ? sc.forward : sc.backward + sc.recompute;
        (t.kind == TaskKind::Forward ? ends.forward : ends.backward)[ends.at(t.stage, t.microBatch)] = start + dur;
        c.timeline.push_back({t.kind, t.stage, t.microBatch, start, dur});
        laneFree[li] = start + dur;
        c.stages[static_cast<size_t>(t.stage)].busy += dur;
        ++next[li];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) break;  // cannot happen with the engine's schedules; guards a malformed one
  }
  for (double t : laneFree) c.pipelineSeconds = std::max(c.pipelineSeconds, t);
}

// Weight tensors of the blocks on stages[s].
int64_t stageParameterTensors(const ModelProfile& m, const StageBlocks& stages, int64_t s) {
  int64_t tensors = 0;
  for (int64_t b = stages[static_cast<size_t>(s)].first; b < stages[static_cast<size_t>(s)].second; ++b)
    tensors += m.blocks[static_cast<size_t>(b)].parameterTensors;
  return tensors;
}

// Bytes of each weight tensor's gradient on stages[s] (the blocks' recorded sizes; a profile without them: the
// stage's parameters in equal shares).
std::vector<double> stageTensorBytes(const ModelProfile& m, const StageBlocks& stages, int64_t s, int64_t params,
                                     int64_t bytesPerWeight) {
  std::vector<double> sizes;
  const int64_t tensors = stageParameterTensors(m, stages, s);
  for (int64_t b = stages[static_cast<size_t>(s)].first; b < stages[static_cast<size_t>(s)].second; ++b)
    for (int64_t n : m.blocks[static_cast<size_t>(b)].parameterSizes)
      sizes.push_back(static_cast<double>(n * bytesPerWeight));
  if (static_cast<int64_t>(sizes.size()) != tensors || sizes.empty()) {
    const int64_t n = std::max<int64_t>(1, tensors);
    sizes.assign(static_cast<size_t>(n), static_cast<double>(params * bytesPerWeight) / static_cast<double>(n));
  }
  return sizes;
}

// All-reduce of the gradients over the replicas, every stage's at once (each stage's IPUs form their own rings),
// costed as GCL runs it (device/Collectives.h): inside a POD over IPU-Links, across PODs over GW-Links. RTS
// replaces it with a reduce-scatter and, after the update, an all-gather of the weights: the same phases.
// PopART runs one all-reduce per weight tensor unless its collectives are merged (SessionOptions
// replicatedCollectivesSettings.mergeAllReduceCollectives, false by default; IpuOptions::mergeAllReduce): each
// tensor's collective pays its own steps' latency, and its own size picks its method.
// Replicas over H hosts (--hosts, this library's MPI replication): a ring all-reduce over the hosts through the
// network as well, each host's NIC carrying 2(H-1)/H of the gradient bytes; the network's bandwidth and latency
// are IpuOptions parameters (an assumption: no published figure).
void allReduceCost(const ModelProfile& m, const StageBlocks& stages, const std::vector<int64_t>& params,
                   const UpdateShape& u, const IpuOptions& o, const IpuSpec& spec, CostPlan& c) {
  const int64_t R = u.R;
  const int64_t H = std::min(std::max<int64_t>(1, o.hosts), R);
  CollectiveOptions domains;
  domains.ipusPerReplica = u.phased ? 1 : u.P;
  domains.ipusPerPod = o.ipusPerPod;
  for (int64_t s = 0; s < u.P; ++s) {
    const double bytes = static_cast<double>(params[static_cast<size_t>(s)] * u.pb);
    const int64_t stageParams = params[static_cast<size_t>(s)];
    const std::vector<double> tensors =
        o.mergeAllReduce ? std::vector<double>{bytes} : stageTensorBytes(m, stages, s, stageParams, u.pb);
    const double largest = *std::max_element(tensors.begin(), tensors.end());
    double device = 0, gw = 0;
    std::string method;
    for (double t : tensors) {
      const CollectiveCost cc = collectiveCost(Collective::AllReduce, t, R, spec, domains);
      device += cc.seconds();
      gw += cc.gwLinkSeconds();
      if (t == largest) method = cc.method();
    }
    const double collectives = static_cast<double>(tensors.size());
    const double inter = H > 1 ? 2.0 * static_cast<double>(H - 1) / static_cast<double>(H) * bytes /
                                         o.networkBytesPerSecond +
                                     collectives * 2.0 * static_cast<double>(H - 1) * o.networkLatencySeconds
                               : 0.0;
    if (device + inter > c.allReduceSeconds) {
      c.allReduceSeconds = device + inter;
      c.networkSeconds = gw + inter;
      c.collectives = static_cast<int64_t>(tensors.size());
      c.collectiveMethod = method;
    }
  }
}

// Optimizer: element-wise over the stage's weights, reading weight, gradient and state and writing weight and
// state (fp32); offloaded state crosses the streaming-memory link twice; RTS updates 1/R of the elements. PopART
// runs it as ops per weight tensor (adamdecompose.cpp: one per state tensor, the updater term and the weight's
// update, and with accumulation the accumulator's reset), each paying the fixed cost of an op.
void optimizerCost(const ModelProfile& m, const StageBlocks& stages, const std::vector<int64_t>& params,
                   const UpdateShape& u, const IpuOptions& o, const IpuSpec& spec, CostPlan& c) {
  const double stateBytes = 4.0 * static_cast<double>(m.optimizerStateTensors) + (u.fp16 ? 4.0 : 0.0);
  const double opsPerTensor = static_cast<double>(m.optimizerStateTensors) + 2.0 + (u.G > 1 ? 1.0 : 0.0);
  for (int64_t s = 0; s < u.P; ++s) {
    double w = static_cast<double>(params[static_cast<size_t>(s)]);
    if (o.replicatedTensorSharding) w /= static_cast<double>(u.R);
    const double tensors = static_cast<double>(stageParameterTensors(m, stages, s));
    const double ops = std::max(1.0, tensors * opsPerTensor);
    double t = (w * (3.0 * 4.0 + 2.0 * stateBytes) / spec.elementwiseBytesPerCycle + ops * spec.opCycles) / spec.clockHz;
    if (o.offloadOptimizer || u.phased) t += 2.0 * w * stateBytes / spec.streamingBytesPerSecond;
    c.optimizerSeconds = u.phased ? c.optimizerSeconds + t : std::max(c.optimizerSeconds, t);
  }
}

// The bottleneck: the busiest stage; the split is read on it.
void splitOnBottleneck(const UpdateShape& u, CostPlan& c) {
  for (int64_t s = 1; s < u.P; ++s)
    if (c.stages[static_cast<size_t>(s)].busy > c.stages[static_cast<size_t>(c.bottleneckStage)].busy) c.bottleneckStage = s;
  const StageCost& b = c.stages[static_cast<size_t>(c.bottleneckStage)];
  double busyAll = 0;
  for (const StageCost& sc : c.stages) busyAll += sc.busy;
  c.utilisation = c.pipelineSeconds > 0 ? busyAll / (static_cast<double>(u.P) * c.pipelineSeconds) : 0;
  const double perMb = b.forward + b.backward + b.recompute;
  const double share = perMb > 0 ? b.busy / perMb : 0;  // micro-batches the stage ran
  c.split.compute = b.compute * share;
  c.split.exchange = b.exchange * share;
  c.split.streaming = c.streamingSeconds;
  c.split.bubble = std::max(0.0, c.pipelineSeconds - b.busy - (u.phased ? c.streamingSeconds : 0.0));
  c.split.allReduce = c.allReduceSeconds;
  c.split.optimizer = c.optimizerSeconds;
  c.split.hostIo = c.hostSeconds;
  // Inter-stage copies on the critical path are in the bubble's share (the stage waits for them).
}

}  // namespace

CostPlan planCost(const ModelProfile& m, const StageBlocks& stages, const IpuOptions& o, const IpuSpec& spec,
                  double samplesPerMicroBatch) {
  CostPlan c;
  const UpdateShape u = updateShape(m, stages, o);
  const std::vector<int64_t> params = stageParameters(m, stages);
  for (int64_t s = 0; s < u.P; ++s) {
    const auto [first, last] = stages[static_cast<size_t>(s)];
    c.stages.push_back(stageCost(m, first, last, s + 1 < u.P, o, spec));
  }
  playSchedule(m, stages, params, u, o, spec, c);
  if (m.training && u.R > 1) allReduceCost(m, stages, params, u, o, spec, c);
  if (m.training) optimizerCost(m, stages, params, u, o, spec, c);
  // Host: the update's micro-batches arrive on the first stage's IPU (integer features, 8-bit with --eight-bit-io,
  // and indices; later stages receive the indices and masks at the same time, in parallel, on their own links),
  // plus the cost of the host request's call once per request. Synthetic data: the call only.
  const double ioIn = o.syntheticData ? 0.0
                      : static_cast<double>(o.eightBitIo ? m.inputBytes - m.inputIntegerFeatureBytes + m.inputIntegerFeatureElements
                                                         : m.inputBytes);
  c.callSeconds = spec.hostCallSeconds / static_cast<double>(o.deviceIterations);
  c.hostSeconds = static_cast<double>(u.G) * ioIn / spec.hostBytesPerSecondPerIpu + c.callSeconds;
  c.stepSeconds = c.pipelineSeconds + c.allReduceSeconds + c.optimizerSeconds + c.hostSeconds;
  splitOnBottleneck(u, c);
  if (m.training) {
    if (u.R > 1) c.timeline.push_back({TaskKind::AllReduce, -1, -1, c.pipelineSeconds, c.allReduceSeconds});
    c.timeline.push_back({TaskKind::Optimizer, -1, -1, c.pipelineSeconds + c.allReduceSeconds, c.optimizerSeconds});
  }
  c.samplesPerUpdate = static_cast<double>(u.R * u.G) * samplesPerMicroBatch;
  c.samplesPerSecond = c.stepSeconds > 0 ? c.samplesPerUpdate / c.stepSeconds : 0;
  return c;
}

}  // namespace gnn
