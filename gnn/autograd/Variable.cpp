#include "gnn/autograd/Variable.h"

#include <unordered_set>
#include <utility>

#include "gnn/autograd/GradientSink.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {
thread_local bool gGradEnabled = true;

// acc += g. The first gradient is shared, not copied (ops hand over fresh tensors, or pass theirs through);
// accumulation writes in place only into storage nobody else holds.
void accumulate(Tensor& acc, const Tensor& g) {
  if (!acc.defined()) {
    acc = g;
    return;
  }
  if (g.dtype() == DType::F16) {
    // float16 is a storage type (gnn::cast): gradients are added in float32 and the sum stored as float16.
    GNN_CHECK_ARG(acc.dtype() == DType::F16, "gradient of dtype float16 added to one of ", dtypeName(acc.dtype()));
    Tensor sum = acc.uniquelyOwned() ? acc : Tensor::empty(g.shape(), g.dtype());
    Eigen::half* s = sum.data<Eigen::half>();
    const Eigen::half* a = std::as_const(acc).data<Eigen::half>();
    const Eigen::half* b = g.data<Eigen::half>();
    parallelElements(sum.numel(), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) s[i] = Eigen::half(static_cast<float>(a[i]) + static_cast<float>(b[i]));
    });
    acc = std::move(sum);
    return;
  }
  dispatchFloat(g.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor sum = acc.uniquelyOwned() ? acc : Tensor::empty(g.shape(), g.dtype());
    T* s = sum.data<T>();
    const T* a = std::as_const(acc).data<T>();
    const T* b = g.data<T>();
    // A plain loop compiled per CPU level (an Eigen expression keeps the library's compile-time vector width).
    parallelElements(sum.numel(), [&](int64_t lo, int64_t hi) GNN_CPU_CLONES {
      for (int64_t i = lo; i < hi; ++i) s[i] = a[i] + b[i];
    });
    acc = std::move(sum);
  });
}

void checkGradShape(const Tensor& g, const Shape& shape, DType dtype) {
  GNN_CHECK_ARG(g.shape() == shape && g.dtype() == dtype, "gradient of shape ", shapeString(g.shape()), " (",
                dtypeName(g.dtype()), ") for a variable of shape ", shapeString(shape), " (", dtypeName(dtype), ")");
}

// Adds g into node's gradient, or into the context's sink for parameters (leaves). Under a half-precision
// context the gradient is rounded to half first (in place: a gradient handed over is the closure's own, or a
// value already rounded, which rounding leaves unchanged), saturations counted as overflow; a sum of two
// gradients into an intermediate is rounded again, while a sink sums in float32 (fp32 accumulation).
void accumulateNode(Variable::Node& node, const Tensor& g) {
  ExecutionContext& ctx = ExecutionContext::current();
  const bool half = ctx.rounding() != Rounding::None;
  if (half) ctx.addGradientOverflows(ctx.roundStored(const_cast<Tensor&>(g)));
  GradientSink* sink = ctx.gradientSink();
  if (sink && !node.backward) {
    sink->accumulate(&node, g);
    return;
  }
  struct Writer {
    std::atomic<int>& w;
    explicit Writer(std::atomic<int>& c) : w(c) {
      if (w.fetch_add(1, std::memory_order_acq_rel) != 0) {
        w.fetch_sub(1, std::memory_order_acq_rel);
        throw std::logic_error(
            "two threads accumulated into the same gradient at once: give each thread's ExecutionContext its own "
            "GradientSink (gnn/autograd/GradientSink.h) and sum the sinks in a fixed order");
      }
    }
    ~Writer() { w.fetch_sub(1, std::memory_order_acq_rel); }
  } writer(node.writers);
  const bool sum = node.grad.defined();
  accumulate(node.grad, g);
  if (half && sum) ctx.roundStored(node.grad);
}

// Storage bytes of the distinct buffers among `tensors`, skipping those already in `seen`.
int64_t distinctBytes(const std::vector<Tensor>& tensors, std::unordered_set<const void*>& seen, int64_t* count) {
  int64_t bytes = 0;
  for (const Tensor& t : tensors)
    if (t.defined() && seen.insert(t.storageId()).second) {
      bytes += static_cast<int64_t>(t.storageBytes());
      if (count) ++*count;
    }
  return bytes;
}
}  // namespace

