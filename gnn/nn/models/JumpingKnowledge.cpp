#include "gnn/nn/models/JumpingKnowledge.h"

#include <algorithm>

#include "gnn/ops/Ops.h"

namespace gnn {

namespace {

// Element-wise maximum over the layers' outputs [N, F] each: the outputs side by side [N, L F] read as [N L, F],
// reduced over each node's L consecutive rows.
Variable maxOverLayers(const std::vector<Variable>& xs) {
  const int64_t n = xs[0].dim(0), f = xs[0].dim(1), layers = static_cast<int64_t>(xs.size());
  Variable stacked = reshape(concatCols(xs), {n * layers, f});
  return segmentMax(stacked, countsToPtr(std::vector<int64_t>(static_cast<size_t>(n), layers)));
}

}  // namespace

JumpingKnowledge::JumpingKnowledge(std::string mode, int64_t channels, int64_t numLayers, Generator& gen,
                                   DType dtype)
    : mode_(std::move(mode)), channels_(channels), numLayers_(numLayers) {
  std::transform(mode_.begin(), mode_.end(), mode_.begin(), [](unsigned char c) { return std::tolower(c); });
  GNN_CHECK_ARG(mode_ == "last" || mode_ == "cat" || mode_ == "max" || mode_ == "lstm", "JumpingKnowledge: mode '",
                mode_, "' is not one of 'last', 'cat', 'max', 'lstm'");
  if (mode_ != "lstm") return;
  GNN_CHECK_ARG(channels > 0 && numLayers > 0, "JumpingKnowledge('lstm'): channels and num_layers must be positive, "
                "got ", channels, " and ", numLayers);
  // PyG's sizes: a hidden size of (L C) / 2 per direction, so the attention reads about L C features per layer.
  const int64_t hidden = numLayers * channels / 2;
  GNN_CHECK_ARG(hidden > 0, "JumpingKnowledge('lstm'): num_layers * channels // 2 is 0 (channels ", channels,
                ", num_layers ", numLayers, "): torch's LSTM needs a positive hidden size");
  LSTMOptions o;
  o.bidirectional = true;
  o.batchFirst = true;
  lstm_ = std::make_unique<LSTM>(channels, hidden, gen, o, dtype);
  att_ = std::make_unique<Linear>(2 * hidden, 1, gen, true, dtype);
  registerModule("lstm", *lstm_);
  registerModule("att", *att_);
}

void JumpingKnowledge::resetParameters(Generator& gen) {
  if (lstm_) lstm_->resetParameters(gen);
  if (att_) att_->resetParameters(gen);
}

std::unique_ptr<Module> JumpingKnowledge::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  const DType dt = lstm_ ? lstm_->parameters()[0].dtype() : DType::F32;
  return cloneInto(std::make_unique<JumpingKnowledge>(mode_, channels_, numLayers_, unused, dt));
}

Variable JumpingKnowledge::forward(const std::vector<Variable>& xs) const {
  GNN_CHECK_ARG(!xs.empty(), "JumpingKnowledge: no layer outputs");
  for (const Variable& x : xs)
    GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(0) == xs[0].dim(0) && x.dim(1) == xs[0].dim(1),
                  "JumpingKnowledge: the layers' outputs must share one shape [N, C], got ", shapeString(x.shape()),
                  " and ", shapeString(xs[0].shape()));
  if (mode_ == "last") return xs.back();
  if (mode_ == "cat") return concatCols(xs);
  if (mode_ == "max") return maxOverLayers(xs);
  return lstmAttention(xs);
}

Variable JumpingKnowledge::lstmAttention(const std::vector<Variable>& xs) const {
  const int64_t n = xs[0].dim(0), c = xs[0].dim(1), layers = static_cast<int64_t>(xs.size());
  GNN_CHECK_ARG(c == channels_, "JumpingKnowledge('lstm'): the layers have ", c, " channels, built for ", channels_);
  // torch.stack(xs, dim=1) [N, L, C]: the outputs side by side, row n of [N, L C] is node n's L outputs in order.
  const Variable stacked = concatCols(xs);
  const Variable states = lstm_->forward(reshape(stacked, {n, layers, c}));  // [N, L, 2 H]
  const int64_t width = states.dim(2);
  // One score per (node, layer), a softmax over each node's layers, then the weighted sum of its outputs.
  const Variable scores = reshape(att_->forward(reshape(states, {n * layers, width})), {n, layers});
  const Variable alpha = reshape(softmax(scores, -1), {n * layers, 1});
  const Variable weighted = mul(reshape(stacked, {n * layers, c}), alpha);
  return sumAxis(reshape(weighted, {n, layers, c}), 1);
}

}  // namespace gnn
