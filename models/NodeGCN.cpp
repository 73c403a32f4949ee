#include "models/NodeGCN.h"

#include <vector>

namespace gnn {

namespace {
GCNConvOptions convOptions(bool cached) {
  GCNConvOptions o;
  o.cached = cached;
  return o;
}
}  // namespace

NodeGCN::NodeGCN(int64_t inChannels, int64_t hidden, int64_t numClasses, Generator& gen, NodeGCNOptions options)
    : opt_(options),
      conv1_(inChannels, hidden, gen, convOptions(options.cached)),
      conv2_(hidden, numClasses, gen, convOptions(options.cached)) {
  registerModule("conv1", conv1_);
  registerModule("conv2", conv2_);
}

Variable NodeGCN::forward(const SparseMatrix& x, const Tensor& edgeIndex, Generator& dropoutGen) {
  const bool drop = isTraining() && opt_.dropout > 0;
  Variable h1 = relu(conv1_.forward(drop ? dropoutValues(x, opt_.dropout, dropoutGen) : x, edgeIndex));
  return head(h1, edgeIndex, dropoutGen);
}

Variable NodeGCN::forward(const Variable& x, const Tensor& edgeIndex, Generator& dropoutGen) {
  Variable h1 = relu(conv1_.forward(dropout(x, opt_.dropout, dropoutGen, isTraining()), edgeIndex));
  return head(h1, edgeIndex, dropoutGen);
}

Variable NodeGCN::head(const Variable& h1, const Tensor& edgeIndex, Generator& dropoutGen) {
  return conv2_.forward(dropout(h1, opt_.dropout, dropoutGen, isTraining()), edgeIndex);
}

SparseMatrix dropoutValues(const SparseMatrix& x, double p, Generator& gen) {
  const Tensor& values = x.values();
  Tensor mask = dropoutMask(values.shape(), values.dtype(), p, gen);
  Tensor v = Tensor::empty(values.shape(), values.dtype());
  dispatchFloat(v.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    v.flat<T>() = values.flat<T>() * mask.flat<T>();
  });
  return x.withValues(std::move(v));
}

}  // namespace gnn
