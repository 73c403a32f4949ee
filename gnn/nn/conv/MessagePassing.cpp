#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

MessagePassing::MessagePassing(const std::string& aggr, bool needsTargetFeatures)
    : MessagePassing(aggregationFromName(aggr), needsTargetFeatures) {}

MessagePassing::MessagePassing(std::unique_ptr<Aggregation> aggr, bool needsTargetFeatures)
    : aggr_(std::move(aggr)), needsXi_(needsTargetFeatures) {
  GNN_CHECK_ARG(aggr_ != nullptr, "MessagePassing: no aggregation given");
  registerModule("aggr_module", *aggr_);
}

bool MessagePassing::sumAggregation() const { return std::string(aggr_->name()) == "sum"; }

Tensor edgeRow(const Tensor& edgeIndex, int row) {
  GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64,
                "edge_index must be int64 [2, E], got ", dtypeName(edgeIndex.dtype()), " ",
                shapeString(edgeIndex.shape()));
  return edgeIndex.slice(row, row + 1).reshape({edgeIndex.dim(1)});
}

Variable MessagePassing::propagate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                                   int64_t numNodes) {
  if (numNodes < 0) numNodes = x.dim(0);
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  if (edgeAttr.defined())
    GNN_CHECK_ARG(edgeAttr.dim(0) == edgeIndex.dim(1), "propagate: edge_attr has ", edgeAttr.dim(0),
                  " rows for ", edgeIndex.dim(1), " edges");
  Variable aggregated = messageAndAggregate(edgeIndex, x, edgeAttr, numNodes);
  if (!aggregated.defined()) {
    Variable xj = gatherRows(x, src);
    Variable xi = needsXi_ ? gatherRows(x, dst) : Variable();
    aggregated = aggregate(message(xj, xi, edgeAttr), dst, numNodes);
  }
  return update(aggregated, x);
}

Variable MessagePassing::messageAndAggregate(const Tensor&, const Variable&, const Variable&, int64_t) { return {}; }

Variable MessagePassing::message(const Variable& xj, const Variable&, const Variable&) { return xj; }

Variable MessagePassing::aggregate(const Variable& messages, const Tensor& dst, int64_t numNodes) {
  return aggr_->forward(messages, dst, numNodes);
}

Variable MessagePassing::update(const Variable& aggregated, const Variable&) { return aggregated; }

}  // namespace gnn
