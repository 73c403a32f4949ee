// GradientSink: where parameter gradients go while a backward runs under an ExecutionContext that has one,
// instead of into the parameters themselves.
//
// Gradient accumulation into shared parameters is per context, not synchronised: when several contexts
// (micro-batches, replicas sharing weights, pipeline stages) run backward passes through the same parameters
// at once, each gives its context its own sink, and the device then sums the sinks in a fixed order (micro-
// batch, replica). A lock would make the parameters' sums depend on which thread got there first, so the bits
// would depend on timing; per-context sinks keep them fixed. Without a sink, gradients accumulate into the
// parameter as before, and two threads doing so at once is reported as an error rather than left to race.
//
//   GradientSink sink;  ctx.setGradientSink(&sink);
//   { ContextScope use(ctx); loss.backward(); }
//   std::vector<Tensor> g = sink.grads(model.parameters());   // undefined where no gradient flowed
#pragma once
#include <unordered_map>
#include <vector>

#include "gnn/autograd/Variable.h"

namespace gnn {

class GradientSink {
 public:
  /// Gradient received for `param` (undefined if none).
  Tensor grad(const Variable& param) const;
  std::vector<Tensor> grads(const std::vector<Variable>& params) const;
  bool empty() const { return grads_.empty(); }
  void clear() {
    grads_.clear();
    blocks_.clear();
  }
  /// The gradient received for `v` (undefined if none), removed from the sink: for leaves that are not
  /// parameters, such as the activations a pipeline stage received, whose gradients go back to the stage before.
  Tensor take(const Variable& v);
  /// Adds g to the gradient of the parameter whose tape node is `node` (called by the tape).
  void accumulate(const Variable::Node* node, const Tensor& g);
  /// The block (gnn/autograd/Block.h) of the op whose backward first sent `v` a gradient since clear(): the block that
  /// uses the parameter last in the forward. "" when none did.
  const char* blockOf(const Variable& v) const;

 private:
  std::unordered_map<const Variable::Node*, Tensor> grads_;
  std::unordered_map<const Variable::Node*, const char*> blocks_;
};

}  // namespace gnn
