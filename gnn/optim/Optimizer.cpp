#include "gnn/optim/Optimizer.h"

#include <cmath>
#include <cstring>
#include <utility>

#include "gnn/system/ExecutionContext.h"

#include "gnn/system/Parallel.h"

namespace gnn {

Optimizer::Optimizer(std::vector<ParamGroup> groups, double lr) : groups_(std::move(groups)), lr_(lr) {
  GNN_CHECK_ARG(lr >= 0, "optimizer: learning rate must be >= 0, got ", lr);
  // A parameter that requires no gradient (a frozen one, a buffer) is allowed: it never has one, so it is left
  // alone; such a buffer may be an integer (BatchNorm's num_batches_tracked).
  for (auto& g : groups_)
    for (auto& p : g.params)
      GNN_CHECK_ARG(p.defined() && (p.value().isFloating() || !p.requiresGrad()),
                    "optimizer: every trained parameter must be a float Variable");
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

void Optimizer::checkGrads(const std::vector<Tensor>& grads) const {
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
}

void Optimizer::step(const std::vector<Tensor>& grads) {
  checkGrads(grads);
  GNN_CHECK_ARG(shards_.empty(), "optimizer step: the state is sharded (setShards): use stepSharded");
  NoGradGuard ng;
  ++steps_;
  apply(grads);
}

void Optimizer::apply(const std::vector<Tensor>& grads) {
  // All parameters are cut into pieces of at most kPiece elements and the pieces shared out in one parallel
  // loop: per-parameter loops would leave the many small tensors (biases, norms) to one thread. The update is
  // elementwise, so any split gives the same bits.
  constexpr int64_t kPiece = int64_t{1} << 14;
  const std::vector<std::string> names = elementSlots();
  std::vector<Span> spans;
  forEachParam(grads, [&](ParamGroup& g, Variable& p, const Tensor& grad, size_t idx) {
    std::vector<Tensor> state;
    for (const auto& n : names) state.push_back(slot(n, idx, p.value()));
    for (int64_t b = 0; b < p.value().numel(); b += kPiece)
      spans.push_back({&g, p.value(), grad, state, b, std::min(p.value().numel(), b + kPiece), b});
  });
  parallelFor(static_cast<int64_t>(spans.size()), 1, [&](int64_t first, int64_t last) {
    for (int64_t k = first; k < last; ++k) updateSpan(spans[static_cast<size_t>(k)]);
  });
}

std::shared_ptr<MemoryAccount> Optimizer::accountFor(size_t idx) const {
  return stateAccount_ ? stateAccount_(idx) : nullptr;
}

namespace {
// Allocates under `account` (the current context's when null).
template <class F>
auto allocateUnder(const std::shared_ptr<MemoryAccount>& account, F&& f) {
  if (!account) return f();
  ExecutionContext ctx;
  ctx.setMemoryAccount(account);
  ContextScope use(ctx);
  return f();
}
}  // namespace

void Optimizer::setStateAccounts(std::function<std::shared_ptr<MemoryAccount>(size_t)> account) {
  stateAccount_ = std::move(account);
  if (!stateAccount_) return;
  for (auto& slot : slots_) {
    auto& v = slot.second;
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i].defined()) v[i] = allocateUnder(accountFor(i), [&] { return v[i].clone(); });
  }
}

int64_t Optimizer::numElements() const {
  int64_t n = 0;
  for (const auto& g : groups_)
    for (const auto& p : g.params) n += p.value().numel();
  return n;
}

std::vector<std::pair<int64_t, int64_t>> Optimizer::balancedRanges(int64_t elements, int64_t count) {
  GNN_CHECK_ARG(count >= 1 && elements >= 0, "balancedRanges: ", elements, " elements in ", count, " ranges");
  std::vector<std::pair<int64_t, int64_t>> out;
  const int64_t base = elements / count, extra = elements % count;
  int64_t at = 0;
  for (int64_t r = 0; r < count; ++r) {
    const int64_t n = base + (r < extra ? 1 : 0);
    out.push_back({at, at + n});
    at += n;
  }
  return out;
}

void Optimizer::setShards(std::vector<std::pair<int64_t, int64_t>> ranges,
                          std::function<std::shared_ptr<MemoryAccount>(size_t, size_t)> account) {
  if (!shards_.empty()) {
    slots_ = gathered();
    for (auto& slot : slots_) {
      auto& v = slot.second;
      for (size_t i = 0; i < v.size(); ++i)
        if (v[i].defined() && accountFor(i)) v[i] = allocateUnder(accountFor(i), [&] { return v[i].clone(); });
    }
  }
  shards_.clear();
  shardSlots_.clear();
  if (ranges.empty()) return;
  int64_t at = 0;
  for (const auto& [b, e] : ranges) {
    GNN_CHECK_ARG(b == at && e >= b, "setShards: ranges must be contiguous and in order from element 0");
    at = e;
  }
  GNN_CHECK_ARG(at == numElements(), "setShards: the ranges cover ", at, " elements, the parameters have ",
                numElements());
  shards_ = std::move(ranges);
  shardAccount_ = std::move(account);
  shardSlots_.resize(shards_.size());
  scatterShards();
}

