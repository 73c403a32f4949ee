#include "gnn/nn/conv/SAGEConv.h"

#include <string>
#include <vector>

#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvArgs.h"
#include "gnn/nn/conv/GCNConv.h"

namespace gnn {

SAGEConv::SAGEConv(int64_t inChannels, int64_t outChannels, Generator& gen, SAGEConvOptions options)
    : SAGEConv(std::pair{inChannels, inChannels}, outChannels, gen, std::move(options)) {}

SAGEConv::SAGEConv(std::pair<int64_t, int64_t> inChannels, int64_t outChannels, Generator& gen,
                   SAGEConvOptions options)
    : MessagePassing(options.aggr), in_(inChannels.first), out_(outChannels), inDst_(inChannels.second),
      opt_(std::move(options)) {
  GNN_CHECK_ARG(in_ > 0 && inDst_ > 0 && outChannels > 0, "SAGEConv: channel counts must be positive, got (", in_,
                ", ", inDst_, ") -> ", outChannels);
  // PyG's Linear layers with their default initialisation (torch's: U(-1/sqrt(in), 1/sqrt(in))).
  if (opt_.project) {
    lin_ = std::make_unique<Linear>(in_, in_, gen, true, opt_.dtype);
    registerModule("lin", *lin_);
  }
  linL_ = std::make_unique<Linear>(in_, out_, gen, opt_.bias, opt_.dtype);
  registerModule("lin_l", *linL_);
  if (opt_.rootWeight) {
    linR_ = std::make_unique<Linear>(inDst_, out_, gen, false, opt_.dtype);
    registerModule("lin_r", *linR_);
  }
}

std::unique_ptr<SAGEConv> SAGEConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "SAGEConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"aggr", "mean"},
                                     {"normalize", false}, {"root_weight", true}, {"project", false},
                                     {"bias", true}});
  if (!a.at("aggr").is_string())
    throw a.invalidValue("aggr", a.at("aggr"), "only one aggregation by name (sum, add, mean, max, ...)");
  SAGEConvOptions o;
  o.aggr = a.get<std::string>("aggr");
  o.normalize = a.get<bool>("normalize");
  o.rootWeight = a.get<bool>("root_weight");
  o.project = a.get<bool>("project");
  o.bias = a.get<bool>("bias");
  o.dtype = dtype;
  return std::make_unique<SAGEConv>(pairChannels(a, "in_channels"), a.get<int64_t>("out_channels"), gen, o);
}

std::unique_ptr<Module> SAGEConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<SAGEConv>(std::pair{in_, inDst_}, out_, unused, opt_));
}

void SAGEConv::shareAdjacencyWith(SAGEConv& other) {
  GNN_CHECK_ARG(std::string(aggregation().name()) == other.aggregation().name() && opt_.dtype == other.opt_.dtype,
                "SAGEConv::shareAdjacencyWith: the layers build different matrices (aggregation or dtype differ)");
  other.cache_->setCapacity(2);
  cache_ = other.cache_;
}

bool SAGEConv::linearAggregation() const {
  const std::string name = aggregation().name();
  return name == "sum" || name == "mean";
}

SparseMatrix SAGEConv::adjacency(const Tensor& edgeIndex, int64_t numNodes) const {
  // Row = target, column = source, each entry the number of edges j -> i (duplicates count, self-loops are
  // ordinary edges: no self-loop handling, no normalisation). Mean divides each row by its sum, the in-degree.
  // Cached per graph as GCNConv's (edge_index's buffer and version): full-batch training builds it, and the
  // transpose its backward needs, once.
  bool built = false;
  return cache_->get(edgeIndex, numNodes, [&] {
    return countAdjacency(edgeIndex, numNodes, std::string(aggregation().name()) == "mean", opt_.dtype);
  }, &built);
}

Variable SAGEConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&,
                                       int64_t numNodes) {
  if (!linearAggregation()) return {};  // max, min, ...: propagate gathers the messages and reduces them
  return spmm(adjacency(edgeIndex, numNodes), x);
}

Variable SAGEConv::projectedNeighbourTerm(const Variable& srcW, const Tensor& edgeIndex, int64_t numNodes) {
  // The bias joins after the aggregation, as in PyG.
  Variable out = propagate(edgeIndex, srcW, Variable(), numNodes);
  return linL_->bias() ? add(out, *linL_->bias()) : out;
}

Variable SAGEConv::neighbourTerm(const Variable& src, const Tensor& edgeIndex, int64_t numNodes) {
  // Sum and mean are linear: W (A x) = A (x W^T) up to rounding, and the product runs over fewer columns.
  // (Not max and the others, which do not commute with W.)
  if (linearAggregation() && out_ < in_)
    return projectedNeighbourTerm(linear(src, linL_->weight()), edgeIndex, numNodes);
  const Variable bias = linL_->bias() ? *linL_->bias() : Variable();
  return linear(propagate(edgeIndex, src, Variable(), numNodes), linL_->weight(), bias);
}

