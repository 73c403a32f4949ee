#include "gnn/nn/conv/GATConv.h"

#include <algorithm>
#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvArgs.h"
#include "gnn/ops/Ops.h"

namespace gnn {

GATConv::GATConv(int64_t inChannels, int64_t outChannels, Generator& gen, GATConvOptions options)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), opt_(std::move(options)),
      linSrc_(inChannels, opt_.heads * outChannels, gen, false, opt_.dtype) {
  GNN_CHECK_ARG(inChannels > 0 && outChannels > 0 && opt_.heads > 0 && opt_.edgeDim >= 0 && opt_.inDstChannels >= 0,
                "GATConv: channels, heads and edge_dim must be positive (in ", inChannels, ", out ", outChannels,
                ", heads ", opt_.heads, ", edge_dim ", opt_.edgeDim, ")");
  GNN_CHECK_ARG(opt_.dropout >= 0 && opt_.dropout < 1, "GATConv: dropout must be in [0, 1), got ", opt_.dropout);
  const int64_t H = opt_.heads, C = out_;
  // PyG's order: the layer's own parameters, then its children's (named_parameters, state_dict).
  attSrc_ = &registerParameter("att_src", Tensor({1, H, C}, opt_.dtype));
  attDst_ = &registerParameter("att_dst", Tensor({1, H, C}, opt_.dtype));
  if (opt_.edgeDim > 0) attEdge_ = &registerParameter("att_edge", Tensor({1, H, C}, opt_.dtype));
  if (opt_.bias) bias_ = &registerParameter("bias", Tensor({opt_.concat ? H * C : C}, opt_.dtype));
  registerModule("lin_src", linSrc_);
  if (opt_.inDstChannels > 0) {  // PyG's (source, target) in_channels: a Linear per side
    linDst_ = std::make_unique<Linear>(opt_.inDstChannels, H * C, gen, false, opt_.dtype);
    registerModule("lin_dst", *linDst_);
  } else {
    registerAlias("lin_dst.weight", "lin_src.weight");  // PyG's lin_dst = lin_src: one tensor, two keys
  }
  if (opt_.edgeDim > 0) {
    linEdge_ = std::make_unique<Linear>(opt_.edgeDim, H * C, gen, false, opt_.dtype);
    registerModule("lin_edge", *linEdge_);
  }
  resetParameters(gen);
}

std::unique_ptr<GATConv> GATConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "GATConv",
                  {{"in_channels", nullptr}, {"out_channels", nullptr}, {"heads", 1}, {"concat", true},
                   {"negative_slope", 0.2}, {"dropout", 0.0}, {"add_self_loops", true}, {"edge_dim", nullptr},
                   {"fill_value", "mean"}, {"bias", true}});
  const bool pair = a.at("in_channels").is_array();
  if (!pair && (!a.at("in_channels").is_number_integer() || a.get<int64_t>("in_channels") <= 0))
    throw a.invalidValue("in_channels", a.at("in_channels"),
                         "a positive int or [source, target] (lazy sizes not offered)");
  // An int keeps PyG's one shared lin_src = lin_dst, even where a pair would give equal widths.
  const auto [in, inDst] = pair ? pairChannels(a, "in_channels")
                                : std::pair{a.get<int64_t>("in_channels"), int64_t{0}};
  GATConvOptions o;
  o.inDstChannels = inDst;
  o.heads = a.get<int64_t>("heads");
  o.concat = a.get<bool>("concat");
  o.negativeSlope = a.get<double>("negative_slope");
  o.dropout = a.get<double>("dropout");
  o.addSelfLoops = a.get<bool>("add_self_loops");
  o.edgeDim = a.has("edge_dim") ? a.get<int64_t>("edge_dim") : 0;
  o.fillValue = SelfLoopFill::fromPyG(a.at("fill_value"), "GATConv");
  o.bias = a.get<bool>("bias");
  o.dtype = dtype;
  return std::make_unique<GATConv>(in, a.get<int64_t>("out_channels"), gen, o);
}

void GATConv::resetParameters(Generator& gen) {
  const int64_t H = opt_.heads, C = out_;
  linSrc_.resetGlorot(gen);
  if (linDst_) linDst_->resetGlorot(gen);
  if (linEdge_) linEdge_->resetGlorot(gen);
  // PyG's glorot on [1, heads, out]: fan-in + fan-out = heads + out (its last two dimensions).
  for (Variable* att : {attSrc_, attDst_, attEdge_})
    if (att) att->value() = init::glorotUniform({1, H, C}, H, C, gen, opt_.dtype);
  if (bias_) bias_->value() = Tensor(bias_->shape(), opt_.dtype);
}

std::unique_ptr<Module> GATConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GATConv>(in_, out_, unused, opt_));
}

Variable GATConv::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttrIn) {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_, "GATConv(", in_, " -> ", out_, "): input has shape ",
                shapeString(x.shape()), ", expected [N, ", in_, "]");
  // lin_src and lin_dst are one Linear (PyG with an int in_channels): one projection serves both sides.
  return attend(linSrc_.forward(x), edgeIndex, edgeAttrIn);
}

