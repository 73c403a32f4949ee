// Module: a layer or model that owns named parameters and child modules (like torch.nn.Module).
// Subclasses register their parameters and children in the constructor; parameters() walks the tree in
// registration order, so checkpoints and optimizers see a stable order.
//
//   class Mlp : public Module {
//    public:
//     Mlp(Generator& g) : a_(16, 32, g), b_(32, 1, g) { registerModule("a", a_); registerModule("b", b_); }
//     Variable forward(const Variable& x) { return b_.forward(relu(a_.forward(x))); }
//    private:
//     Linear a_, b_;
//   };
#pragma once
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "gnn/Variable.h"

namespace gnn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  // Children are registered by address, so modules are neither copied nor moved.
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// Every parameter of this module and its children, depth first, in registration order.
  std::vector<Variable> parameters() const;
  /// Same, with dotted names ("conv1.weight").
  std::vector<std::pair<std::string, Variable>> namedParameters() const;
  int64_t numParameters() const;

  void train(bool on = true);
  void eval() { train(false); }
  bool isTraining() const { return training_; }
  void zeroGrad();

 protected:
  Variable& registerParameter(const std::string& name, Tensor value);
  void registerModule(const std::string& name, Module& child);

 private:
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Variable>>& out) const;
  // A deque keeps the references handed out by registerParameter valid as more are added.
  std::deque<std::pair<std::string, Variable>> params_;
  std::vector<std::pair<std::string, Module*>> children_;
  bool training_ = true;
};

}  // namespace gnn
