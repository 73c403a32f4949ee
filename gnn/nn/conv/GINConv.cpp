#include "gnn/nn/conv/GINConv.h"

#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvArgs.h"
#include "gnn/nn/conv/GCNConv.h"

namespace gnn {

GINConv::GINConv(std::unique_ptr<MLP> nn, double eps, bool trainEps)
    : MessagePassing("sum"), nn_(std::move(nn)), initialEps_(eps), trainEps_(trainEps) {
  GNN_CHECK_ARG(nn_ != nullptr, "GINConv: no nn given");
  registerModule("nn", *nn_);
  // PyG registers eps as a Parameter with train_eps and as a buffer without: its state_dict has "eps" [1] in both
  // cases, and so do ours (a buffer is a parameter that takes no gradient).
  const Tensor value = Tensor::full({1}, eps, nn_->options().dtype);
  eps_ = trainEps_ ? &registerParameter("eps", value) : &registerBuffer("eps", value);
}

std::unique_ptr<GINConv> GINConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "GINConv", {{"nn", nullptr}, {"eps", 0.0}, {"train_eps", false}});
  if (!a.has("nn")) throw a.invalidValue("nn", nullptr, "required: {\"class\": \"MLP\", \"args\": {...}}");
  return std::make_unique<GINConv>(mlpFromPyGSpec(a.at("nn"), "GINConv", gen, dtype), a.get<double>("eps"),
                                   a.get<bool>("train_eps"));
}

std::unique_ptr<Module> GINConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GINConv>(std::make_unique<MLP>(nn_->options(), unused), initialEps_, trainEps_));
}

Variable GINConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&, int64_t numNodes) {
  // sum_{j -> i} x_j as A x, A[i][j] = the number of edges j -> i (the graph's self-loops included, unlike GCN's),
  // cached per graph as GCNConv's (edge_index's buffer and version), with the transpose its backward builds.
  bool built = false;
  const SparseMatrix a = cache_->get(edgeIndex, numNodes, [&] {
    return GCNConv::normalizedAdjacency(edgeIndex, numNodes, /*addSelfLoops=*/false, /*normalize=*/false,
                                        x.dtype());
  }, &built);
  return spmm(a, x);
}

void GINConv::shareAdjacencyWith(GINConv& other) {
  other.cache_->setCapacity(2);
  cache_ = other.cache_;
}

Variable GINConv::selfTerm(const Variable& v) const {
  // (1 + eps) v: a constant factor when eps is a buffer; through the scalar op when it trains.
  return eps_->requiresGrad() ? scaleByScalar(v, add(*eps_, Variable(Tensor::full({1}, 1.0, v.dtype()))))
                              : scale(v, 1.0 + eps_->value().at(0));
}

Variable GINConv::forward(const Variable& x, const Tensor& edgeIndex, const NormBatch& b) {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == nn_->inChannels(), "GINConv(nn: ", nn_->inChannels(), " -> ",
                nn_->outChannels(), "): input has shape ", shapeString(x.shape()), ", expected [N, ",
                nn_->inChannels(), "]");
  Variable out = propagate(edgeIndex, x, Variable(), x.dim(0));
  return nn_->forward(add(out, selfTerm(x)), b);
}

Variable GINConv::forward(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex, const NormBatch& b) {
  const int64_t in = nn_->inChannels();
  for (const Variable* v : {&xSrc, &xDst})
    GNN_CHECK_ARG(v->value().rank() == 2 && v->dim(1) == in && v->dtype() == nn_->options().dtype, "GINConv(nn: ",
                  in, " -> ", nn_->outChannels(), "): input ", dtypeName(v->dtype()), " ", shapeString(v->shape()),
                  ", expected [N, ", in, "] ", dtypeName(nn_->options().dtype), " (sources and targets alike)");
  const SparseMatrix a = bipartiteCountAdjacency("GINConv", edgeIndex, xSrc.dim(0), xDst.dim(0), /*mean=*/false,
                                                 xSrc.dtype());
  return nn_->forward(add(spmm(a, xSrc), selfTerm(xDst)), b);
}

Variable GINConv::forward(const SparseMatrix& x, const Tensor& edgeIndex, const NormBatch& b) {
  GNN_CHECK_ARG(x.cols() == nn_->inChannels(), "GINConv(nn: ", nn_->inChannels(), " -> ", nn_->outChannels(),
                "): sparse input has ", x.cols(), " columns");
  GNN_CHECK_ARG(x.dtype() == nn_->options().dtype, "GINConv: sparse input is ", dtypeName(x.dtype()),
                ", the layer ", dtypeName(nn_->options().dtype));
  // The MLP's first Linear is linear: ((1 + eps) x + A x) W^T + b = (1 + eps) x W^T + A (x W^T) + b up to
  // rounding. x W^T runs as a sparse product (the weight's transpose, [in, hidden], a small copy), the sum
  // over hidden rather than input columns; the rest of the MLP as for dense input.
  Linear& first = nn_->lin(0);
  const Variable xw = spmm(x, transpose(first.weight(), 0, 1));
  Variable h = add(propagate(edgeIndex, xw, Variable(), x.rows()), selfTerm(xw));
  if (first.bias()) h = add(h, *first.bias());
  return nn_->forwardAfterFirstLinear(h, b);
}

}  // namespace gnn
