#include "gnn/nn/conv/GraphConv.h"

#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

GraphConv::GraphConv(int64_t inChannels, int64_t outChannels, Generator& gen, const nlohmann::json& aggr, bool bias,
                     DType dtype)
    : GraphConv(std::pair{inChannels, inChannels}, outChannels, gen, aggr, bias, dtype) {}

GraphConv::GraphConv(std::pair<int64_t, int64_t> inChannels, int64_t outChannels, Generator& gen,
                     const nlohmann::json& aggr, bool bias, DType dtype)
    : MessagePassing(aggregationFromPyG(aggr, gen, dtype)), in_(inChannels.first), out_(outChannels),
      inDst_(inChannels.second), bias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && inDst_ > 0 && out_ > 0, "GraphConv: channel counts must be positive, got (", in_, ", ",
                inDst_, ") -> ", out_);
  // PyG's Linear layers with their default initialisation, in PyG's order.
  linRel_ = std::make_unique<Linear>(in_, out_, gen, bias_, dtype_);
  registerModule("lin_rel", *linRel_);
  linRoot_ = std::make_unique<Linear>(inDst_, out_, gen, false, dtype_);
  registerModule("lin_root", *linRoot_);
}

std::unique_ptr<GraphConv> GraphConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "GraphConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"aggr", "add"},
                                      {"bias", true}});
  return std::make_unique<GraphConv>(pairChannels(a, "in_channels"), intChannels(a, "out_channels"), gen,
                                     aggregationArg(a), a.get<bool>("bias"), dtype);
}

std::unique_ptr<Module> GraphConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GraphConv>(std::pair{in_, inDst_}, out_, unused, aggregation().spec(), bias_,
                                               dtype_));
}

Variable GraphConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&,
                                                int64_t numNodes) {
  return linearAggregate(aggregation(), *cache_, edgeIndex, x, numNodes);
}

Variable GraphConv::forward(const Variable& x, const Tensor& edgeIndex) {
  checkNodeFeatures("GraphConv", x, in_);
  GNN_CHECK_ARG(inDst_ == in_, "GraphConv((", in_, ", ", inDst_, ") -> ", out_,
                "): sources and targets of different widths: call forward(x_src, x_dst, edge_index)");
  const int64_t n = x.dim(0);
  Variable rel;
  if (isLinearAggregation(aggregation()) && out_ < in_) {
    // A (x W^T) + b: the same map, the sum over out_ columns instead of in_.
    rel = propagate(edgeIndex, matmulNT(x, linRel_->weight()), Variable(), n);
    if (linRel_->bias()) rel = add(rel, *linRel_->bias());
  } else {
    rel = linRel_->forward(propagate(edgeIndex, x, Variable(), n));
  }
  return add(rel, linRoot_->forward(x));
}

Variable GraphConv::forward(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex) {
  checkNodeFeatures("GraphConv", xSrc, in_);
  checkNodeFeatures("GraphConv", xDst, inDst_);
  const int64_t S = xSrc.dim(0), T = xDst.dim(0);
  Variable rel;
  if (isLinearAggregation(aggregation())) {
    const SparseMatrix a = bipartiteCountAdjacency("GraphConv", edgeIndex, S, T,
                                                   std::string(aggregation().name()) == "mean", dtype_);
    // As the homogeneous form: the product over the narrower side (A x W^T = A (x W^T)).
    if (out_ < in_) {
      rel = spmm(a, matmulNT(xSrc, linRel_->weight()));
      if (linRel_->bias()) rel = add(rel, *linRel_->bias());
    } else {
      rel = linRel_->forward(spmm(a, xSrc));
    }
  } else {
    checkBipartiteEdges("GraphConv", edgeIndex, S, T);
    rel = linRel_->forward(propagate(edgeIndex, xSrc, Variable(), T));
  }
  return add(rel, linRoot_->forward(xDst));
}

}  // namespace gnn
