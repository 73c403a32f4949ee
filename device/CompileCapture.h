// CompileCapture: how a program's first host request fills its CompileRecord (device/CompileRecord.h): the ops of
// replica 0's tasks of the first update (per stage, forward and backward), the state each block hands on, the
// bytes a stage sends the next, and which stage and block each parameter's gradient comes from. A request that
// fails leaves no half-filled record: the next one captures afresh.
//
//   Recorder rec;  rec.stage = s;  { ObserverScope watch(rec); ...the task... }  addTaskOps(record, s, rec.ops);
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "device/CompileRecord.h"
#include "device/PipelineSchedule.h"
#include "device/StageSplit.h"
#include "gnn/autograd/OpInfo.h"
#include "gnn/autograd/Variable.h"
#include "models/BlockState.h"

namespace gnn {

class GradientSink;

/// The ops of one task, captured for the compile record; the observer the task ran under before (a profiler)
/// is still told.
class Recorder : public OpObserver {
 public:
  std::vector<OpRecord> ops;
  int64_t stage = 0;
  OpObserver* next = nullptr;
  void onOp(const OpEvent& e) override;
};

/// The record's shapes, blocks and stages before anything ran.
void startRecord(CompileRecord& record, const Batch& shapes, const std::vector<std::string>& blockNames,
                 const StageBlocks& stages, const PipelineSchedule& schedule);
/// Bytes of the values of a block's (or stage's) state.
int64_t stateBytes(const BlockState& state);
/// A task's ops into the record (its stage's op counts, FLOPs, saved bytes); returns the task's FLOPs.
int64_t addTaskOps(CompileRecord& record, int64_t stage, const std::vector<OpRecord>& ops);
/// After the first update's backward: the parameters whose gradient stage s's sink holds (`sinkOf(s)`) count
/// for stage s and for the block whose backward reached them first (the stage's first block when none claims
/// one).
void recordStageParameters(CompileRecord& record, const std::vector<Variable>& params,
                           const std::function<const GradientSink&(int64_t stage)>& sinkOf);
/// Forgets what a failed first request captured.
void discardCapture(CompileRecord& record);

}  // namespace gnn
