#include "gnn/nn/conv/NNConv.h"

#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

NNConv::NNConv(int64_t inChannels, int64_t outChannels, std::unique_ptr<MLP> nn, Generator& gen,
               const nlohmann::json& aggr, bool rootWeight, bool bias)
    : MessagePassing(aggregationFromPyG(aggr, gen, nn ? nn->options().dtype : DType::F32)), in_(inChannels), out_(outChannels), nn_(std::move(nn)), rootWeight_(rootWeight),
      bias_(bias) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0, "NNConv: channel counts must be positive, got ", in_, " -> ", out_);
  GNN_CHECK_ARG(nn_ != nullptr, "NNConv: no nn given");
  GNN_CHECK_ARG(nn_->outChannels() == in_ * out_, "NNConv: nn gives ", nn_->outChannels(), " values per edge, ",
                "expected in_channels x out_channels = ", in_ * out_);
  dtype_ = nn_->options().dtype;
  registerModule("nn", *nn_);
  if (rootWeight_) {
    // PyG's Linear(weight_initializer='uniform'): U(-1/sqrt(in), 1/sqrt(in)), torch's default bound.
    lin_ = std::make_unique<Linear>(in_, out_, gen, false, dtype_);
    registerModule("lin", *lin_);
  }
  if (bias_) biasParam_ = &registerParameter("bias", Tensor::zeros({out_}, dtype_));
}

std::unique_ptr<NNConv> NNConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "NNConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"nn", nullptr},
                                   {"aggr", "add"}, {"root_weight", true}, {"bias", true}});
  if (!a.has("nn")) throw a.invalidValue("nn", nullptr, "required: {\"class\": \"MLP\", \"args\": {...}}");
  return std::make_unique<NNConv>(intChannels(a, "in_channels"), intChannels(a, "out_channels"),
                                  mlpFromPyGSpec(a.at("nn"), "NNConv", gen, dtype), gen, aggregationArg(a),
                                  a.get<bool>("root_weight"), a.get<bool>("bias"));
}

std::unique_ptr<Module> NNConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<NNConv>(in_, out_, std::make_unique<MLP>(nn_->options(), unused), unused,
                                            aggregation().spec(), rootWeight_, bias_));
}

Variable NNConv::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr) {
  checkNodeFeatures("NNConv", x, in_);
  GNN_CHECK_ARG(edgeAttr.defined() && edgeAttr.value().rank() == 2 && edgeAttr.dim(0) == edgeIndex.dim(1) &&
                    edgeAttr.dim(1) == nn_->inChannels(),
                "NNConv: edge_attr must be [", edgeIndex.dim(1), ", ", nn_->inChannels(), "], got ",
                edgeAttr.defined() ? shapeString(edgeAttr.shape()) : std::string("none"));
  const int64_t E = edgeIndex.dim(1);
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  const Variable theta = reshape(nn_->forward(edgeAttr), {E, in_, out_});
  const Variable messages = edgeMatVec(x, theta, src);  // [E, out]: x_j Theta_e
  Variable out = aggregate(messages, dst, x.dim(0));
  if (lin_) out = add(out, lin_->forward(x));
  return biasParam_ ? add(out, *biasParam_) : out;
}

}  // namespace gnn
