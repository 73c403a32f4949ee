#include "gnn/nn/conv/MFConv.h"

#include <algorithm>
#include <string>

#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

MFConv::MFConv(int64_t inChannels, int64_t outChannels, Generator& gen, int64_t maxDegree, bool bias, DType dtype)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), maxDegree_(maxDegree), bias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0, "MFConv: channel counts must be positive, got ", in_, " -> ", out_);
  GNN_CHECK_ARG(maxDegree_ >= 0, "MFConv: max_degree = ", maxDegree_, " must be >= 0");
  // PyG's order: every lins_l, then every lins_r.
  for (int64_t d = 0; d <= maxDegree_; ++d) {
    linsL_.push_back(std::make_unique<Linear>(in_, out_, gen, bias_, dtype_));
    registerModule("lins_l." + std::to_string(d), *linsL_.back());
  }
  for (int64_t d = 0; d <= maxDegree_; ++d) {
    linsR_.push_back(std::make_unique<Linear>(in_, out_, gen, false, dtype_));
    registerModule("lins_r." + std::to_string(d), *linsR_.back());
  }
}

std::unique_ptr<MFConv> MFConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "MFConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"max_degree", 10},
                                   {"bias", true}});
  return std::make_unique<MFConv>(intChannels(a, "in_channels"), intChannels(a, "out_channels"), gen,
                                  a.get<int64_t>("max_degree"), a.get<bool>("bias"), dtype);
}

std::unique_ptr<Module> MFConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<MFConv>(in_, out_, unused, maxDegree_, bias_, dtype_));
}

Variable MFConv::forward(const Variable& x, const Tensor& edgeIndex) {
  checkNodeFeatures("MFConv", x, in_);
  const int64_t n = x.dim(0);
  bool built = false;
  const SparseMatrix a = cache_->get(edgeIndex, n, [&] {
    return countAdjacency(edgeIndex, n, /*mean=*/false, x.dtype());
  }, &built);
  const Variable h = spmm(a, x);
  // Each node's degree bucket (the row's entry count, duplicates included), clamped to max_degree.
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(maxDegree_ + 1));
  dispatchFloat(a.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* v = a.values().template data<T>();
    for (int64_t i = 0; i < n; ++i) {
      double deg = 0;
      for (int64_t k = a.rowPtr()[i]; k < a.rowPtr()[i + 1]; ++k) deg += static_cast<double>(v[k]);
      rows[static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(deg), maxDegree_))].push_back(i);
    }
  });
  Variable out;
  for (int64_t d = 0; d <= maxDegree_; ++d) {
    const std::vector<int64_t>& idx = rows[static_cast<size_t>(d)];
    // An absent degree runs on no rows, so its weights get a zero gradient, as PyG's.
    const Tensor index = idx.empty() ? Tensor::zeros({0}, DType::I64) : Tensor::fromVector(idx);
    const Variable r = add(linsL_[static_cast<size_t>(d)]->forward(gatherRows(h, index)),
                           linsR_[static_cast<size_t>(d)]->forward(gatherRows(x, index)));
    const Variable placed = scatterSum(r, index, n);
    out = out.defined() ? add(out, placed) : placed;
  }
  return out.defined() ? out : Variable(Tensor::zeros({n, out_}, x.dtype()));
}

}  // namespace gnn
