#include "gnn/nn/conv/EdgeConv.h"

#include "gnn/nn/PyGArgs.h"

namespace gnn {

EdgeConv::EdgeConv(std::unique_ptr<MLP> nn, const std::string& aggr)
    : MessagePassing(aggr, /*needsTargetFeatures=*/true), nn_(std::move(nn)), aggr_(aggr) {
  GNN_CHECK_ARG(nn_ != nullptr, "EdgeConv: no nn given");
  GNN_CHECK_ARG(nn_->inChannels() % 2 == 0, "EdgeConv: nn takes [x_i, x_j - x_i], 2 * in channels; its ",
                nn_->inChannels(), " inputs are odd");
  registerModule("nn", *nn_);
}

std::unique_ptr<EdgeConv> EdgeConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "EdgeConv", {{"nn", nullptr}, {"aggr", "max"}});
  if (!a.has("nn")) throw a.invalidValue("nn", nullptr, "required: {\"class\": \"MLP\", \"args\": {...}}");
  if (!a.at("aggr").is_string())
    throw a.invalidValue("aggr", a.at("aggr"), "only one aggregation by name (sum, add, mean, max, ...)");
  return std::make_unique<EdgeConv>(mlpFromPyGSpec(a.at("nn"), "EdgeConv", gen, dtype), a.get<std::string>("aggr"));
}

std::unique_ptr<Module> EdgeConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<EdgeConv>(std::make_unique<MLP>(nn_->options(), unused), aggr_));
}

Variable EdgeConv::forward(const Variable& x, const Tensor& edgeIndex, const NormBatch& edgeBatch) {
  const int64_t in = nn_->inChannels() / 2;
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in, "EdgeConv(nn: ", nn_->inChannels(), " -> ",
                nn_->outChannels(), "): input has shape ", shapeString(x.shape()), ", expected [N, ", in, "]");
  // PyG's flow (source_to_target): x_j the source of each edge, x_i its target, where the message is reduced.
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  // nn's first Linear on [x_i, x_j - x_i] is W1 x_i + W2 (x_j - x_i) + b = (W1 - W2) x_i + b + W2 x_j, with W1,
  // W2 the halves of its weight: two products over the N nodes, gathered per edge, instead of one over the E
  // edges with twice the columns (and no [E, 2 in] input). The same up to rounding.
  Linear& first = nn_->lin(0);
  const Variable w1 = sliceCols(first.weight(), 0, in), w2 = sliceCols(first.weight(), in, 2 * in);
  const Variable atTarget = linear(x, sub(w1, w2), first.bias() ? *first.bias() : Variable());
  const Variable atSource = linear(x, w2);
  const Variable h0 = add(gatherRows(atTarget, dst), gatherRows(atSource, src));
  const Variable messages = nn_->forwardAfterFirstLinear(h0, edgeBatch);
  return aggregate(messages, dst, x.dim(0));
}

}  // namespace gnn