Variable GATConv::forward(const SparseMatrix& x, const Tensor& edgeIndex, const Variable& edgeAttrIn) {
  GNN_CHECK_ARG(x.cols() == in_, "GATConv(", in_, " -> ", out_, "): sparse input has ", x.cols(), " columns");
  GNN_CHECK_ARG(x.dtype() == opt_.dtype, "GATConv: sparse input is ", dtypeName(x.dtype()), ", the layer ",
                dtypeName(opt_.dtype));
  // The projection is the only op that reads x: a sparse product, then the attention as for dense input.
  return attend(linSrc_.forward(x), edgeIndex, edgeAttrIn);
}

Variable GATConv::forward(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex,
                         const Variable& edgeAttrIn) {
  const int64_t inDst = linDst_ ? opt_.inDstChannels : in_;
  for (const auto& [v, width] : {std::pair{&xSrc, in_}, std::pair{&xDst, inDst}})
    GNN_CHECK_ARG(v->value().rank() == 2 && v->dim(1) == width, "GATConv((", in_, ", ", inDst, ") -> ", out_,
                  "): input has shape ", shapeString(v->shape()), ", expected [N, ", width, "]");
  GNN_CHECK_ARG(!opt_.addSelfLoops, "GATConv: add_self_loops=True on a bipartite (x_src, x_dst) call; PyG refuses "
                "it for a relation between two types (check_add_self_loops: 'incorrect message passing results'): "
                "pass add_self_loops=False");
  const int64_t S = xSrc.dim(0), T = xDst.dim(0), N = std::max(S, T);
  checkBipartiteEdges("GATConv", edgeIndex, S, T);
  Variable hSrc = linSrc_.forward(xSrc);
  Variable aSrc = headDot(hSrc, *attSrc_), aDst = headDot((linDst_ ? *linDst_ : linSrc_).forward(xDst), *attDst_);
  // The fused attention reads sources and targets as rows of one node set: the shorter side gets zero rows that
  // no edge reads (each output row is computed alone, so the real rows keep their bits); the targets' rows come
  // first in the output.
  const auto pad = [N](const Variable& v) {
    return v.dim(0) == N ? v : concatRows({v, Variable(Tensor({N - v.dim(0), v.dim(1)}, v.dtype()))});
  };
  const Variable out = gatAttention(pad(hSrc), pad(aSrc), pad(aDst), edgeIndex, edgeTerms(edgeAttrIn, edgeIndex, N,
                                    nullptr), Variable(), attentionOptions(), bias_ ? *bias_ : Variable());
  return T == N ? out : sliceRows(out, 0, T);
}

Variable GATConv::edgeTerms(const Variable& edgeAttrIn, const Tensor& edgeIndex, int64_t numNodes, Variable* loop) {
  if (!edgeAttrIn.defined() || !linEdge_) return Variable();
  Variable edgeAttr = edgeAttrIn.value().rank() == 1 ? reshape(edgeAttrIn, {edgeAttrIn.dim(0), 1}) : edgeAttrIn;
  GNN_CHECK_ARG(edgeAttr.value().rank() == 2 && edgeAttr.dim(1) == opt_.edgeDim, "GATConv: edge_attr has shape ",
                shapeString(edgeAttrIn.shape()), ", expected [E, ", opt_.edgeDim, "]");
  // a_edge . (W_e e) = (W_e^T a_edge) . e: the edges' logit terms through an [edge_dim, heads] matrix, without
  // the [E, heads * out] projection of the edge features.
  Variable m = headDot(transpose(linEdge_->weight(), 0, 1), *attEdge_);
  if (loop && opt_.addSelfLoops) *loop = matmul(opt_.fillValue.loopAttr(edgeAttr, edgeIndex, numNodes), m);
  return matmul(edgeAttr, m);
}

GraphAttentionOptions GATConv::attentionOptions() const {
  GraphAttentionOptions o;
  o.negativeSlope = opt_.negativeSlope;
  o.selfLoops = opt_.addSelfLoops;
  o.dropout = opt_.dropout;
  o.training = isTraining();
  o.meanHeads = !opt_.concat && opt_.heads > 1;  // PyG's mean over the heads, inside the attention
  return o;
}

Variable GATConv::attend(const Variable& h, const Tensor& edgeIndex, const Variable& edgeAttrIn) {
  Variable aLoop;
  const Variable aEdge = edgeTerms(edgeAttrIn, edgeIndex, h.dim(0), &aLoop);
  // The bias is added inside the attention (after the mean over the heads when concat is false).
  return gatAttention(h, headDot(h, *attSrc_), headDot(h, *attDst_), edgeIndex, aEdge, aLoop, attentionOptions(),
                      bias_ ? *bias_ : Variable());
}

}  // namespace gnn
