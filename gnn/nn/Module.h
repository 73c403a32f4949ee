// Module: a layer or model that owns named parameters and child modules (like torch.nn.Module).
// Subclasses register their parameters and children in the constructor; parameters() walks the tree in
// registration order, so checkpoints and optimizers see a stable order.
//
//   class Mlp : public Module {
//    public:
//     Mlp(Generator& g) : a_(16, 32, g), b_(32, 1, g) { registerModule("a", a_); registerModule("b", b_); }
//     Variable forward(const Variable& x) { return b_.forward(relu(a_.forward(x))); }
//     std::unique_ptr<Module> clone() const override {
//       Generator unused;                                    // the fresh weights are overwritten
//       return cloneInto(std::make_unique<Mlp>(unused));
//     }
//    private:
//     Linear a_, b_;
//   };
//   std::unique_ptr<Mlp> replica = cloneModule(mlp);        // deep copy, e.g. for a replica
#pragma once
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gnn/autograd/Variable.h"

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
  /// The entries of the module's state_dict: namedParameters() and, after each module's own parameters, its
  /// aliases (registerAlias), each the same Variable as its target.
  std::vector<std::pair<std::string, Variable>> namedStateEntries() const;
  int64_t numParameters() const;

  void train(bool on = true);
  void eval() { train(false); }
  bool isTraining() const { return training_; }
  void zeroGrad();

  /// A deep copy (for replicas): the same class, structure, parameter names and training flags, every
  /// parameter value copied into new storage (charged to the current ExecutionContext's memory account), no
  /// gradients and no caches. Training the copy leaves this module unchanged. Every layer and model of the
  /// library implements it; the default throws, naming the class, for a module that does not.
  virtual std::unique_ptr<Module> clone() const;

 protected:
  Variable& registerParameter(const std::string& name, Tensor value);
  /// State that is not trained (BatchNorm's running statistics): a parameter that requires no gradient, so it
  /// is saved in checkpoints, cloned, kept with the best epoch's weights and loaded like any other parameter,
  /// while optimizers leave it alone (they skip parameters without a gradient). The module updates its value.
  Variable& registerBuffer(const std::string& name, Tensor value);
  /// A second state_dict name for a parameter or buffer of this module or a child, `target` its name here
  /// ("lin_src.weight"; torch's tied weights:
  /// PyG's GATConv has lin_dst = lin_src, so its state_dict holds both keys for one tensor). Not a parameter of
  /// its own: optimizers, checkpoints and namedParameters() see the target once; state_dicts read and write
  /// both names (namedStateEntries()).
  void registerAlias(const std::string& alias, const std::string& target);
  /// A child under the empty name lends its parameters to this module's names ("convs.0.lin.weight", not
  /// ".convs.0..."): a wrapper that adds behaviour (a model's pipeline blocks) keeps the wrapped model's keys.
  void registerModule(const std::string& name, Module& child);

  /// Makes this module a copy of `other`, a module of the same class built from the same options: copies
  /// every parameter value (new storage) and requires-grad flag, and every training flag of the tree. Throws
  /// when the classes, parameter names, shapes or dtypes differ (a subclass that does not override clone()).
  void copyStateFrom(const Module& other);
  /// The end of a clone(): `fresh` (built from this module's options) becomes a copy of this module.
  template <class M>
  std::unique_ptr<Module> cloneInto(std::unique_ptr<M> fresh) const {
    static_cast<Module&>(*fresh).copyStateFrom(*this);
    return fresh;
  }

 private:
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Variable>>& out,
               bool withAliases = false) const;
  void copyTrainingFlags(const Module& other);
  // A deque keeps the references handed out by registerParameter valid as more are added.
  std::deque<std::pair<std::string, Variable>> params_;
  std::vector<std::pair<std::string, Module*>> children_;
  std::vector<std::pair<std::string, std::string>> aliases_;  // (alias, target)
  bool training_ = true;
};

/// clone() with the static type kept: std::unique_ptr<GIN> replica = cloneModule(gin).
template <class M>
std::unique_ptr<M> cloneModule(const M& module) {
  std::unique_ptr<Module> copy = module.clone();
  M* typed = dynamic_cast<M*>(copy.get());
  GNN_ASSERT(typed, "clone() returned a module of another class");
  copy.release();
  return std::unique_ptr<M>(typed);
}

}  // namespace gnn
