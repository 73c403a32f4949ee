// Optimizer: updates parameters from gradients. Parameters come in groups with their own weight decay (e.g.
// the GCN paper decays only the first layer). step() uses the gradients the parameters hold; step(grads)
// takes them from the caller, one per parameter in group order: a device's sum over replicas and
// micro-batches, or what a GradientSink collected. State (moments, step count) is exposed by name for
// checkpoints.
//
//   Adam opt({{conv1.parameters(), 5e-4}, {conv2.parameters(), 0.0}}, /*lr=*/0.01);
//   opt.zeroGrad(); loss.backward(); opt.step();
//   opt.step(sink.grads(opt.parameters()));                // gradients gathered elsewhere
#pragma once
#include <map>
#include <string>
#include <vector>

#include "gnn/Variable.h"

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

 protected:
  /// The update itself, from checked gradients (one per parameter, undefined = none); steps_ is already
  /// counted.
  virtual void apply(const std::vector<Tensor>& grads) = 0;
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
};

/// SGD with optional momentum (PyTorch semantics) and L2 weight decay added to the gradient.
class SGD : public Optimizer {
 public:
  SGD(std::vector<ParamGroup> groups, double lr, double momentum = 0.0);
  int64_t stateTensorsPerParameter() const override { return momentum_ != 0.0 ? 1 : 0; }

 protected:
  void apply(const std::vector<Tensor>& grads) override;

 private:
  double momentum_;
};

/// Adam (Kingma & Ba 2015) as torch.optim.Adam: weight decay is L2 added to the gradient.
class Adam : public Optimizer {
 public:
  Adam(std::vector<ParamGroup> groups, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8);
  int64_t stateTensorsPerParameter() const override { return 2; }

 protected:
  void apply(const std::vector<Tensor>& grads) override { adamStep(grads, false); }
  /// decoupled = true gives AdamW.
  void adamStep(const std::vector<Tensor>& grads, bool decoupled);
  double beta1_, beta2_, eps_;
};

/// AdamW (Loshchilov & Hutter 2019) as torch.optim.AdamW: weight decay decoupled from the gradient,
/// p -= lr * wd * p before the Adam update.
class AdamW : public Adam {
 public:
  using Adam::Adam;

 protected:
  void apply(const std::vector<Tensor>& grads) override { adamStep(grads, true); }
};

}  // namespace gnn
