// ModelProfile: a compile record read per block, in the terms the memory and cost models use: each block's
// ops (forward, and backward matched to them), parameters, the activations its backward keeps and the state it
// hands on; the micro-batch's input and output bytes. A planner cuts the model into stages anywhere between
// blocks from this, without running the model again.
//
//   ModelProfile m = ModelProfile::from(program.record(), /*training=*/true, /*optimizerStateTensors=*/2);
//   m.blocks[3].forwardFlops;             // "layers/2"
//   ModelProfile half = m.scaled(0.5);    // the same model on micro-batches half the size
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "device/CompileRecord.h"

namespace gnn {

/// How an op uses the IPU: the AMP matmul units, the tile exchange (gathers, scatters, layout changes), or
/// tile-local element-wise work.
enum class OpClass : uint8_t { Matmul, Exchange, Elementwise };
const char* opClassName(OpClass c);
/// By op name (gnn/ops): "linear", "matmul", "bmm", "multiHeadAttention" -> Matmul; "gatherRows", "scatterSum",
/// "spmm", "permute", ... -> Exchange; the rest -> Elementwise.
OpClass classifyOp(const std::string& name);

struct OpCost {
  std::string name;
  OpClass cls = OpClass::Elementwise;
  int64_t flops = 0;
  int64_t bytes = 0;       // read + written (backward: estimated, see BlockProfile)
  int64_t savedBytes = 0;  // forward: what its backward keeps
  bool floating = true;    // its output is floating point (fp16 halves its bytes)
  // Exchange ops (device/CostModel.h): the rows it moves by index (gathers: rows gathered; scatters and segment
  // reductions: rows reduced) and the rows of the table it indexes (gathers: the micro-batch's nodes, as message
  // passing gathers node rows; scatters: the target rows). Backward ops carry their forward op's.
  int64_t indices = 0, tableRows = 0;
  bool backward = false;
};

struct BlockProfile {
  std::string name;
  int64_t parameters = 0, parameterTensors = 0;
  std::vector<int64_t> parameterSizes;  // elements per parameter tensor (empty: parameters / tensors each)
  int64_t inputBytes = 0;   // the state the block receives (the previous block's output; 0 for the first)
  int64_t outputBytes = 0;  // the state it hands on
  int64_t savedBytes = 0;   // activations its backward keeps, per micro-batch
  int64_t forwardFlops = 0, backwardFlops = 0;
  // Backward ops carry FLOPs but not bytes: each is matched to the forward op it differentiates (same block,
  // same name, in reverse order) and charged twice that op's bytes (it reads the output's gradient and the
  // saved inputs and writes the inputs' gradients: one pass over each).
  std::vector<OpCost> forward, backward;
};

struct ModelProfile {
  std::vector<BlockProfile> blocks;
  bool training = true;
  int64_t optimizerStateTensors = 2;  // fp32 tensors the optimizer keeps per parameter (Adam: m and v)
  int64_t inputBytes = 0;             // one micro-batch from the host, as compiled
  int64_t inputIntegerFeatureBytes = 0;  // of which integer features (x, edge_attr, z, spatial_pos, ...)
  int64_t inputIntegerFeatureElements = 0;
  int64_t outputBytes = 0;            // the model's output per micro-batch
  int64_t graphSlots = 0;             // graphs per micro-batch, padding graph included
  double batchScale = 1;              // 1: as captured; see scaled()

  static ModelProfile from(const CompileRecord& record, bool training, int64_t optimizerStateTensors);
  int64_t parameters() const;
  /// The blocks' names, in model order.
  std::vector<std::string> blockNames() const;
  /// The same model on micro-batches `factor` times the captured size: every activation, FLOP and byte that
  /// depends on the batch scales linearly (every dimension that changes with the micro-batch is a batch
  /// dimension of these models: nodes, edges, graphs); parameters do not. knnGraph (SchNet's radius graph built
  /// per micro-batch, an [N, N] matrix) scales with the square.
  ModelProfile scaled(double factor) const;
};

}  // namespace gnn