bool gradEnabled() { return gGradEnabled; }
NoGradGuard::NoGradGuard() : previous_(gGradEnabled) { gGradEnabled = false; }
NoGradGuard::~NoGradGuard() { gGradEnabled = previous_; }

Variable::Variable(Tensor value, bool requiresGrad)
    : data_(std::make_shared<Data>()), node_(std::make_shared<Node>()) {
  node_->shape = value.shape();
  node_->dtype = value.dtype();
  node_->requiresGrad = requiresGrad;
  data_->value = std::move(value);
}

Variable Variable::record(const OpInfo& info, Tensor value, std::vector<Variable> inputs, std::vector<Tensor> saved,
                          BackwardFn backward) {
  ExecutionContext& ctx = ExecutionContext::current();
  // Half precision: the value is stored rounded (ops compute in float32 and store half).
  if (ctx.rounding() != Rounding::None) ctx.roundStored(value);
  Variable out(std::move(value), false);
  bool any = false;
  if (gGradEnabled)
    for (const auto& in : inputs) any = any || in.requiresGrad();
  int64_t savedBytes = 0;
  if (any) {
    Node& n = *out.node_;
    n.requiresGrad = true;
    n.info = info;
    n.block = ctx.block();
    n.inputs.reserve(inputs.size());
    for (const auto& in : inputs) {
      GradInput g;
      g.node_ = in.node_;
      g.shape_ = in.shape();
      g.dtype_ = in.dtype();
      n.inputs.push_back(std::move(g));
    }
    n.saved = std::move(saved);
    n.backward = std::move(backward);
    if (ctx.observer()) {
      std::unordered_set<const void*> seen;
      savedBytes = distinctBytes(n.saved, seen, nullptr);
    }
  }
  if (OpObserver* obs = ctx.observer()) {
    auto now = std::chrono::steady_clock::now();
    OpEvent e{&info, Pass::Forward, ctx.block(), std::chrono::duration<double>(now - ctx.lastMark()).count(),
              info.flops, info.bytesRead + info.bytesWritten, &out.value(), savedBytes, any};
    obs->onOp(e);
    ctx.setMark(std::chrono::steady_clock::now());
  }
  return out;
}

const Tensor& Variable::value() const {
  GNN_CHECK_ARG(data_, "use of an undefined Variable");
  return data_->value;
}
Tensor& Variable::value() {
  GNN_CHECK_ARG(data_, "use of an undefined Variable");
  return data_->value;
}
void Variable::setRequiresGrad(bool r) {
  GNN_CHECK_ARG(node_, "use of an undefined Variable");
  node_->requiresGrad = r;
}
const Tensor& Variable::grad() const {
  GNN_CHECK_ARG(node_, "use of an undefined Variable");
  return node_->grad;
}
Tensor& Variable::grad() {
  GNN_CHECK_ARG(node_, "use of an undefined Variable");
  return node_->grad;
}

void Variable::addGrad(const Tensor& g) {
  const Tensor& v = value();
  checkGradShape(g, v.shape(), v.dtype());
  accumulateNode(*node_, g);
}

void Variable::zeroGrad() {
  if (node_) node_->grad = Tensor();
}

int64_t GradInput::dim(int i) const {
  const int r = static_cast<int>(shape_.size());
  if (i < 0) i += r;
  GNN_CHECK_ARG(i >= 0 && i < r, "GradInput::dim(", i, ") out of range for shape ", shapeString(shape_));
  return shape_[i];
}

void GradInput::addGrad(const Tensor& g) const {
  GNN_CHECK_ARG(node_, "gradient for an undefined input");
  checkGradShape(g, shape_, dtype_);
  accumulateNode(*node_, g);
}

void Variable::backward() {
  GNN_CHECK_ARG(value().numel() == 1, "backward() without a seed needs a scalar, got shape ",
                shapeString(value().shape()));
  backward(Tensor::full(value().shape(), 1.0, value().dtype()));
}

void Variable::backward(const Tensor& seed) {
  GNN_CHECK_ARG(requiresGrad(), "backward() on a variable that does not require a gradient");
  backward(std::vector<Variable>{*this}, std::vector<Tensor>{seed});
}

