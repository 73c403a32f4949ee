#include "gnn/nn/conv/ResGatedGraphConv.h"

#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

ResGatedGraphConv::ResGatedGraphConv(int64_t inChannels, int64_t outChannels, Generator& gen,
                                     const nlohmann::json& act, bool rootWeight, bool bias, DType dtype)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), actName_(act), act_(activationFromPyG(act)),
      rootWeight_(rootWeight), bias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0, "ResGatedGraphConv: channel counts must be positive, got ", in_, " -> ", out_);
  linKey_ = std::make_unique<Linear>(in_, out_, gen, true, dtype_);
  registerModule("lin_key", *linKey_);
  linQuery_ = std::make_unique<Linear>(in_, out_, gen, true, dtype_);
  registerModule("lin_query", *linQuery_);
  linValue_ = std::make_unique<Linear>(in_, out_, gen, true, dtype_);
  registerModule("lin_value", *linValue_);
  if (rootWeight_) {
    linSkip_ = std::make_unique<Linear>(in_, out_, gen, false, dtype_);
    registerModule("lin_skip", *linSkip_);
  }
  if (bias_) biasParam_ = &registerParameter("bias", Tensor::zeros({out_}, dtype_));
}

std::unique_ptr<ResGatedGraphConv> ResGatedGraphConv::fromPyG(const nlohmann::json& args, Generator& gen,
                                                              DType dtype) {
  const PyGArgs a(args, "ResGatedGraphConv", {{"in_channels", nullptr}, {"out_channels", nullptr},
                                              {"act", "sigmoid"}, {"root_weight", true}, {"bias", true}});
  if (!a.at("act").is_string())
    throw a.invalidValue("act", a.at("act"), "an activation by name (sigmoid, relu, tanh, ...)");
  return std::make_unique<ResGatedGraphConv>(intChannels(a, "in_channels"), intChannels(a, "out_channels"), gen,
                                             a.at("act"), a.get<bool>("root_weight"), a.get<bool>("bias"), dtype);
}

std::unique_ptr<Module> ResGatedGraphConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(
      std::make_unique<ResGatedGraphConv>(in_, out_, unused, actName_, rootWeight_, bias_, dtype_));
}

Variable ResGatedGraphConv::forward(const Variable& x, const Tensor& edgeIndex) {
  checkNodeFeatures("ResGatedGraphConv", x, in_);
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  const Variable k = linKey_->forward(x), q = linQuery_->forward(x), v = linValue_->forward(x);
  Variable out;
  if (actName_ == "sigmoid") {
    out = gatedMessageSum(k, q, v, edgeIndex);  // PyG's default gate, fused: no [E, out] tensors
  } else {
    const Variable gate = act_(add(gatherRows(k, dst), gatherRows(q, src)));
    out = scatterSum(mul(gate, gatherRows(v, src)), dst, x.dim(0));
  }
  if (linSkip_) out = add(out, linSkip_->forward(x));
  return biasParam_ ? add(out, *biasParam_) : out;
}

}  // namespace gnn
