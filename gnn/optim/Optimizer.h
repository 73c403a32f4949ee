// Optimizer: updates parameters from gradients. Parameters come in groups with their own weight decay (e.g.
// the GCN paper decays only the first layer). step() uses the gradients the parameters hold; step(grads)
// takes them from the caller, one per parameter in group order: a device's sum over replicas and
// micro-batches, or what a GradientSink collected. State (moments, step count) is exposed by name for
// checkpoints.
//
//   Adam opt({{conv1.parameters(), 5e-4}, {conv2.parameters(), 0.0}}, /*lr=*/0.01);
//   opt.zeroGrad(); loss.backward(); opt.step();
//   opt.step(sink.grads(opt.parameters()));                // gradients gathered elsewhere
//
// SGD, Adam and AdamW are elementwise: each element of a parameter is updated from its gradient and its own
// state elements only, by updateSpan(). That is what lets a device shard the state (replicated tensor
// sharding): setShards() splits the flattened parameter list (parameters in group order, each flattened) into
// contiguous element ranges, each with its own state storage (sized to the range, allocated under the account
// the caller names), and stepSharded() updates range by range into the weights each range's owner holds. The
// arithmetic per element is the same code either way, so sharded and unsharded updates give the same bits.
// state() always returns the whole (gathered) state and loadState() accepts it, sharded or not.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gnn/autograd/Variable.h"
#include "gnn/system/MemoryAccount.h"

namespace gnn {

struct ParamGroup {
  std::vector<Variable> params;
  double weightDecay = 0.0;
};

class Optimizer {
 public:
  Optimizer(std::vector<ParamGroup> groups, double lr);
  virtual ~Optimizer() = default;

  /// One update from the current gradients (parameters without a gradient are left alone).
  void step();
  /// One update from `grads`, one per parameter in group order (parameters()); an undefined tensor means no
  /// gradient, and that parameter is left alone. Throws when the count, a shape or a dtype differs.
  void step(const std::vector<Tensor>& grads);
  void zeroGrad();
  /// Every parameter, in group order: the order step(grads) expects.
  std::vector<Variable> parameters() const;
  double lr() const { return lr_; }
  void setLr(double lr) { lr_ = lr; }
  int64_t stepCount() const { return steps_; }
  const std::vector<ParamGroup>& groups() const { return groups_; }

  /// Tensors of parameter size the optimizer keeps per parameter (Adam: m and v), for memory models.
  virtual int64_t stateTensorsPerParameter() const = 0;
  /// Named state tensors ("adam.m.3") and the step count, for checkpoints.
  virtual std::map<std::string, Tensor> state() const;
  /// Restores state saved by state(); throws when names or shapes differ.
  virtual void loadState(const std::map<std::string, Tensor>& state);

  /// Where the state of parameter `index` is allocated (default, or an empty function: the account of the
  /// context current when it is first needed). A device keeps it on the IPU that owns the parameter, or in
  /// streaming memory when it is offloaded. Existing state is moved to its new account.
  void setStateAccounts(std::function<std::shared_ptr<MemoryAccount>(size_t index)> account);

  /// Replicated tensor sharding: the state split into `ranges` of the flattened parameter list (contiguous,
  /// covering it in order), range r's state allocated under account(r, parameter index). Existing state moves
  /// into the shards. An empty list ends sharding (the state is gathered back).
  void setShards(std::vector<std::pair<int64_t, int64_t>> ranges,
                 std::function<std::shared_ptr<MemoryAccount>(size_t shard, size_t index)> account);
  size_t numShards() const { return shards_.size(); }
  /// Elements of every parameter, flattened in group order.
  int64_t numElements() const;
  /// `count` contiguous ranges of the flattened parameters, as even as elements allow (the first ones one
  /// element longer).
  static std::vector<std::pair<int64_t, int64_t>> balancedRanges(int64_t elements, int64_t count);
  /// One sharded update: the step counted once, then each shard r updates its range in weights[r] (one Variable
  /// per parameter, in parameters() order: the copy of the model its owner holds) from its own state. The
  /// caller then gathers the ranges into every copy. Needs setShards() and an elementwise optimizer.
  void stepSharded(const std::vector<Tensor>& grads, const std::vector<std::vector<Variable>>& weights);

