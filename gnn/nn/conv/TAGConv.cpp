#include "gnn/nn/conv/TAGConv.h"

#include <string>

#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

TAGConv::TAGConv(int64_t inChannels, int64_t outChannels, Generator& gen, int64_t K, bool bias, bool normalize,
                 DType dtype)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), k_(K), hasBias_(bias), normalize_(normalize),
      dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0, "TAGConv: channel counts must be positive, got ", in_, " -> ", out_);
  GNN_CHECK_ARG(k_ >= 0, "TAGConv: K = ", k_, " must be >= 0");
  for (int64_t k = 0; k <= k_; ++k) {
    lins_.push_back(std::make_unique<Linear>(in_, out_, gen, /*bias=*/false, dtype_));
    registerModule("lins." + std::to_string(k), *lins_.back());
  }
  if (hasBias_) bias_ = &registerParameter("bias", Tensor::zeros({out_}, dtype_));
}

std::unique_ptr<TAGConv> TAGConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "TAGConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"K", 3}, {"bias", true},
                                    {"normalize", true}});
  return std::make_unique<TAGConv>(intChannels(a, "in_channels"), intChannels(a, "out_channels"), gen,
                                   a.get<int64_t>("K"), a.get<bool>("bias"), a.get<bool>("normalize"), dtype);
}

std::unique_ptr<Module> TAGConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<TAGConv>(in_, out_, unused, k_, hasBias_, normalize_, dtype_));
}

Variable TAGConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&, int64_t numNodes) {
  return spmm(gcnNormAdjacency(*cache_, edgeIndex, numNodes, normalize_, /*addSelfLoops=*/false, x.dtype()), x);
}

Variable TAGConv::forward(const Variable& x, const Tensor& edgeIndex) {
  checkNodeFeatures("TAGConv", x, in_);
  Variable h = x;
  Variable out = lins_[0]->forward(h);
  for (int64_t k = 1; k <= k_; ++k) {
    h = propagate(edgeIndex, h, Variable(), x.dim(0));
    out = add(out, lins_[static_cast<size_t>(k)]->forward(h));
  }
  return bias_ ? add(out, *bias_) : out;
}

}  // namespace gnn