void Variable::backward(const std::vector<Variable>& roots, const std::vector<Tensor>& seeds) {
  GNN_CHECK_ARG(roots.size() == seeds.size(), "backward: ", roots.size(), " roots but ", seeds.size(), " seeds");
  // Iterative post-order DFS from every root, one visited set: `order` ends up with every node before all the
  // nodes that consume it (in a DAG a node reached from a later root has already finished), and is run back to
  // front. `order` holds owning pointers: releasing a node's inputs below must not free nodes still to be visited.
  std::vector<std::shared_ptr<Node>> order;
  std::unordered_set<Node*> seen;
  std::unordered_set<Node*> rootNodes;
  for (const Variable& r : roots) {
    GNN_CHECK_ARG(r.requiresGrad(), "backward() on a variable that does not require a gradient");
    rootNodes.insert(r.node_.get());
    if (!seen.insert(r.node_.get()).second) continue;
    std::vector<std::pair<std::shared_ptr<Node>, size_t>> stack{{r.node_, 0}};
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        const std::shared_ptr<Node>& child = n->inputs[next++].node_;
        if (child->requiresGrad && child->backward && seen.insert(child.get()).second) stack.push_back({child, 0});
      } else {
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  for (size_t i = 0; i < roots.size(); ++i) const_cast<Variable&>(roots[i]).addGrad(seeds[i]);
  ExecutionContext& ctx = ExecutionContext::current();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = it->get();
    if (n->grad.defined() && n->backward) {
      OpObserver* obs = ctx.observer();
      auto t0 = obs ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
      // The closure runs in the block its op was recorded in, so what it reports (a gradient to a sink, an
      // op) is charged to that block.
      const char* outer = ctx.block();
      ctx.setBlock(n->block);
      n->backward(n->grad, n->inputs, n->saved);
      ctx.setBlock(outer);
      if (obs) {
        auto t1 = std::chrono::steady_clock::now();
        OpEvent e{&n->info, Pass::Backward, n->block, std::chrono::duration<double>(t1 - t0).count(),
                  n->info.backwardFlops, 0, nullptr, 0, true};
        obs->onOp(e);
        ctx.setMark(std::chrono::steady_clock::now());
      }
    }
    // Release the tape as we go: intermediate gradients and saved activations are no longer needed.
    if (!rootNodes.count(n) && n->backward) n->grad = Tensor();
    n->backward = nullptr;
    n->saved.clear();
    n->inputs.clear();
  }
}

TapeStats tapeStats(const Variable& root) {
  TapeStats st;
  if (!root.node_) return st;
  std::unordered_set<const Variable::Node*> visited{root.node_.get()};
  std::unordered_set<const void*> buffers;
  std::vector<const Variable::Node*> stack{root.node_.get()};
  while (!stack.empty()) {
    const Variable::Node* n = stack.back();
    stack.pop_back();
    if (!n->backward) continue;
    ++st.ops;
    st.savedBytes += distinctBytes(n->saved, buffers, &st.savedTensors);
    for (const GradInput& in : n->inputs)
      if (in.node_ && visited.insert(in.node_.get()).second) stack.push_back(in.node_.get());
  }
  return st;
}

Tensor GradientSink::grad(const Variable& param) const {
  auto it = grads_.find(param.node_.get());
  return it == grads_.end() ? Tensor() : it->second;
}

std::vector<Tensor> GradientSink::grads(const std::vector<Variable>& params) const {
  std::vector<Tensor> out;
  out.reserve(params.size());
  for (const auto& p : params) out.push_back(grad(p));
  return out;
}

Tensor GradientSink::take(const Variable& v) {
  auto it = grads_.find(v.node_.get());
  if (it == grads_.end()) return Tensor();
  Tensor g = std::move(it->second);
  grads_.erase(it);
  blocks_.erase(v.node_.get());
  return g;
}

void GradientSink::accumulate(const Variable::Node* node, const Tensor& g) {
  gnn::accumulate(grads_[node], g);
  blocks_.emplace(node, ExecutionContext::current().block());  // the first block to reach it
}

const char* GradientSink::blockOf(const Variable& v) const {
  auto it = blocks_.find(v.node_.get());
  return it == blocks_.end() ? "" : it->second;
}

}  // namespace gnn