// Parameter i's elements [lo, hi) that lie in shard r (lo == hi when none), as offsets into the parameter.
namespace {
std::pair<int64_t, int64_t> overlap(int64_t paramBegin, int64_t numel, std::pair<int64_t, int64_t> shard) {
  const int64_t lo = std::max(paramBegin, shard.first), hi = std::min(paramBegin + numel, shard.second);
  return lo < hi ? std::make_pair(lo - paramBegin, hi - paramBegin) : std::make_pair(int64_t{0}, int64_t{0});
}
}  // namespace

void Optimizer::scatterShards() {
  // Whole per-parameter state (slots_) -> the shards' parts; slots_ is emptied.
  const std::vector<Variable> flat = parameters();
  for (auto& slot : slots_) {
    // Named references, not structured bindings: the lambdas below capture them (C++17 cannot capture a
    // binding; clang refuses it).
    const std::string& name = slot.first;
    auto& v = slot.second;
    int64_t begin = 0;
    for (size_t i = 0; i < flat.size(); ++i) {
      const int64_t n = flat[i].value().numel();
      if (i < v.size() && v[i].defined()) {
        for (size_t r = 0; r < shards_.size(); ++r) {
          const auto [lo, hi] = overlap(begin, n, shards_[r]);
          if (lo == hi) continue;
          const int64_t len = hi - lo;
          auto& part = shardSlots_[r][name];
          part.resize(flat.size());
          part[i] = allocateUnder(shardAccount_ ? shardAccount_(r, i) : nullptr,
                                  [&] { return Tensor({len}, v[i].dtype()); });
          std::memcpy(part[i].raw(), static_cast<const char*>(std::as_const(v[i]).raw()) + lo * static_cast<int64_t>(dtypeSize(v[i].dtype())),
                      static_cast<size_t>((hi - lo) * static_cast<int64_t>(dtypeSize(v[i].dtype()))));
        }
      }
      begin += n;
    }
  }
  slots_.clear();
}

std::map<std::string, std::vector<Tensor>> Optimizer::gathered() const {
  // The shards' parts -> whole per-parameter state in slots_ (a parameter has state when its parts do).
  const std::vector<Variable> flat = parameters();
  std::map<std::string, std::vector<Tensor>> whole;
  for (size_t r = 0; r < shards_.size(); ++r)
    for (const auto& [name, parts] : shardSlots_[r]) {
      auto& v = whole[name];
      v.resize(flat.size());
      int64_t begin = 0;
      for (size_t i = 0; i < flat.size(); ++i) {
        const int64_t n = flat[i].value().numel();
        const auto [lo, hi] = overlap(begin, n, shards_[r]);
        begin += n;
        if (lo == hi || i >= parts.size() || !parts[i].defined()) continue;
        if (!v[i].defined()) v[i] = Tensor(flat[i].shape(), flat[i].dtype());
        std::memcpy(static_cast<char*>(v[i].raw()) + lo * static_cast<int64_t>(dtypeSize(v[i].dtype())), std::as_const(parts[i]).raw(),
                    static_cast<size_t>((hi - lo) * static_cast<int64_t>(dtypeSize(v[i].dtype()))));
      }
    }
  return whole;
}

void Optimizer::stepSharded(const std::vector<Tensor>& grads, const std::vector<std::vector<Variable>>& weights) {
  checkGrads(grads);
  GNN_CHECK_ARG(!shards_.empty(), "stepSharded: the state is not sharded (setShards)");
  GNN_CHECK_ARG(weights.size() == shards_.size(), "stepSharded: ", weights.size(), " weight copies for ",
                shards_.size(), " shards");
  NoGradGuard ng;
  ++steps_;
  const std::vector<std::string> names = elementSlots();
  std::vector<Span> spans;
  std::vector<const ParamGroup*> groupOf;
  for (const auto& g : groups_)
    for (size_t j = 0; j < g.params.size(); ++j) groupOf.push_back(&g);
  for (size_t r = 0; r < shards_.size(); ++r) {
    GNN_CHECK_ARG(weights[r].size() == grads.size(), "stepSharded: shard ", r, " has ", weights[r].size(),
                  " weights for ", grads.size(), " parameters");
    int64_t begin = 0;
    for (size_t i = 0; i < grads.size(); ++i) {
      const Tensor& w = weights[r][i].value();
      const int64_t n = w.numel();
      const auto [lo, hi] = overlap(begin, n, shards_[r]);
      const int64_t len = hi - lo;
      begin += n;
      if (lo == hi || !grads[i].defined()) continue;
      std::vector<Tensor> state;
      for (const auto& name : names) {
        auto& parts = shardSlots_[r][name];
        parts.resize(grads.size());
        if (!parts[i].defined())
          parts[i] = allocateUnder(shardAccount_ ? shardAccount_(r, i) : nullptr,
                                   [&] { return Tensor({len}, w.dtype()); });
        state.push_back(parts[i]);
      }
      spans.push_back({groupOf[i], w, grads[i], state, lo, hi, 0});
    }
  }
  parallelFor(static_cast<int64_t>(spans.size()), 1, [&](int64_t first, int64_t last) {
    for (int64_t k = first; k < last; ++k) updateSpan(spans[static_cast<size_t>(k)]);
  });
}

