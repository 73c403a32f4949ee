#include "gnn/nn/conv/LEConv.h"

#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

LEConv::LEConv(int64_t inChannels, int64_t outChannels, Generator& gen, bool bias, DType dtype)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), bias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0, "LEConv: channel counts must be positive, got ", in_, " -> ", out_);
  lin1_ = std::make_unique<Linear>(in_, out_, gen, bias_, dtype_);
  registerModule("lin1", *lin1_);
  lin2_ = std::make_unique<Linear>(in_, out_, gen, false, dtype_);
  registerModule("lin2", *lin2_);
  lin3_ = std::make_unique<Linear>(in_, out_, gen, bias_, dtype_);
  registerModule("lin3", *lin3_);
}

std::unique_ptr<LEConv> LEConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "LEConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"bias", true}});
  return std::make_unique<LEConv>(intChannels(a, "in_channels"), intChannels(a, "out_channels"), gen,
                                  a.get<bool>("bias"), dtype);
}

std::unique_ptr<Module> LEConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<LEConv>(in_, out_, unused, bias_, dtype_));
}

Variable LEConv::forward(const Variable& x, const Tensor& edgeIndex) {
  checkNodeFeatures("LEConv", x, in_);
  const int64_t n = x.dim(0);
  bool built = false;
  const SparseMatrix a = cache_->get(edgeIndex, n, [&] {
    return countAdjacency(edgeIndex, n, /*mean=*/false, x.dtype());
  }, &built);
  // deg_i: the row sums of the count matrix (a constant of the graph).
  Tensor deg = Tensor::zeros({n, 1}, x.dtype());
  dispatchFloat(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* v = a.values().template data<T>();
    T* d = deg.template data<T>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = a.rowPtr()[i]; k < a.rowPtr()[i + 1]; ++k) d[i] += v[k];
  });
  const Variable neighbours = spmm(a, lin1_->forward(x));
  return add(sub(neighbours, mul(lin2_->forward(x), Variable(deg))), lin3_->forward(x));
}

}  // namespace gnn
