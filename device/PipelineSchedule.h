// PipelineSchedule: the order in which one replica's stages run the forward and backward of the micro-batches
// of one weight update (or of one inference request), as lanes: ordered task lists that each run on one
// thread of control at a time.
//
// Pipelined (PopART's implicit pipelining): one lane per stage (its IPU). With P stages and G micro-batches,
// in cycle t stage s runs forward(t - s) then backward(t - 2(P-1) + s) when those exist: the last stage runs a
// micro-batch's backward right after its forward, each earlier stage one cycle after the stage behind it, so
// stage s keeps at most 2(P-s)-1 micro-batches' activations stashed (first in, last out). Phases: fill = the
// cycles before every stage has started (t < P-1), flush = the cycles after the first stage's last forward
// (t >= G), main = the cycles between, where every stage runs forward(k) and backward(k - Δ).
// Sharded: one lane visiting the stages in turn, one micro-batch at a time: forward 0..P-1, backward P-1..0.
// Phased (PopTorch's SerialPhased): one lane, batch serialisation: stage 0's forward of every micro-batch of the
// update, then stage 1's, ..., then the backward of stage P-1 for every micro-batch, ..., stage 0; inference:
// the forwards in that order. Every stage keeps all G micro-batches (in streaming memory between phases).
//
//   PipelineSchedule s = PipelineSchedule::training(4, 8, ExecutionStrategy::Pipelined);
//   s.lanes[3];                 // F0 B0 F1 B1 ... on the last stage
//   s.maxStashed(0);            // 7
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "device/IpuOptions.h"
#include "device/Trace.h"

namespace gnn {

struct ScheduledTask {
  TaskKind kind = TaskKind::Forward;  // Forward or Backward
  int64_t stage = 0;
  int64_t microBatch = 0;
  PipelinePhase phase = PipelinePhase::None;
};

struct PipelineSchedule {
  std::vector<std::vector<ScheduledTask>> lanes;
  int64_t stages = 1, microBatches = 1;
  bool forTraining = true;

  static PipelineSchedule training(int64_t stages, int64_t microBatches, ExecutionStrategy strategy);
  static PipelineSchedule inference(int64_t stages, int64_t microBatches, ExecutionStrategy strategy);

  /// Most micro-batches whose forward ran on `stage` but whose backward has not yet, at any point of the
  /// schedule (the stash a memory model charges).
  int64_t maxStashed(int64_t stage) const;
  /// "F0 F1 B0 ..." of one lane, for tests and people.
  std::string laneString(size_t lane) const;
};

}  // namespace gnn
