#include "gnn/Optimizer.h"

#include <cmath>

#include "gnn/Parallel.h"

namespace gnn {

Optimizer::Optimizer(std::vector<ParamGroup> groups, double lr) : groups_(std::move(groups)), lr_(lr) {
  GNN_CHECK_ARG(lr >= 0, "optimizer: learning rate must be >= 0, got ", lr);
  for (auto& g : groups_)
    for (auto& p : g.params)
      GNN_CHECK_ARG(p.requiresGrad() && p.value().isFloating(), "optimizer: every parameter must be a float "
                    "Variable that requires a gradient");
}

void Optimizer::zeroGrad() {
  for (auto& g : groups_)
    for (auto& p : g.params) p.zeroGrad();
}

std::vector<Variable> Optimizer::parameters() const {
  std::vector<Variable> out;
  for (const auto& g : groups_) out.insert(out.end(), g.params.begin(), g.params.end());
  return out;
}

void Optimizer::step() {
  std::vector<Tensor> grads;
  grads.reserve(paramCount());
  for (const auto& g : groups_)
    for (const auto& p : g.params) grads.push_back(p.hasGrad() ? p.grad() : Tensor());
  step(grads);
}

void Optimizer::step(const std::vector<Tensor>& grads) {
  GNN_CHECK_ARG(grads.size() == paramCount(), "optimizer step: ", grads.size(), " gradients for ", paramCount(),
                " parameters (one per parameter in group order, undefined for none)");
  size_t idx = 0;
  for (const auto& g : groups_)
    for (const auto& p : g.params) {
      const Tensor& gr = grads[idx];
      GNN_CHECK_ARG(!gr.defined() || (gr.shape() == p.shape() && gr.dtype() == p.dtype()), "optimizer step: gradient ",
                    idx, " is ", dtypeName(gr.dtype()), " ", shapeString(gr.shape()), " but parameter ", idx, " is ",
                    dtypeName(p.dtype()), " ", shapeString(p.shape()));
      ++idx;
    }
  NoGradGuard ng;
  ++steps_;
  apply(grads);
}

size_t Optimizer::paramCount() const {
  size_t n = 0;
  for (const auto& g : groups_) n += g.params.size();
  return n;
}

Tensor& Optimizer::slot(const std::string& name, size_t idx, const Tensor& like) {
  auto& v = slots_[name];
  if (v.size() != paramCount()) v.resize(paramCount());
  if (!v[idx].defined()) v[idx] = Tensor(like.shape(), like.dtype());
  return v[idx];
}

std::map<std::string, Tensor> Optimizer::state() const {
  std::map<std::string, Tensor> out;
  out["optimizer.step"] = Tensor::fromVector<int64_t>({steps_}, {1});
  out["optimizer.lr"] = Tensor::fromVector<double>({lr_}, {1});
  for (const auto& [name, v] : slots_)
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i].defined()) out["optimizer." + name + "." + std::to_string(i)] = v[i];
  return out;
}

void Optimizer::loadState(const std::map<std::string, Tensor>& state) {
  auto it = state.find("optimizer.step");
  GNN_CHECK_ARG(it != state.end(), "optimizer state: 'optimizer.step' missing");
  GNN_CHECK_ARG(it->second.numel() == 1, "optimizer state: 'optimizer.step' must hold one value");
  const double step = it->second.at(0);
  GNN_CHECK_ARG(step >= 0 && step < 9.0e15 && step == std::floor(step), "optimizer state: step count ", step,
                " is not a count");
  if (auto l = state.find("optimizer.lr"); l != state.end()) {
    // 0 is a learning rate a schedule ends on (cosine, linear decay), so a run saved at its end loads.
    GNN_CHECK_ARG(l->second.numel() == 1 && std::isfinite(l->second.at(0)) && l->second.at(0) >= 0,
                  "optimizer state: the learning rate is not a finite number >= 0");
    lr_ = l->second.at(0);
  }
  steps_ = static_cast<int64_t>(step);
  slots_.clear();
  std::vector<Variable> flat;
  for (auto& g : groups_)
    for (auto& p : g.params) flat.push_back(p);
  for (const auto& [key, t] : state) {
    if (key.rfind("optimizer.", 0) != 0 || key == "optimizer.step" || key == "optimizer.lr") continue;
    std::string rest = key.substr(10);
    size_t dot = rest.rfind('.');
    GNN_CHECK_ARG(dot != std::string::npos, "optimizer state: bad entry name '", key, "'");
    // The parameter index is digits only (std::stoul would take "-1", " 1" or "1x", and throw out_of_range
    // past 2^64).
    const std::string digits = rest.substr(dot + 1);
    GNN_CHECK_ARG(!digits.empty() && digits.size() <= 9 && digits.find_first_not_of("0123456789") == std::string::npos,
                  "optimizer state: bad entry name '", key, "'");
    size_t idx = std::stoul(digits);
    GNN_CHECK_ARG(idx < flat.size(), "optimizer state: entry '", key, "' for parameter ", idx, " but the optimizer has ",
                  flat.size());
    GNN_CHECK_ARG(t.shape() == flat[idx].shape() && t.dtype() == flat[idx].dtype(), "optimizer state: '", key,
                  "' has shape ", shapeString(t.shape()), " but parameter ", idx, " has ",
                  shapeString(flat[idx].shape()));
    bool finite = true;
    const Tensor& value = t;  // clang 14 cannot capture a structured binding in a lambda (C++20 allows it)
    dispatchFloat(value.dtype(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      finite = value.flat<T>().allFinite();
    });
    GNN_CHECK_ARG(finite, "optimizer state: '", key, "' holds NaN or infinite values");
    slot(rest.substr(0, dot), idx, t) = t.clone();
  }
  // Slots come in sets (Adam: m and v) per parameter: a parameter with some but not all of them is a damaged
  // state, which would silently restart that parameter's moments.
  if (steps_ > 0) {
    for (const auto& [name, v] : slots_)
      for (const auto& [other, w] : slots_)
        for (size_t i = 0; i < std::max(v.size(), w.size()); ++i) {
          const bool a = i < v.size() && v[i].defined(), b = i < w.size() && w[i].defined();
          GNN_CHECK_ARG(a == b, "optimizer state: parameter ", i, " has '", a ? name : other, "' but no '",
                        a ? other : name, "'");
        }
  }
}

