#include "gnn/nn/conv/GatedGraphConv.h"

#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

GatedGraphConv::GatedGraphConv(int64_t outChannels, int64_t numLayers, Generator& gen, const nlohmann::json& aggr,
                               bool bias, DType dtype)
    : MessagePassing(aggregationFromPyG(aggr, gen, dtype)), out_(outChannels), layers_(numLayers), bias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(out_ > 0 && layers_ > 0, "GatedGraphConv: out_channels = ", out_, " and num_layers = ", layers_,
                " must be positive");
  // PyG's uniform(out_channels, weight): U(-1/sqrt(out), 1/sqrt(out)).
  const double a = 1.0 / std::sqrt(static_cast<double>(out_));
  weight_ = &registerParameter("weight", init::uniform({layers_, out_, out_}, -a, a, gen, dtype_));
  rnn_ = std::make_unique<GRUCell>(out_, out_, gen, bias_, dtype_);
  registerModule("rnn", *rnn_);
}

std::unique_ptr<GatedGraphConv> GatedGraphConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "GatedGraphConv", {{"out_channels", nullptr}, {"num_layers", nullptr}, {"aggr", "add"},
                                           {"bias", true}});
  return std::make_unique<GatedGraphConv>(intChannels(a, "out_channels"), a.get<int64_t>("num_layers"), gen,
                                          aggregationArg(a), a.get<bool>("bias"), dtype);
}

std::unique_ptr<Module> GatedGraphConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GatedGraphConv>(out_, layers_, unused, aggregation().spec(), bias_, dtype_));
}


Variable GatedGraphConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&,
                                                     int64_t numNodes) {
  return linearAggregate(aggregation(), *cache_, edgeIndex, x, numNodes);
}

Variable GatedGraphConv::forward(const Variable& x, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.defined() && x.value().rank() == 2 && x.dim(1) <= out_, "GatedGraphConv(", out_,
                "): input has shape ", x.defined() ? shapeString(x.shape()) : std::string("none"),
                ", at most ", out_, " channels");
  const int64_t n = x.dim(0);
  Variable h = x.dim(1) < out_ ? concatCols({x, Variable(Tensor::zeros({n, out_ - x.dim(1)}, x.dtype()))}) : x;
  for (int64_t l = 0; l < layers_; ++l) {
    const Variable w = reshape(sliceRows(reshape(*weight_, {layers_, out_ * out_}), l, l + 1), {out_, out_});
    h = rnn_->forward(propagate(edgeIndex, matmul(h, w), Variable(), n), h);
  }
  return h;
}

}  // namespace gnn
