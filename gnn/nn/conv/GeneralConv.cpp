#include "gnn/nn/conv/GeneralConv.h"

#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/nn/aggr/Aggregation.h"
#include "gnn/nn/conv/ConvArgs.h"
#include "gnn/ops/GraphAttention.h"

namespace gnn {

namespace {
const nlohmann::json kDefaults = {{"in_channels", nullptr}, {"out_channels", nullptr}, {"in_edge_channels", nullptr},
                                  {"aggr", "add"},          {"skip_linear", false},   {"directed_msg", true},
                                  {"heads", 1},             {"attention", false},     {"attention_type", "additive"},
                                  {"l2_normalize", false},  {"bias", true}};
}  // namespace

GeneralConv::GeneralConv(const nlohmann::json& args, Generator& gen, DType dtype)
    : MessagePassing(aggregationFromPyG(aggregationArg(PyGArgs(args, "GeneralConv", kDefaults)), gen, dtype)),
      args_(args), dtype_(dtype) {
  const PyGArgs a(args, "GeneralConv", kDefaults);
  in_ = intChannels(a, "in_channels");
  out_ = intChannels(a, "out_channels");
  heads_ = a.get<int64_t>("heads");
  if (heads_ < 1) throw a.invalidValue("heads", a.at("heads"), "must be >= 1");
  edgeChannels_ = a.has("in_edge_channels") ? a.get<int64_t>("in_edge_channels") : 0;
  directed_ = a.get<bool>("directed_msg");
  attention_ = a.get<bool>("attention");
  const std::string type = a.get<std::string>("attention_type");
  if (type != "additive" && type != "dot_product")
    throw a.invalidValue("attention_type", a.at("attention_type"), "additive or dot_product");
  dotProduct_ = type == "dot_product";
  l2_ = a.get<bool>("l2_normalize");
  const bool bias = a.get<bool>("bias");
  // PyG's order: lin_msg (lin_msg_i), lin_self, lin_edge, att_msg.
  linMsg_ = std::make_unique<Linear>(in_, out_ * heads_, gen, bias, dtype);
  registerModule("lin_msg", *linMsg_);
  if (!directed_) {
    linMsgI_ = std::make_unique<Linear>(in_, out_ * heads_, gen, bias, dtype);
    registerModule("lin_msg_i", *linMsgI_);
  }
  if (a.get<bool>("skip_linear") || in_ != out_) {
    linSelf_ = std::make_unique<Linear>(in_, out_, gen, bias, dtype);
    registerModule("lin_self", *linSelf_);
  }
  if (edgeChannels_ > 0) {
    linEdge_ = std::make_unique<Linear>(edgeChannels_, out_ * heads_, gen, bias, dtype);
    registerModule("lin_edge", *linEdge_);
  }
  if (attention_ && !dotProduct_)
    attMsg_ = &registerParameter("att_msg", init::glorotUniform({1, heads_, out_}, heads_, out_, gen, dtype));
}

std::unique_ptr<GeneralConv> GeneralConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  return std::make_unique<GeneralConv>(args, gen, dtype);
}

std::unique_ptr<Module> GeneralConv::clone() const {
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<GeneralConv>(args_, unused, dtype_));
}

Variable GeneralConv::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr) {
  checkNodeFeatures("GeneralConv", x, in_);
  GNN_CHECK_ARG(!edgeAttr.defined() || (edgeChannels_ > 0 && edgeAttr.value().rank() == 2 &&
                                        edgeAttr.dim(0) == edgeIndex.dim(1) && edgeAttr.dim(1) == edgeChannels_),
                "GeneralConv: edge_attr must be [", edgeIndex.dim(1), ", in_edge_channels ", edgeChannels_, "], got ",
                edgeAttr.defined() ? shapeString(edgeAttr.shape()) : std::string());
  const int64_t n = x.dim(0), H = heads_, C = out_;
  const EdgesByTarget g = edgesByTarget("GeneralConv", edgeIndex, n);
  const int64_t E = g.order.numel();
  // The message's linear maps act on rows, so lin(x_j) = lin(x)_j: each node's rows are projected once and the
  // projections gathered per edge, where PyG projects the gathered [E, in] rows (ten times the product at 10 edges
  // a node). Only the edge features' projection is per edge.
  const Variable p = linMsg_->forward(x), q = linMsgI_ ? linMsgI_->forward(x) : Variable();
  const Variable eProj =
      linEdge_ && edgeAttr.defined() ? linEdge_->forward(gatherRows(edgeAttr, g.order)) : Variable();
  auto messageFrom = [&](const Tensor& a, const Tensor& b) {  // lin_msg(x_a) + lin_msg_i(x_b) + lin_edge(e)
    Variable m = gatherRows(p, a);
    if (q.defined()) m = add(m, gatherRows(q, b));
    return eProj.defined() ? add(m, eProj) : m;
  };
  Variable msg = messageFrom(g.src, g.dst);  // [E, H C]
  if (attention_) {
    Variable logits;
    if (dotProduct_) {
      // PyG's scaler: torch.sqrt(torch.tensor(out_channels, dtype=torch.float)), a float32 value.
      const double scaler = static_cast<double>(static_cast<float>(std::sqrt(static_cast<double>(C))));
      const Variable reverse = messageFrom(g.dst, g.src);
      logits = scale(sumAxis(reshape(mul(reverse, msg), {E, H, C}), 2), 1.0 / scaler);
    } else {
      logits = headDot(msg, *attMsg_);  // a . m per head, [E, H]
    }
    const Variable alpha = segmentSoftmax(leakyRelu(logits, 0.2), g.ptr);  // [E, H]
    msg = reshape(mul(reshape(msg, {E * H, C}), reshape(alpha, {E * H, 1})), {E, H * C});
  }
  Variable out = aggregation().forward(msg, g.dst, n);  // [N, H C]
  if (H > 1) out = meanAxis(reshape(out, {n, H, C}), 1);
  out = add(out, linSelf_ ? linSelf_->forward(x) : x);
  return l2_ ? normalizeRows(out) : out;
}

}  // namespace gnn
