// AttentionalAggregation, Set2Set, SortAggregation and LSTMAggregation: the aggregations over a sorted index
// (readouts over a batch vector; LSTMAggregation also as a layer's aggr).
#include <algorithm>
#include <numeric>

#include "gnn/nn/aggr/AttentionalAggregation.h"
#include "gnn/nn/aggr/LSTMAggregation.h"
#include "gnn/nn/aggr/Set2Set.h"
#include "gnn/nn/aggr/SortAggregation.h"
#include "gnn/ops/IndexPlan.h"
#include "gnn/ops/Ops.h"

namespace gnn {

namespace {

// The row pointers of a sorted index (PyG's Set2Set and SortAggregation read the batch vector).
std::vector<int64_t> sortedPtr(const char* op, const Tensor& index, int64_t dimSize) {
  const Tensor idx = ops::indexValues(op, index, dimSize);
  const int64_t* v = idx.data<int64_t>();
  std::vector<int64_t> ptr(static_cast<size_t>(dimSize) + 1, 0);
  for (int64_t e = 0; e < idx.numel(); ++e) {
    GNN_CHECK_ARG(e == 0 || v[e] >= v[e - 1], op, ": the index must be sorted (a batch vector); position ", e,
                  " holds ", v[e], " after ", v[e - 1]);
    ++ptr[static_cast<size_t>(v[e]) + 1];
  }
  std::partial_sum(ptr.begin(), ptr.end(), ptr.begin());
  return ptr;
}
}  // namespace

AttentionalAggregation::AttentionalAggregation(const nlohmann::json& gateNn, const nlohmann::json& nn, Generator& gen,
                                               DType dtype)
    : gateSpec_(gateNn), nnSpec_(nn), dtype_(dtype) {
  GNN_CHECK_ARG(!gateSpec_.is_null(), "AttentionalAggregation: gate_nn is required");
  gateNn_ = mlpFromPyGSpec(gateSpec_, "AttentionalAggregation", gen, dtype_);
  if (!nnSpec_.is_null()) nn_ = mlpFromPyGSpec(nnSpec_, "AttentionalAggregation", gen, dtype_);
  GNN_CHECK_ARG(!nn_ || gateNn_->inChannels() == nn_->inChannels(), "AttentionalAggregation: gate_nn reads ",
                gateNn_->inChannels(), " channels, nn ", nn_->inChannels());
  registerModule("gate_nn", *gateNn_);
  if (nn_) registerModule("nn", *nn_);
}

Variable AttentionalAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == gateNn_->inChannels(), "AttentionalAggregation: messages ",
                shapeString(x.shape()), ", gate_nn reads ", gateNn_->inChannels(), " channels");
  const Variable value = nn_ ? nn_->forward(x) : x;
  const Variable gate = gateNn_->forward(x);
  GNN_CHECK_ARG(gate.dim(1) == 1 || gate.dim(1) == value.dim(1), "AttentionalAggregation: gate_nn gives ",
                gate.dim(1), " channels for ", value.dim(1), " values (1 or as many)");
  const auto [perm, ptr] = ops::groupedRows("AttentionalAggregation", index, dimSize);
  const Variable alpha = segmentSoftmax(gatherRows(gate, perm), ptr);
  return segmentSum(mul(gatherRows(value, perm), alpha), ptr);  // [E, 1] broadcasts over the columns
}

nlohmann::json AttentionalAggregation::spec() const {
  return {{"class", "AttentionalAggregation"}, {"args", {{"gate_nn", gateSpec_}, {"nn", nnSpec_}}}};
}

std::unique_ptr<Module> AttentionalAggregation::clone() const {
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<AttentionalAggregation>(gateSpec_, nnSpec_, unused, dtype_));
}

Set2Set::Set2Set(int64_t inChannels, int64_t processingSteps, Generator& gen, DType dtype)
    : in_(inChannels), steps_(processingSteps), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && steps_ >= 1, "Set2Set: in_channels = ", in_, ", processing_steps = ", steps_);
  lstm_ = std::make_unique<LSTM>(2 * in_, in_, gen, LSTMOptions{}, dtype_);
  registerModule("lstm", *lstm_);
}

