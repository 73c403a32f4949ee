#include "gnn/nn/conv/NNConv.h"

#include <cmath>
#include <numeric>

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

Variable NNConv::foldedMessages(const Variable& x, const Tensor& src, const Variable& h) {
  // Theta_e = reshape(W h_e + b, [in, out]) with the network's last Linear (W [in out, H], b [in out]), so
  //   x_j Theta_e = h_e A_j + B_j,  A_j[q, k] = sum_c x_j[c] W[c out + k, q],  B_j = x_j reshape(b, [in, out]):
  // A and B are per node ([N, H out] and [N, out], one product each), and each edge reads its source's H x out
  // block instead of its own in x out matrix made by an [E, H] x [H, in out] product (at 64 -> 4 channels and
  // H = 32: 128 multiply-adds an edge instead of 8,448, and half the per-edge bytes). The same function; the
  // sums run in another order.
  Linear& last = nn_->lin(nn_->numLayers() - 1);
  const int64_t E = src.numel(), H = last.inFeatures();
  const Variable wr = reshape(transpose(reshape(last.weight(), {in_, out_, H}), 1, 2), {in_, H * out_});
  const Variable blocks = reshape(gatherRows(matmul(x, wr), src), {E, H, out_});
  Tensor edges = Tensor::empty({E}, DType::I64);
  std::iota(edges.data<int64_t>(), edges.data<int64_t>() + E, int64_t{0});
  Variable m = edgeMatVec(h, blocks, edges);
  if (last.bias()) m = add(m, gatherRows(matmul(x, reshape(*last.bias(), {in_, out_})), src));
  return m;
}

Variable NNConv::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr) {
  checkNodeFeatures("NNConv", x, in_);
  GNN_CHECK_ARG(edgeAttr.defined() && edgeAttr.value().rank() == 2 && edgeAttr.dim(0) == edgeIndex.dim(1) &&
                    edgeAttr.dim(1) == nn_->inChannels(),
                "NNConv: edge_attr must be [", edgeIndex.dim(1), ", ", nn_->inChannels(), "], got ",
                edgeAttr.defined() ? shapeString(edgeAttr.shape()) : std::string("none"));
  const int64_t E = edgeIndex.dim(1);
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  Variable messages;  // [E, out]: x_j Theta_e
  if (nn_->endsInPlainLinear()) {
    messages = foldedMessages(x, src, nn_->forwardBeforeLastLinear(edgeAttr));
  } else {
    const Variable theta = reshape(nn_->forward(edgeAttr), {E, in_, out_});
    messages = edgeMatVec(x, theta, src);
  }
  Variable out = aggregate(messages, dst, x.dim(0));
  if (lin_) out = add(out, lin_->forward(x));
  return biasParam_ ? add(out, *biasParam_) : out;
}

}  // namespace gnn