Variable SAGEConv::finish(Variable out, const Variable& root) const {
  if (root.defined()) out = add(out, root);
  return opt_.normalize ? normalizeRows(out, 1e-12) : out;
}

Variable SAGEConv::forward(const Variable& x, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_, "SAGEConv(", in_, " -> ", out_, "): input has shape ",
                shapeString(x.shape()), ", expected [N, ", in_, "]");
  GNN_CHECK_ARG(inDst_ == in_, "SAGEConv((", in_, ", ", inDst_, ") -> ", out_,
                "): sources and targets of different widths: call forward(x_src, x_dst, edge_index)");
  GNN_CHECK_ARG(x.dtype() == opt_.dtype, "SAGEConv: input is ", dtypeName(x.dtype()), ", the layer ",
                dtypeName(opt_.dtype));
  // project transforms the messages' sources only; the root term below reads the raw x (as PyG's).
  const Variable src = lin_ ? relu(lin_->forward(x)) : x;
  const Variable root = linR_ ? linear(x, linR_->weight()) : Variable();
  return finish(neighbourTerm(src, edgeIndex, x.dim(0)), root);
}

Variable SAGEConv::forward(const Variable& x, const Tensor& edgeIndex, int64_t numTargets) {
  GNN_CHECK_ARG(x.value().rank() == 2 && numTargets >= 0 && numTargets <= x.dim(0), "SAGEConv: ", numTargets,
                " targets of ", shapeString(x.shape()));
  if (numTargets == x.dim(0)) return forward(x, edgeIndex);
  // max, min, ... and project: the whole forward, then the targets' rows (PyG's trim_to_layer).
  if (!takesBipartite()) return sliceRows(forward(x, edgeIndex), 0, numTargets);
  return forward(x, sliceRows(x, 0, numTargets), edgeIndex);
}

Variable SAGEConv::forward(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex) {
  for (const auto& [v, width] : {std::pair{&xSrc, in_}, std::pair{&xDst, inDst_}})
    GNN_CHECK_ARG(v->value().rank() == 2 && v->dim(1) == width && v->dtype() == opt_.dtype, "SAGEConv((", in_, ", ",
                  inDst_, ") -> ", out_, "): input ", dtypeName(v->dtype()), " ", shapeString(v->shape()),
                  ", expected [N, ", width, "] ", dtypeName(opt_.dtype));
  GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64,
                "SAGEConv: edgeIndex must be int64 [2, E]");
  const int64_t N = xSrc.dim(0), T = xDst.dim(0);
  // project transforms the sources only (PyG: x = (relu(lin(x[0])), x[1])).
  const Variable src = lin_ ? relu(lin_->forward(xSrc)) : xSrc;
  const Variable root = linR_ ? linear(xDst, linR_->weight()) : Variable();
  const Variable bias = linL_->bias() ? *linL_->bias() : Variable();
  if (!linearAggregation()) {
    checkBipartiteEdges("SAGEConv", edgeIndex, N, T);
    return finish(linear(propagate(edgeIndex, src, Variable(), T), linL_->weight(), bias), root);
  }
  // A [targets, sources], as adjacency() (a batch's or a relation's own graph: not cached).
  const SparseMatrix a = bipartiteCountAdjacency("SAGEConv", edgeIndex, N, T,
                                                 std::string(aggregation().name()) == "mean", opt_.dtype);
  Variable out;
  // As neighbourTerm, the product over fewer columns first, unless the sources far outnumber the targets (a
  // layer-wise inference batch, a trimmed layer near the seeds): then the product of every source row costs more.
  if (out_ < in_ && N <= 2 * T) {
    out = spmm(a, linear(src, linL_->weight()));
    if (bias.defined()) out = add(out, bias);
  } else {
    out = linear(spmm(a, src), linL_->weight(), bias);
  }
  return finish(out, root);
}

Variable SAGEConv::forward(const SparseMatrix& x, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.cols() == in_, "SAGEConv(", in_, " -> ", out_, "): sparse input has ", x.cols(), " columns");
  GNN_CHECK_ARG(inDst_ == in_, "SAGEConv: sparse input takes equal source and target widths");
  GNN_CHECK_ARG(x.dtype() == opt_.dtype, "SAGEConv: sparse input is ", dtypeName(x.dtype()), ", the layer ",
                dtypeName(opt_.dtype));
  // max, min, ... reduce the raw rows of x themselves: those run dense.
  if (!lin_ && !linearAggregation()) return forward(Variable(x.toDense()), edgeIndex);
  const int64_t N = x.rows();
  const Variable root = linR_ ? linR_->forward(x) : Variable();
  // project: its Linear reads x (sparse), the rest as for dense input. Else sum and mean, linear, take x W_l^T
  // from the sparse product whatever the widths (A x itself would be sparse times sparse).
  // lin_l's bias follows the aggregation: its weight alone here.
  Variable out = lin_ ? neighbourTerm(relu(lin_->forward(x)), edgeIndex, N)
                      : projectedNeighbourTerm(spmm(x, transpose(linL_->weight(), 0, 1)), edgeIndex, N);
  return finish(out, root);
}

}  // namespace gnn
