// CompileRecord: what a device program does for one micro-batch, captured once, on the first request, through
// the core's op observer: every op (forward and backward) with its block, stage, output shape, FLOPs, bytes read
// and written and the bytes its backward keeps; the micro-batch's field shapes every later micro-batch must
// have; which parameters each stage owns. Memory and cost models read this record; they never re-derive the
// model.
//
//   const CompileRecord& r = program.record();
//   for (const OpRecord& op : r.ops) if (op.stage == 1) flops += op.flops;
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gnn/autograd/OpInfo.h"
#include "loaders/Batch.h"

namespace gnn {

struct OpRecord {
  const char* name = "";
  const char* block = "";
  int64_t stage = 0;
  Pass pass = Pass::Forward;
  Shape shape;               // forward: the output's shape
  DType dtype = DType::F32;  // forward: the output's dtype
  int64_t flops = 0;
  int64_t bytesRead = 0, bytesWritten = 0;  // backward: bytesRead holds the pass's bytes
  int64_t savedBytes = 0;                   // forward: bytes its backward keeps
  double seconds = 0;                       // measured when captured
};

/// Bytes one element of `dtype` takes on the host link: PopTorch streams 64-bit integers and doubles as 32-bit
/// ones (the IPU has no 64-bit types: PopTorch 2.3's poptorch/source/PoplarExecutable.cpp converts Long inputs to
/// Int and Double to Float on the host before the transfer), everything else at its width.
int64_t streamedBytesPerElement(DType dtype);
/// Bytes of `t` on the host link.
int64_t streamedBytes(const Tensor& t);

/// One tensor of a micro-batch as compiled.
struct FieldShape {
  std::string name;
  bool defined = false;
  Shape shape;
  DType dtype = DType::F32;
};

struct StageRecord {
  int64_t firstBlock = 0, lastBlock = 0;  // blocks [firstBlock, lastBlock)
  std::string name;                        // "input..layers/1"
  int64_t parameters = 0;                  // scalar parameters the stage's backward updates
  int64_t parameterTensors = 0;
  int64_t forwardOps = 0, backwardOps = 0;
  int64_t forwardFlops = 0, backwardFlops = 0;
  int64_t savedBytes = 0;       // activations one micro-batch keeps for the backward
  int64_t activationBytes = 0;  // bytes sent to the next stage per micro-batch
  int64_t maxStashed = 1;       // micro-batches in flight on the stage (PipelineSchedule::maxStashed)
};

/// One block of the model as captured: what a planner needs to cut the model anywhere (device/Plan.h).
struct BlockRecord {
  std::string name;
  int64_t parameters = 0;        // scalar parameters whose gradient this block's backward sends first
  int64_t parameterTensors = 0;
  std::vector<int64_t> parameterSizes;  // elements of each of those tensors (their all-reduces' sizes)
  int64_t outputBytes = 0;       // the state after the block (what a stage ending here sends), per micro-batch
};

struct CompileRecord {
  bool captured = false;
  std::vector<FieldShape> fields;
  int64_t numNodes = 0, numEdges = 0, numGraphs = 0, maxNodesPerGraph = 0;
  std::vector<OpRecord> ops;
  std::vector<StageRecord> stages;
  std::vector<BlockRecord> blocks;  // every block of the model, in order
  int64_t inputBytes = 0;           // bytes of one micro-batch as the host sends it (streamedBytes)

  /// Index of the block called `name` in `blocks` (-1 if none).
  int64_t blockIndex(const std::string& name) const;

  /// The fixed shapes of `b` (every batch field and collator field).
  static std::vector<FieldShape> shapesOf(const Batch& b);
  /// Throws std::invalid_argument naming the field and both shapes when `b` differs from the compiled shapes;
  /// `what` names the micro-batch ("micro-batch 3 of host request 12").
  void checkShapes(const Batch& b, const std::string& what) const;
};

}  // namespace gnn
