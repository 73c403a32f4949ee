#include "gnn/nn/conv/GATv2Conv.h"

#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/nn/PyGArgs.h"
#include "gnn/ops/GraphAttention.h"

namespace gnn {

GATv2Conv::GATv2Conv(int64_t inChannels, int64_t outChannels, Generator& gen, GATv2ConvOptions options)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), opt_(std::move(options)),
      linL_(inChannels, opt_.heads * outChannels, gen, opt_.bias, opt_.dtype) {
  GNN_CHECK_ARG(inChannels > 0 && outChannels > 0 && opt_.heads > 0 && opt_.edgeDim >= 0,
                "GATv2Conv: channels, heads and edge_dim must be positive (in ", inChannels, ", out ", outChannels,
                ", heads ", opt_.heads, ", edge_dim ", opt_.edgeDim, ")");
  GNN_CHECK_ARG(opt_.dropout >= 0 && opt_.dropout < 1, "GATv2Conv: dropout must be in [0, 1), got ", opt_.dropout);
  const int64_t H = opt_.heads, C = out_;
  // PyG's order: the layer's own parameters, then its children's (named_parameters, state_dict).
  att_ = &registerParameter("att", Tensor({1, H, C}, opt_.dtype));
  if (opt_.bias) bias_ = &registerParameter("bias", Tensor({opt_.concat ? H * C : C}, opt_.dtype));
  registerModule("lin_l", linL_);
  if (!opt_.shareWeights) {
    linR_ = std::make_unique<Linear>(inChannels, H * C, gen, opt_.bias, opt_.dtype);
    registerModule("lin_r", *linR_);
  } else {
    // PyG's share_weights: lin_r = lin_l, one Linear under two keys.
    registerAlias("lin_r.weight", "lin_l.weight");
    if (opt_.bias) registerAlias("lin_r.bias", "lin_l.bias");
  }
  if (opt_.edgeDim > 0) {
    linEdge_ = std::make_unique<Linear>(opt_.edgeDim, H * C, gen, false, opt_.dtype);
    registerModule("lin_edge", *linEdge_);
  }
  resetParameters(gen);
}

std::unique_ptr<GATv2Conv> GATv2Conv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "GATv2Conv",
                  {{"in_channels", nullptr}, {"out_channels", nullptr}, {"heads", 1}, {"concat", true},
                   {"negative_slope", 0.2}, {"dropout", 0.0}, {"add_self_loops", true}, {"edge_dim", nullptr},
                   {"fill_value", "mean"}, {"bias", true}, {"share_weights", false}});
  if (!a.at("in_channels").is_number_integer() || a.get<int64_t>("in_channels") <= 0)
    throw a.invalidValue("in_channels", a.at("in_channels"), "a positive int (bipartite and lazy sizes not offered)");
  GATv2ConvOptions o;
  o.heads = a.get<int64_t>("heads");
  o.concat = a.get<bool>("concat");
  o.negativeSlope = a.get<double>("negative_slope");
  o.dropout = a.get<double>("dropout");
  o.addSelfLoops = a.get<bool>("add_self_loops");
  o.edgeDim = a.has("edge_dim") ? a.get<int64_t>("edge_dim") : 0;
  o.fillValue = SelfLoopFill::fromPyG(a.at("fill_value"), "GATv2Conv");
  o.bias = a.get<bool>("bias");
  o.shareWeights = a.get<bool>("share_weights");
  o.dtype = dtype;
  return std::make_unique<GATv2Conv>(a.get<int64_t>("in_channels"), a.get<int64_t>("out_channels"), gen, o);
}

void GATv2Conv::resetParameters(Generator& gen) {
  const int64_t H = opt_.heads, C = out_;
  // PyG's Linear(weight_initializer='glorot'): Glorot weight, bias U(-1/sqrt(in), 1/sqrt(in)).
  for (Linear* lin : {&linL_, linR_.get(), linEdge_.get()}) {
    if (!lin) continue;
    lin->resetGlorot(gen);
    const double bound = 1.0 / std::sqrt(static_cast<double>(lin->inFeatures()));
    if (lin->bias()) lin->bias()->value() = init::uniform({lin->outFeatures()}, -bound, bound, gen, opt_.dtype);
  }
  att_->value() = init::glorotUniform({1, H, C}, H, C, gen, opt_.dtype);  // PyG's glorot: heads + out
  if (bias_) bias_->value() = Tensor(bias_->shape(), opt_.dtype);
}

std::unique_ptr<Module> GATv2Conv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GATv2Conv>(in_, out_, unused, opt_));
}

Variable GATv2Conv::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttrIn) {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_, "GATv2Conv(", in_, " -> ", out_, "): input has shape ",
                shapeString(x.shape()), ", expected [N, ", in_, "]");
  Variable xl = linL_.forward(x);
  Variable xr = linR_ ? linR_->forward(x) : xl;  // share_weights: x_r is x_l itself, as PyG's
  return attend(xl, xr, edgeIndex, edgeAttrIn);
}

Variable GATv2Conv::forward(const SparseMatrix& x, const Tensor& edgeIndex, const Variable& edgeAttrIn) {
  GNN_CHECK_ARG(x.cols() == in_, "GATv2Conv(", in_, " -> ", out_, "): sparse input has ", x.cols(), " columns");
  GNN_CHECK_ARG(x.dtype() == opt_.dtype, "GATv2Conv: sparse input is ", dtypeName(x.dtype()), ", the layer ",
                dtypeName(opt_.dtype));
  // The two projections are the only ops that read x: sparse products, then the attention as for dense input.
  Variable xl = linL_.forward(x);
  Variable xr = linR_ ? linR_->forward(x) : xl;
  return attend(xl, xr, edgeIndex, edgeAttrIn);
}

Variable GATv2Conv::attend(const Variable& xl, const Variable& xr, const Tensor& edgeIndex,
                           const Variable& edgeAttrIn) {
  const int64_t N = xl.dim(0), H = opt_.heads;
  Variable edgeTerm, loopTerm;
  if (edgeAttrIn.defined()) {
    GNN_CHECK_ARG(linEdge_, "GATv2Conv: edge_attr given to a layer built without edge_dim");
    Variable edgeAttr = edgeAttrIn.value().rank() == 1 ? reshape(edgeAttrIn, {edgeAttrIn.dim(0), 1}) : edgeAttrIn;
    GNN_CHECK_ARG(edgeAttr.value().rank() == 2 && edgeAttr.dim(1) == opt_.edgeDim, "GATv2Conv: edge_attr has shape ",
                  shapeString(edgeAttrIn.shape()), ", expected [E, ", opt_.edgeDim, "]");
    edgeTerm = linEdge_->forward(edgeAttr);
    if (opt_.addSelfLoops) loopTerm = linEdge_->forward(opt_.fillValue.loopAttr(edgeAttr, edgeIndex, N));
  }
  GraphAttentionOptions o;
  o.negativeSlope = opt_.negativeSlope;
  o.selfLoops = opt_.addSelfLoops;
  o.dropout = opt_.dropout;
  o.training = isTraining();
  o.meanHeads = !opt_.concat && H > 1;  // PyG's mean over the heads, inside the attention
  Variable out = gatv2Attention(xl, xr, *att_, edgeIndex, edgeTerm, loopTerm, o);
  return bias_ ? add(out, *bias_) : out;
}

}  // namespace gnn
