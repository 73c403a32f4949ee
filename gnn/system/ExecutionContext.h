// ExecutionContext: the state under which ops run on a thread, made explicit so that many contexts (pipeline
// stages, replicas, simulated IPUs) can run side by side on a few cores without sharing mutable state:
//   - the thread budget parallelFor uses (all contexts together never run more busy threads than cores:
//     gnn/system/Parallel.h's core slots),
//   - the MemoryAccount that tensors allocated under it are charged to,
//   - the random-number key: random ops (dropout) derive their stream from (seed, step, micro-batch, index of
//     the random op in the step), so masks do not depend on the order micro-batches run in,
//   - the op observer and the current block (gnn/autograd/OpInfo.h, gnn/autograd/Block.h),
//   - an optional GradientSink that receives parameter gradients instead of the parameters themselves,
//   - the precision of matrix products (gnn/ops/MatmulPrecision.h: float32 or bfloat16 inputs),
//   - the rounding of stored values (gnn/tensor/HalfPrecision.h): none (float32), or half precision, where every
//     floating value an op records and every gradient the tape passes on is rounded to half; stochastic
//     rounding draws from its own stream of (seed, step, micro-batch, rounding op index), and gradient values
//     that saturated are counted (overflow, for loss scaling).
// Each thread starts with a default context (process memory account, default budget, key (0, 0, 0));
// ContextScope makes another context current on this thread for its scope. A context is used by one thread
// at a time; parallelFor's worker threads run under the context of the thread that called it.
//
//   ExecutionContext ctx;
//   ctx.setRandomKey({seed, step, microBatch});
//   ctx.setMemoryAccount(std::make_shared<MemoryAccount>("ipu0"));
//   { ContextScope use(ctx); Variable loss = lossOf(model.forward(batch)); loss.backward(); }
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>

#include "gnn/ops/MatmulPrecision.h"
#include "gnn/system/MemoryAccount.h"
#include "gnn/system/Random.h"
#include "gnn/tensor/HalfPrecision.h"

namespace gnn {

class OpObserver;
class GradientSink;

/// Where a context's random streams come from. Programs set it once per step (and micro-batch).
struct RandomKey {
  uint64_t seed = 0;
  uint64_t step = 0;
  uint64_t microBatch = 0;
};

class ExecutionContext {
 public:
  ExecutionContext();
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

  /// The context current on this thread.
  static ExecutionContext& current();

  /// Threads an op may use (<= 0: the process default, gnn::defaultThreads()). The core slots cap the total.
  int threads() const;
  void setThreads(int n) { threads_ = n > 0 ? n : 0; }

  const std::shared_ptr<MemoryAccount>& memoryAccount() const { return memory_; }
  void setMemoryAccount(std::shared_ptr<MemoryAccount> account);

  /// Sets the key and restarts the count of random ops, so the k-th random op after this call draws the
  /// same stream whatever ran before it or on other threads. `opsDrawn`: random ops of this key already drawn
  /// elsewhere (a pipeline stage continues the count of the stage before it, so a split model draws the masks
  /// the whole model draws).
  void setRandomKey(RandomKey key, uint64_t opsDrawn = 0) {
    key_ = key;
    randomOps_ = opsDrawn;
  }
  const RandomKey& randomKey() const { return key_; }
  /// Random ops drawn since the key was set.
  uint64_t randomOps() const { return randomOps_; }
  /// The stream of the next random op: a Generator seeded from (seed, step, micro-batch, op index).
  Generator nextRandomStream();

  OpObserver* observer() const { return observer_; }
  void setObserver(OpObserver* o) { observer_ = o; }
  /// Innermost block name ("" outside blocks); an interned string that lives as long as the process.
  const char* block() const { return block_; }
  void setBlock(const char* interned) { block_ = interned; }
  GradientSink* gradientSink() const { return sink_; }
  void setGradientSink(GradientSink* sink) { sink_ = sink; }
  /// A forward that re-runs blocks for their backward (recomputation): state the first run already updated
  /// (BatchNorm's running statistics) is left as it is, so recomputing gives the bits of storing.
  bool recomputing() const { return recomputing_; }
  void setRecomputing(bool on) { recomputing_ = on; }

  /// The precision of matmul / matmulNT / linear products (gnn/ops/MatmulPrecision.h): float32 unless set on
  /// this context (a program sets it from its options on every context it runs: device/IpuOptions.h).
  MatmulPrecision matmulPrecision() const { return matmulPrecision_; }
  void setMatmulPrecision(MatmulPrecision p) { matmulPrecision_ = p; }
  /// How values stored under this context are rounded (Rounding::None: float32 as computed).
  Rounding rounding() const { return rounding_; }
  void setRounding(Rounding r) { rounding_ = r; }
  /// Stochastic rounding: the stream of the next rounded tensor, from (seed, step, micro-batch, rounding op
  /// index); the index is separate from the random ops', so rounding never changes dropout masks.
  Generator nextRoundingStream();
  uint64_t roundingOps() const { return roundingOps_; }
  void setRoundingOps(uint64_t n) { roundingOps_ = n; }
  /// Gradient values that saturated or were NaN when rounded to half since the last reset.
  int64_t gradientOverflows() const { return gradientOverflows_; }
  void addGradientOverflows(int64_t n) { gradientOverflows_ += n; }
  void resetGradientOverflows() { gradientOverflows_ = 0; }
  /// Rounds a value this context stores (an op's output, a gradient) per rounding(); returns the values
  /// that saturated. No-op with Rounding::None.
  int64_t roundStored(Tensor& t);

  /// Forward op timing (OpEvent::seconds): the time of the previous event on this context.
  std::chrono::steady_clock::time_point lastMark() const { return mark_; }
  void setMark(std::chrono::steady_clock::time_point t) { mark_ = t; }

 private:
  int threads_ = 0;
  std::shared_ptr<MemoryAccount> memory_;
  RandomKey key_;
  uint64_t randomOps_ = 0;
  OpObserver* observer_ = nullptr;
  const char* block_ = "";
  GradientSink* sink_ = nullptr;
  bool recomputing_ = false;
  Rounding rounding_ = Rounding::None;
  MatmulPrecision matmulPrecision_ = MatmulPrecision::Float32;
  uint64_t roundingOps_ = 0;
  int64_t gradientOverflows_ = 0;
  std::chrono::steady_clock::time_point mark_;
};

/// Makes `ctx` the current context of this thread for the scope.
class ContextScope {
 public:
  explicit ContextScope(ExecutionContext& ctx);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  ExecutionContext* previous_;
};

namespace detail {
/// The current context pointer of this thread (parallelFor hands it to its workers).
ExecutionContext*& currentContextSlot();
}  // namespace detail

}  // namespace gnn
