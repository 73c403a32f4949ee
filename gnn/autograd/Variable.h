// Variable: a tensor on the autograd tape. An op computes its forward value, then records itself next to it:
// its OpInfo (name, FLOPs, bytes), its inputs, the tensors its backward needs ("saved") and the backward
// closure. The tape keeps inputs only as gradient handles (GradInput: shape, dtype, where the gradient goes),
// never their values, so an intermediate lives only as long as the program or a backward that declared it
// needs it (flashlight's Variable::withoutData). Variable::backward() runs the closures in reverse
// topological order and releases each one's saved tensors as soon as it has run.
//
//   Variable w(Tensor::zeros({16, 7}), /*requiresGrad=*/true);
//   Variable loss = mean(matmul(x, w));
//   loss.backward();             // w.grad() now holds d loss / d w
//
// Defining an op (see ops/*.cpp):
//   Tensor y = ...forward...;
//   OpInfo info{"myop", flops, bytesRead, bytesWritten, backwardFlops};
//   return Variable::record(info, y, {a, b}, /*saved=*/{A}, [s](const Tensor& gy, std::vector<GradInput>& in,
//                                                          const std::vector<Tensor>& saved) {
//     if (in[0].requiresGrad()) in[0].addGrad(...saved[0]...);
//   });
// A closure captures scalars and shapes only; every tensor it reads comes through `saved`, so the bytes a
// step keeps for its backward can be counted (tapeStats, OpEvent::savedBytes).
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gnn/autograd/OpInfo.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

class GradInput;

class Variable {
 public:
  using BackwardFn =
      std::function<void(const Tensor& gradOutput, std::vector<GradInput>& inputs, const std::vector<Tensor>& saved)>;

  Variable() = default;
  explicit Variable(Tensor value, bool requiresGrad = false);

  /// Result of an op. Puts the op on the tape when any input requires a gradient (and grad mode is on), and
  /// reports it to the thread's OpObserver either way.
  static Variable record(const OpInfo& info, Tensor value, std::vector<Variable> inputs, std::vector<Tensor> saved,
                         BackwardFn backward);

  bool defined() const { return data_ != nullptr; }
  const Tensor& value() const;
  Tensor& value();
  const Shape& shape() const { return value().shape(); }
  int64_t dim(int i) const { return value().dim(i); }
  DType dtype() const { return value().dtype(); }
  bool requiresGrad() const { return node_ && node_->requiresGrad; }
  void setRequiresGrad(bool r);

  /// Gradient accumulated by backward(); undefined until something flows into it.
  const Tensor& grad() const;
  Tensor& grad();
  bool hasGrad() const { return node_ && node_->grad.defined(); }
  /// Adds g into this variable's gradient (allocating it on first use).
  void addGrad(const Tensor& g);
  void zeroGrad();

  /// Reverse-mode pass from this (scalar) variable with seed gradient 1, or from `seed` when given.
  /// The tape below this variable is released afterwards.
  void backward();
  void backward(const Tensor& seed);
  /// Reverse-mode pass from several variables at once, root i seeded with seeds[i] (shaped like it): what a
  /// pipeline stage runs with the gradients of the activations it sent to the next stage. Every op below the
  /// roots runs once, after all of its consumers.
  static void backward(const std::vector<Variable>& roots, const std::vector<Tensor>& seeds);

  /// Same value, cut off from the tape.
  Variable detach() const { return Variable(value(), false); }
  /// The op that made this variable ("" for leaves and values not on the tape).
  const char* opName() const { return node_ && node_->backward ? node_->info.name : ""; }

  /// The tape node: gradient, and for op results the op, its inputs, saved tensors and backward.
  struct Node {
    Tensor grad;
    bool requiresGrad = false;
    Shape shape;  // of the value, for checks on gradients
    DType dtype = DType::F32;
    OpInfo info;
    const char* block = "";
    std::vector<GradInput> inputs;
    std::vector<Tensor> saved;
    BackwardFn backward;
    // Threads accumulating into this node now: more than one is a race (see GradientSink).
    std::atomic<int> writers{0};
  };

 private:
  friend class GradInput;
  friend class GradientSink;
  friend struct TapeStats tapeStats(const Variable& root);
  struct Data {
    Tensor value;
  };
  std::shared_ptr<Data> data_;
  std::shared_ptr<Node> node_;
};

/// What a backward closure sees of one input: whether it needs a gradient, its shape and dtype, and where
/// its gradient goes. It holds no value.
class GradInput {
 public:
  GradInput() = default;
  bool requiresGrad() const { return node_ && node_->requiresGrad; }
  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const;
  DType dtype() const { return dtype_; }
  /// Adds g (shaped like the input) into the input's gradient, or into the current context's GradientSink
  /// when the input is a parameter (a leaf) and a sink is set.
  void addGrad(const Tensor& g) const;

 private:
  friend class Variable;
  friend struct TapeStats tapeStats(const Variable& root);
  std::shared_ptr<Variable::Node> node_;
  Shape shape_;
  DType dtype_ = DType::F32;
};

/// What the tape below a variable holds for its backward.
struct TapeStats {
  int64_t ops = 0;           // op nodes still waiting for their backward
  int64_t savedTensors = 0;  // distinct buffers they saved
  int64_t savedBytes = 0;    // bytes of those buffers (each counted once, however many ops share it)
};
TapeStats tapeStats(const Variable& root);

/// Disables tape recording in its scope (inference, evaluation, optimizer updates).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
bool gradEnabled();

}  // namespace gnn