SGD::SGD(std::vector<ParamGroup> groups, double lr, double momentum)
    : Optimizer(std::move(groups), lr), momentum_(momentum) {}

void SGD::apply(const std::vector<Tensor>& grads) {
  forEachParam(grads, [&](ParamGroup& g, Variable& p, const Tensor& grad, size_t idx) {
    dispatchFloat(p.dtype(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      auto w = p.value().flat<T>();
      auto d = (grad.flat<T>() + static_cast<T>(g.weightDecay) * w).eval();
      if (momentum_ != 0) {
        auto buf = slot("momentum", idx, p.value()).flat<T>();
        // PyTorch: the first step initialises the buffer with the gradient.
        if (steps_ == 1) buf = d;
        else buf = static_cast<T>(momentum_) * buf + d;
        w -= static_cast<T>(lr_) * buf;
      } else {
        w -= static_cast<T>(lr_) * d;
      }
    });
  });
}

Adam::Adam(std::vector<ParamGroup> groups, double lr, double beta1, double beta2, double eps)
    : Optimizer(std::move(groups), lr), beta1_(beta1), beta2_(beta2), eps_(eps) {
  GNN_CHECK_ARG(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, "Adam: betas must be in [0, 1)");
}

void Adam::adamStep(const std::vector<Tensor>& grads, bool decoupled) {
  const double bc1 = 1 - std::pow(beta1_, static_cast<double>(steps_));
  const double bc2 = 1 - std::pow(beta2_, static_cast<double>(steps_));
  // The update is elementwise, so any split gives the same bits. All parameters are cut into pieces of at
  // most kPiece elements and the pieces shared out in one parallel loop: per-parameter loops would leave the
  // many small tensors (biases, norms) to one thread.
  constexpr int64_t kPiece = int64_t{1} << 14;
  struct Piece {
    ParamGroup* group;
    Variable* param;
    const Tensor* grad;
    Tensor m, v;
    int64_t begin, end;
  };
  std::vector<Piece> pieces;
  forEachParam(grads, [&](ParamGroup& g, Variable& p, const Tensor& grad, size_t idx) {
    Tensor& m = slot("m", idx, p.value());
    Tensor& v = slot("v", idx, p.value());
    for (int64_t b = 0; b < p.value().numel(); b += kPiece)
      pieces.push_back({&g, &p, &grad, m, v, b, std::min(p.value().numel(), b + kPiece)});
  });
  parallelFor(static_cast<int64_t>(pieces.size()), 1, [&](int64_t first, int64_t last) {
    for (int64_t k = first; k < last; ++k) {
      Piece& pc = pieces[static_cast<size_t>(k)];
      dispatchFloat(pc.param->dtype(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        T* __restrict w = pc.param->value().data<T>();
        const T* __restrict gr = pc.grad->data<T>();
        T* __restrict m = pc.m.data<T>();
        T* __restrict v = pc.v.data<T>();
        const T b1 = static_cast<T>(beta1_), b2 = static_cast<T>(beta2_), wd = static_cast<T>(pc.group->weightDecay);
        const T lr = static_cast<T>(lr_), stepSize = static_cast<T>(lr_ / bc1), sqrtBc2 = static_cast<T>(std::sqrt(bc2));
        const T eps = static_cast<T>(eps_);
        // decoupled (AdamW): w -= lr wd w; coupled (Adam): g += wd w. Written branch-free to vectorise.
        const T decay = decoupled ? T(1) - lr * wd : T(1), l2 = decoupled ? T(0) : wd;
        for (int64_t i = pc.begin; i < pc.end; ++i) {
          const T gi = gr[i] + l2 * w[i];
          const T wi = w[i] * decay;
          m[i] = b1 * m[i] + (1 - b1) * gi;
          v[i] = b2 * v[i] + (1 - b2) * gi * gi;
          w[i] = wi - stepSize * m[i] / (std::sqrt(v[i]) / sqrtBc2 + eps);
        }
      });
    }
  });
}

}  // namespace gnn
