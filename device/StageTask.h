// StageTask: one forward or backward task of a pipeline stage, for one micro-batch on one replica. A forward
// takes the previous stage's activations (a StageSnapshot), runs the stage's blocks one of three ways and hands
// its output on (or computes the loss on the last stage); a backward seeds the stage's outputs with the next
// stage's gradients (or the loss with its weight share × the loss scale) and hands the gradients of its inputs
// back. StageTaskRunner (device/StageTaskRunner.h) moves the values between slots; the functions here run the
// blocks.
//
//   BlockState out = forwardPlain(model, std::move(in), batch, first, last);
//   backwardFromOutputs(out, seeds);
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "device/CompileRecord.h"
#include "device/Device.h"
#include "device/ExecutionProgramParts.h"

namespace gnn {

/// Stochastic rounding's op count at the start of a task: distinct per stage and pass, so no two tasks of a
/// micro-batch draw the same rounding stream.
uint64_t roundingBase(int64_t stage, bool backward);

/// Blocks [first, last) in one call: the tape hangs from the output.
BlockState forwardPlain(BlockModel& model, BlockState in, const Batch& batch, size_t first, size_t last);
/// Block by block (the same ops in the same order), recording the bytes each block hands on (the capture).
BlockState forwardBlockByBlock(BlockModel& model, BlockState in, const Batch& batch, size_t first, size_t last,
                               CompileRecord& record);
/// --recompute: a checkpoint at every block boundary (PopTorch's recomputationCheckpoint after each block): each
/// block runs on its checkpointed input (appended to `checkpoints` with ctx's random and rounding counts) and
/// its tape is dropped at its end. `record` (the capture, or null) gets each block's output bytes.
BlockState forwardRecompute(BlockModel& model, BlockState in, const Batch& batch, size_t first, size_t last,
                            const ExecutionContext& ctx, std::vector<StageSnapshot>& checkpoints,
                            CompileRecord* record);

/// The last stage's backward: the loss seeded with `seed` (its weight share × the loss scale).
void backwardFromLoss(Variable& loss, double seed);
/// A stage's backward from the gradients of its outputs that need one (`seeds`, in entry order; undefined: none).
void backwardFromOutputs(const BlockState& out, const std::vector<Tensor>& seeds);

/// What a recomputing backward needs besides the stash.
struct RecomputeBackward {
  BlockModel& model;
  const Batch& batch;
  ExecutionContext& ctx;
  GradientSink& sink;
  RandomKey key;                  // the micro-batch's; each block redraws from its checkpoint's count
  uint64_t rounding = 0;          // the backward's rounding base
  const LossFn* loss = nullptr;   // last stage: the loss, recomputed after the last block and seeded with lossSeed
  double lossSeed = 0;
  bool capture = false;           // the re-run forwards run under `outer`, not the capture's recorder
  OpObserver* outer = nullptr;
};
/// --recompute's backward, block by block from the last: re-run block b's forward from its checkpoint with the
/// tape on, run its backward from the gradients of its outputs (the next block's input gradients, the next
/// stage's `seeds` for `outGrad`, or the loss), take its leaves' gradients, free the block. Returns the
/// gradients of the stage's inputs (first block's leaves, in entry order).
std::vector<Tensor> backwardRecompute(const RecomputeBackward& a, size_t first, size_t last,
                                      std::vector<StageSnapshot>& checkpoints, const std::vector<std::string>& outGrad,
                                      const std::vector<Tensor>& seeds);

}  // namespace gnn
