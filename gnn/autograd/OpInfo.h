// OpInfo: who an op is and what it costs (name, FLOPs, bytes), given by every op when it records itself on
// the tape; OpObserver: a per-thread callback that sees each op recorded (forward) and each backward closure
// run, with the block it belongs to. Profiles, traces, memory and cost models are built from these events,
// never from guesses (ggml's op names and costs, a scheduler callback per op).
//
//   struct Count : OpObserver {
//     void onOp(const OpEvent& e) override { flops += e.flops; }
//     double flops = 0;
//   } count;
//   { ObserverScope watch(count); model.forward(batch); }   // count.flops = the forward's FLOPs
#pragma once
#include <cstdint>
#include <vector>

#include "gnn/tensor/Tensor.h"

namespace gnn {

struct OpInfo {
  /// A string literal naming the op ("linear", "gatherRows"); the same name in every profile and trace.
  const char* name = "op";
  /// Floating-point operations of the forward (a multiply-add counts as 2).
  int64_t flops = 0;
  /// Bytes the forward reads from its inputs and writes to its output (one pass over each).
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;
  /// FLOPs of the backward for the inputs that require a gradient when the op is recorded (known then, so a
  /// cost model can read it from the forward alone). Elementwise ops: about the forward's; matmul: the
  /// forward's once per input that needs a gradient.
  int64_t backwardFlops = 0;
};

enum class Pass : uint8_t { Forward, Backward };
inline const char* passName(Pass p) { return p == Pass::Forward ? "forward" : "backward"; }

/// One op as an observer sees it.
struct OpEvent {
  const OpInfo* info;
  Pass pass;
  /// Innermost block the op was recorded in ("layers/3"), or "" outside every block.
  const char* block;
  /// Wall time of the op. Backward: the closure's run. Forward: the time since the previous event (or block
  /// boundary, or ObserverScope::mark) on this thread, which is the op's own computation when ops run back to
  /// back, as they do inside a model's forward.
  double seconds;
  /// FLOPs and bytes of this pass (forward: info->flops; backward: info->backwardFlops).
  int64_t flops;
  int64_t bytes;
  /// Forward only: the output's shape and dtype, and the bytes of the tensors the backward keeps (zero when
  /// nothing is recorded, e.g. under NoGradGuard).
  const Tensor* output;
  int64_t savedBytes;
  /// Whether the op was put on the tape (some input requires a gradient and grad mode is on).
  bool recorded;
};

class OpObserver {
 public:
  virtual ~OpObserver() = default;
  virtual void onOp(const OpEvent& event) = 0;
};

/// Installs an observer on this thread (and the threads running its ops' parallel loops) for its scope.
class ObserverScope {
 public:
  explicit ObserverScope(OpObserver& observer);
  ~ObserverScope();
  ObserverScope(const ObserverScope&) = delete;
  ObserverScope& operator=(const ObserverScope&) = delete;
  /// Starts the clock for the next forward op's time (call where a step begins).
  static void mark();

 private:
  OpObserver* previous_;
};

}  // namespace gnn