size_t Optimizer::paramCount() const {
  size_t n = 0;
  for (const auto& g : groups_) n += g.params.size();
  return n;
}


Tensor& Optimizer::slot(const std::string& name, size_t idx, const Tensor& like) {
  auto& v = slots_[name];
  if (v.size() != paramCount()) v.resize(paramCount());
  if (!v[idx].defined()) v[idx] = allocateUnder(accountFor(idx), [&] { return Tensor(like.shape(), like.dtype()); });
  return v[idx];
}

std::map<std::string, Tensor> Optimizer::state() const {
  std::map<std::string, Tensor> out;
  out["optimizer.step"] = Tensor::fromVector<int64_t>({steps_}, {1});
  out["optimizer.lr"] = Tensor::fromVector<double>({lr_}, {1});
  // Sharded: the whole state, gathered from the shards (a checkpoint loads with or without sharding).
  for (const auto& [name, v] : shards_.empty() ? slots_ : gathered())
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
  if (!shards_.empty()) {
    for (auto& s : shardSlots_) s.clear();
    scatterShards();
  }
}

SGD::SGD(std::vector<ParamGroup> groups, double lr, double momentum)
    : Optimizer(std::move(groups), lr), momentum_(momentum) {}

std::vector<std::string> SGD::elementSlots() const {
  if (momentum_ != 0) return {"momentum"};
  return {};
}

void SGD::updateSpan(const Span& sp) const {
  dispatchFloat(sp.w.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* __restrict w = const_cast<Tensor&>(sp.w).data<T>();
    const T* __restrict gr = sp.g.data<T>();
    const T wd = static_cast<T>(sp.group->weightDecay), lr = static_cast<T>(lr_), mom = static_cast<T>(momentum_);
    if (momentum_ != 0) {
      T* __restrict buf = const_cast<Tensor&>(sp.state[0]).data<T>() + (sp.stateBegin - sp.begin);
      // PyTorch: the first step initialises the buffer with the gradient.
      const bool first = steps_ == 1;
      for (int64_t i = sp.begin; i < sp.end; ++i) {
        const T d = gr[i] + wd * w[i];
        buf[i] = first ? d : mom * buf[i] + d;
        w[i] -= lr * buf[i];
      }
    } else {
      for (int64_t i = sp.begin; i < sp.end; ++i) {
        const T d = gr[i] + wd * w[i];
        w[i] -= lr * d;
      }
    }
  });
}

Adam::Adam(std::vector<ParamGroup> groups, double lr, double beta1, double beta2, double eps)
    : Optimizer(std::move(groups), lr), beta1_(beta1), beta2_(beta2), eps_(eps) {
  GNN_CHECK_ARG(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, "Adam: betas must be in [0, 1)");
}

void Adam::adamSpan(const Span& sp, bool decoupled) const {
  const double bc1 = 1 - std::pow(beta1_, static_cast<double>(steps_));
  const double bc2 = 1 - std::pow(beta2_, static_cast<double>(steps_));
  dispatchFloat(sp.w.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* __restrict w = const_cast<Tensor&>(sp.w).data<T>();
    const T* __restrict gr = sp.g.data<T>();
    T* __restrict m = const_cast<Tensor&>(sp.state[0]).data<T>() + (sp.stateBegin - sp.begin);
    T* __restrict v = const_cast<Tensor&>(sp.state[1]).data<T>() + (sp.stateBegin - sp.begin);
    const T b1 = static_cast<T>(beta1_), b2 = static_cast<T>(beta2_), wd = static_cast<T>(sp.group->weightDecay);
    const T lr = static_cast<T>(lr_), stepSize = static_cast<T>(lr_ / bc1), sqrtBc2 = static_cast<T>(std::sqrt(bc2));
    const T eps = static_cast<T>(eps_);
    // decoupled (AdamW): w -= lr wd w; coupled (Adam): g += wd w. Written branch-free to vectorise.
    const T decay = decoupled ? T(1) - lr * wd : T(1), l2 = decoupled ? T(0) : wd;
    for (int64_t i = sp.begin; i < sp.end; ++i) {
      const T gi = gr[i] + l2 * w[i];
      const T wi = w[i] * decay;
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      w[i] = wi - stepSize * m[i] / (std::sqrt(v[i]) / sqrtBc2 + eps);
    }
  });
}

}  // namespace gnn