Variable Set2Set::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_, "Set2Set(", in_, "): messages ", shapeString(x.shape()));
  (void)sortedPtr("Set2Set", index, dimSize);  // PyG asserts a sorted index
  const auto [perm, ptr] = ops::groupedRows("Set2Set", index, dimSize);
  const Variable xs = gatherRows(x, perm);
  const Tensor owner = ops::indexValues("Set2Set", index, dimSize);  // sorted: xs's row e belongs to owner[e]
  Variable h(Tensor::zeros({dimSize, in_}, x.dtype())), c(Tensor::zeros({dimSize, in_}, x.dtype()));
  Variable qStar(Tensor::zeros({dimSize, 2 * in_}, x.dtype()));
  for (int64_t t = 0; t < steps_; ++t) {
    std::tie(h, c) = lstm_->step(qStar, h, c);
    const Variable e = sumAxis(mul(xs, gatherRows(h, owner)), 1, /*keepDim=*/true);  // [E, 1]
    const Variable a = segmentSoftmax(e, ptr);
    const Variable r = segmentSum(mul(xs, a), ptr);
    qStar = concatCols({h, r});
  }
  return qStar;
}

nlohmann::json Set2Set::spec() const {
  return {{"class", "Set2Set"}, {"args", {{"in_channels", in_}, {"processing_steps", steps_}}}};
}

std::unique_ptr<Module> Set2Set::clone() const {
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<Set2Set>(in_, steps_, unused, dtype_));
}

SortAggregation::SortAggregation(int64_t k) : k_(k) { GNN_CHECK_ARG(k_ >= 1, "SortAggregation: k = ", k_); }

Variable SortAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) >= 1, "SortAggregation: messages ", shapeString(x.shape()));
  const std::vector<int64_t> ptr = sortedPtr("SortAggregation", index, dimSize);
  const int64_t F = x.dim(1);
  // Per destination its rows by the last channel, largest first (ties in row order); k slots, the empty ones
  // reading row 0 and masked to 0.
  std::vector<int64_t> rows(static_cast<size_t>(dimSize * k_), 0);
  Tensor keep = Tensor::zeros({dimSize * k_, 1}, x.dtype());
  dispatchFloat(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* xv = x.value().template data<T>();
    T* kv = keep.template data<T>();
    std::vector<int64_t> order;
    for (int64_t g = 0; g < dimSize; ++g) {
      order.resize(static_cast<size_t>(ptr[g + 1] - ptr[g]));
      std::iota(order.begin(), order.end(), ptr[g]);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return xv[a * F + F - 1] > xv[b * F + F - 1]; });
      for (int64_t s = 0; s < std::min<int64_t>(k_, static_cast<int64_t>(order.size())); ++s) {
        rows[static_cast<size_t>(g * k_ + s)] = order[static_cast<size_t>(s)];
        kv[g * k_ + s] = T(1);
      }
    }
  });
  if (x.dim(0) == 0) return Variable(Tensor::zeros({dimSize, k_ * F}, x.dtype()));
  const Variable picked = mul(gatherRows(x, Tensor::fromVector(rows)), Variable(keep));
  return reshape(picked, {dimSize, k_ * F});
}

LSTMAggregation::LSTMAggregation(int64_t inChannels, int64_t outChannels, Generator& gen, DType dtype)
    : in_(inChannels), out_(outChannels), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0, "LSTMAggregation: in_channels = ", in_, ", out_channels = ", out_);
  LSTMOptions o;
  o.batchFirst = true;
  lstm_ = std::make_unique<LSTM>(in_, out_, gen, o, dtype_);
  registerModule("lstm", *lstm_);
}

Variable LSTMAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_, "LSTMAggregation(", in_, "): messages ",
                shapeString(x.shape()));
  const std::vector<int64_t> ptr = sortedPtr("LSTMAggregation", index, dimSize);
  int64_t longest = 0;
  for (int64_t g = 0; g < dimSize; ++g) longest = std::max(longest, ptr[g + 1] - ptr[g]);
  if (longest == 0) return Variable(Tensor::zeros({dimSize, out_}, x.dtype()));  // PyG: an LSTM over no step
  const Variable dense = toDenseBatch(x, Tensor::fromVector(ptr), Tensor(), longest);  // [G, longest, in]
  const Variable out = lstm_->forward(dense);                                             // [G, longest, out]
  // The last step of every sequence: rows longest - 1 of each block.
  std::vector<int64_t> last(static_cast<size_t>(dimSize));
  for (int64_t g = 0; g < dimSize; ++g) last[static_cast<size_t>(g)] = g * longest + longest - 1;
  return gatherRows(reshape(out, {dimSize * longest, out_}), Tensor::fromVector(last));
}

nlohmann::json LSTMAggregation::spec() const {
  return {{"class", "LSTMAggregation"}, {"args", {{"in_channels", in_}, {"out_channels", out_}}}};
}

std::unique_ptr<Module> LSTMAggregation::clone() const {
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<LSTMAggregation>(in_, out_, unused, dtype_));
}

}  // namespace gnn