 protected:
  /// A run of elements of one parameter and its state.
  struct Span {
    const ParamGroup* group = nullptr;
    Tensor w, g;                 // the parameter's value and gradient (whole tensors)
    std::vector<Tensor> state;   // one per elementSlots() entry
    int64_t begin = 0, end = 0;  // elements of w and g
    int64_t stateBegin = 0;      // element of each state tensor matching `begin`
  };
  /// Per-element state slots in the order updateSpan() receives them ({"m", "v"}; {} when stateless).
  virtual std::vector<std::string> elementSlots() const = 0;
  /// The update of one span; steps_ is already counted. Runs on several threads for different spans.
  virtual void updateSpan(const Span& span) const = 0;
  /// The update itself, from checked gradients (one per parameter, undefined = none); steps_ is already
  /// counted. Default: updateSpan over pieces of every parameter that has a gradient, in parallel.
  virtual void apply(const std::vector<Tensor>& grads);
  /// Calls f(group, param, grad, index) for every parameter with a gradient; index is stable across steps.
  template <class F>
  void forEachParam(const std::vector<Tensor>& grads, F&& f) {
    size_t idx = 0;
    for (auto& g : groups_)
      for (auto& p : g.params) {
        if (grads[idx].defined()) f(g, p, grads[idx], idx);
        ++idx;
      }
  }
  size_t paramCount() const;
  std::vector<ParamGroup> groups_;
  double lr_;
  int64_t steps_ = 0;
  /// Per-parameter state slots, e.g. {"m", "v"}; allocated lazily, zero-initialised.
  std::map<std::string, std::vector<Tensor>> slots_;
  Tensor& slot(const std::string& name, size_t idx, const Tensor& like);

 private:
  void checkGrads(const std::vector<Tensor>& grads) const;
  std::shared_ptr<MemoryAccount> accountFor(size_t idx) const;
  std::function<std::shared_ptr<MemoryAccount>(size_t)> stateAccount_;
  // Sharded state: shards_[r] = elements [first, second) of the flattened parameters; shardSlots_[r][slot][i] =
  // the part of parameter i's state in shard r (1-D, undefined until first needed or when none).
  std::vector<std::pair<int64_t, int64_t>> shards_;
  std::function<std::shared_ptr<MemoryAccount>(size_t, size_t)> shardAccount_;
  std::vector<std::map<std::string, std::vector<Tensor>>> shardSlots_;
  std::map<std::string, std::vector<Tensor>> gathered() const;
  void scatterShards();
};

/// SGD with optional momentum (PyTorch semantics) and L2 weight decay added to the gradient.
class SGD : public Optimizer {
 public:
  SGD(std::vector<ParamGroup> groups, double lr, double momentum = 0.0);
  int64_t stateTensorsPerParameter() const override { return momentum_ != 0.0 ? 1 : 0; }

 protected:
  std::vector<std::string> elementSlots() const override;
  void updateSpan(const Span& span) const override;

 private:
  double momentum_;
};

/// Adam (Kingma & Ba 2015) as torch.optim.Adam: weight decay is L2 added to the gradient.
class Adam : public Optimizer {
 public:
  Adam(std::vector<ParamGroup> groups, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8);
  int64_t stateTensorsPerParameter() const override { return 2; }

 protected:
  std::vector<std::string> elementSlots() const override { return {"m", "v"}; }
  void updateSpan(const Span& span) const override { adamSpan(span, false); }
  /// decoupled = true gives AdamW.
  void adamSpan(const Span& span, bool decoupled) const;
  double beta1_, beta2_, eps_;
};

/// AdamW (Loshchilov & Hutter 2019) as torch.optim.AdamW: weight decay decoupled from the gradient,
/// p -= lr * wd * p before the Adam update.
class AdamW : public Adam {
 public:
  using Adam::Adam;

 protected:
  void updateSpan(const Span& span) const override { adamSpan(span, true); }
};

}  // namespace gnn
