#include "gnn/Variable.h"

#include <unordered_set>

#include "gnn/Parallel.h"

namespace gnn {
namespace {
thread_local bool gGradEnabled = true;
}

bool gradEnabled() { return gGradEnabled; }
NoGradGuard::NoGradGuard() : previous_(gGradEnabled) { gGradEnabled = false; }
NoGradGuard::~NoGradGuard() { gGradEnabled = previous_; }

Variable::Variable(Tensor value, bool requiresGrad) : node_(std::make_shared<Node>()) {
  node_->value = std::move(value);
  node_->requiresGrad = requiresGrad;
}

Variable Variable::record(Tensor value, std::vector<Variable> inputs, BackwardFn backward) {
  Variable out(std::move(value), false);
  if (!gGradEnabled) return out;
  bool any = false;
  for (const auto& in : inputs) any = any || in.requiresGrad();
  if (!any) return out;
  out.node_->requiresGrad = true;
  out.node_->inputs = std::move(inputs);
  out.node_->backward = std::move(backward);
  return out;
}

const Tensor& Variable::value() const {
  GNN_CHECK_ARG(node_, "use of an undefined Variable");
  return node_->value;
}
Tensor& Variable::value() {
  GNN_CHECK_ARG(node_, "use of an undefined Variable");
  return node_->value;
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
  GNN_CHECK_ARG(g.shape() == v.shape() && g.dtype() == v.dtype(), "gradient of shape ", shapeString(g.shape()),
                " (", dtypeName(g.dtype()), ") for a variable of shape ", shapeString(v.shape()), " (",
                dtypeName(v.dtype()), ")");
  // The first gradient is shared, not copied (ops hand over fresh tensors, or pass theirs through);
  // accumulation writes in place only into storage nobody else holds.
  if (!node_->grad.defined()) {
    node_->grad = g;
    return;
  }
  dispatchFloat(v.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor sum = node_->grad.uniquelyOwned() ? node_->grad : Tensor::empty(v.shape(), v.dtype());
    auto s = sum.flat<T>();
    auto a = node_->grad.flat<T>();
    auto b = g.flat<T>();
    parallelElements(sum.numel(), [&](int64_t lo, int64_t hi) {
      s.segment(lo, hi - lo) = a.segment(lo, hi - lo) + b.segment(lo, hi - lo);
    });
    node_->grad = std::move(sum);
  });
}

void Variable::zeroGrad() {
  if (node_) node_->grad = Tensor();
}

void Variable::backward() {
  GNN_CHECK_ARG(value().numel() == 1, "backward() without a seed needs a scalar, got shape ",
                shapeString(value().shape()));
  backward(Tensor::full(value().shape(), 1.0, value().dtype()));
}

void Variable::backward(const Tensor& seed) {
  GNN_CHECK_ARG(requiresGrad(), "backward() on a variable that does not require a gradient");
  // Iterative post-order DFS: `order` ends up with every node after all the nodes that consume it.
  // `order` holds owning pointers: releasing a node's inputs below must not free nodes still to be visited.
  std::vector<std::shared_ptr<Node>> order;
  std::unordered_set<Node*> seen;
  std::vector<std::pair<std::shared_ptr<Node>, size_t>> stack{{node_, 0}};
  seen.insert(node_.get());
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
  addGrad(seed);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = it->get();
    if (n->grad.defined() && n->backward) n->backward(n->grad, n->inputs);
    // Release the tape as we go: intermediate gradients and captured activations are no longer needed.
    if (n != node_.get() && n->backward) n->grad = Tensor();
    n->backward = nullptr;
    n->inputs.clear();
  }
}

}  // namespace gnn
