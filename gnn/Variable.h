// Variable: a tensor on the autograd tape. An op computes its forward value and records a backward closure
// (capturing only what the gradient needs) next to it; Variable::backward() runs the closures in reverse
// topological order and accumulates gradients into every input that requires them.
//
//   Variable w(Tensor::zeros({16, 7}), /*requiresGrad=*/true);
//   Variable loss = mean(matmul(x, w));
//   loss.backward();             // w.grad() now holds d loss / d w
//
// Defining an op (see ops/*.cpp):
//   Tensor y = ...forward...;
//   return Variable::record(y, {a, b}, [captured](const Tensor& gy, std::vector<Variable>& in) {
//     if (in[0].requiresGrad()) in[0].addGrad(...);
//   });
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gnn/Tensor.h"

namespace gnn {

class Variable {
 public:
  using BackwardFn = std::function<void(const Tensor& gradOutput, std::vector<Variable>& inputs)>;

  Variable() = default;
  explicit Variable(Tensor value, bool requiresGrad = false);

  /// Result of an op: records `backward` when any input requires a gradient (and grad mode is on).
  static Variable record(Tensor value, std::vector<Variable> inputs, BackwardFn backward);

  bool defined() const { return node_ != nullptr; }
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

  /// Same value, cut off from the tape.
  Variable detach() const { return Variable(value(), false); }

 private:
  struct Node {
    Tensor value;
    Tensor grad;
    bool requiresGrad = false;
    std::vector<Variable> inputs;
    BackwardFn backward;
  };
  std::shared_ptr<Node> node_;
};

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
