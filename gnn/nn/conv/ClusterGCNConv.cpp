#include "gnn/nn/conv/ClusterGCNConv.h"

#include <algorithm>

#include "gnn/nn/Init.h"
#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

ClusterGCNConv::ClusterGCNConv(int64_t inChannels, int64_t outChannels, Generator& gen, double diagLambda,
                               bool addSelfLoops, bool bias, DType dtype)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), diagLambda_(diagLambda),
      addSelfLoops_(addSelfLoops), bias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0, "ClusterGCNConv: channel counts must be positive, got ", in_, " -> ", out_);
  // PyG's Linear(weight_initializer='glorot'): Glorot weights, the bias U(-1/sqrt(in), 1/sqrt(in)) as torch's.
  linOut_ = std::make_unique<Linear>(in_, out_, gen, bias_, dtype_);
  linOut_->weight().value() = init::glorotUniform({out_, in_}, in_, out_, gen, dtype_);
  registerModule("lin_out", *linOut_);
  linRoot_ = std::make_unique<Linear>(in_, out_, gen, false, dtype_);
  linRoot_->weight().value() = init::glorotUniform({out_, in_}, in_, out_, gen, dtype_);
  registerModule("lin_root", *linRoot_);
}

std::unique_ptr<ClusterGCNConv> ClusterGCNConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "ClusterGCNConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"diag_lambda", 0.0},
                                           {"add_self_loops", true}, {"bias", true}});
  return std::make_unique<ClusterGCNConv>(intChannels(a, "in_channels"), intChannels(a, "out_channels"), gen,
                                          a.get<double>("diag_lambda"), a.get<bool>("add_self_loops"),
                                          a.get<bool>("bias"), dtype);
}

std::unique_ptr<Module> ClusterGCNConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<ClusterGCNConv>(in_, out_, unused, diagLambda_, addSelfLoops_, bias_, dtype_));
}

SparseMatrix ClusterGCNConv::propagationMatrix(const Tensor& edgeIndex, int64_t numNodes, DType dtype) const {
  // A' with counts (one self-loop per node when asked: GCNConv's add_remaining_self_loops), then each row
  // divided by its sum (the in-degree, clamped to 1) and lambda / deg added on the row's self-loop entry.
  const SparseMatrix a = GCNConv::normalizedAdjacency(edgeIndex, numNodes, addSelfLoops_, /*normalize=*/false, dtype);
  Tensor values = a.values().clone();
  dispatchFloat(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* v = values.template data<T>();
    const auto& rowPtr = a.rowPtr();
    const auto& col = a.colIdx();
    for (int64_t i = 0; i < numNodes; ++i) {
      T deg = 0;
      for (int64_t k = rowPtr[i]; k < rowPtr[i + 1]; ++k) deg += v[k];
      const T inv = T(1) / std::max(deg, T(1));
      for (int64_t k = rowPtr[i]; k < rowPtr[i + 1]; ++k) {
        // A self-loop entry holds every loop edge of the node (their count c): c (1 + lambda) / deg.
        v[k] = col[k] == i ? v[k] * inv + v[k] * static_cast<T>(diagLambda_) * inv : v[k] * inv;
      }
    }
  });
  return a.withValues(values);
}

Variable ClusterGCNConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&,
                                             int64_t numNodes) {
  bool built = false;
  const SparseMatrix a = cache_->get(edgeIndex, numNodes, [&] {
    return propagationMatrix(edgeIndex, numNodes, x.dtype());
  }, &built);
  return spmm(a, x);
}

Variable ClusterGCNConv::forward(const Variable& x, const Tensor& edgeIndex) {
  checkNodeFeatures("ClusterGCNConv", x, in_);
  return add(linOut_->forward(propagate(edgeIndex, x, Variable(), x.dim(0))), linRoot_->forward(x));
}

}  // namespace gnn
