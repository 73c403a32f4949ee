#include "gnn/nn/conv/SGConv.h"

#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

SGConv::SGConv(int64_t inChannels, int64_t outChannels, Generator& gen, int64_t K, bool addSelfLoops, bool bias,
               DType dtype)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), k_(K), addSelfLoops_(addSelfLoops), bias_(bias),
      dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0, "SGConv: channel counts must be positive, got ", in_, " -> ", out_);
  GNN_CHECK_ARG(k_ >= 0, "SGConv: K = ", k_, " must be >= 0");
  lin_ = std::make_unique<Linear>(in_, out_, gen, bias_, dtype_);
  registerModule("lin", *lin_);
}

std::unique_ptr<SGConv> SGConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "SGConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"K", 1}, {"cached", false},
                                   {"add_self_loops", true}, {"bias", true}});
  (void)a.get<bool>("cached");  // the adjacency is cached per graph either way (see the header)
  return std::make_unique<SGConv>(intChannels(a, "in_channels"), intChannels(a, "out_channels"), gen,
                                  a.get<int64_t>("K"), a.get<bool>("add_self_loops"), a.get<bool>("bias"), dtype);
}

std::unique_ptr<Module> SGConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<SGConv>(in_, out_, unused, k_, addSelfLoops_, bias_, dtype_));
}

Variable SGConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&, int64_t numNodes) {
  return spmm(gcnNormAdjacency(*cache_, edgeIndex, numNodes, /*normalize=*/true, addSelfLoops_, x.dtype()), x);
}

Variable SGConv::forward(const Variable& x, const Tensor& edgeIndex) {
  checkNodeFeatures("SGConv", x, in_);
  const bool projectFirst = out_ < in_;
  Variable h = projectFirst ? matmulNT(x, lin_->weight()) : x;
  for (int64_t k = 0; k < k_; ++k) h = propagate(edgeIndex, h, Variable(), x.dim(0));
  if (!projectFirst) return lin_->forward(h);
  return lin_->bias() ? add(h, *lin_->bias()) : h;
}

}  // namespace gnn
