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
  GNN_CHECK_ARG(p >= 0 && p < 1, "dropout: p must be in [0, 1), got ", p);
  Tensor v = x.values().clone();
  uint64_t first = gen.reserve(Generator::dropoutCounters(static_cast<uint64_t>(v.numel())));
  const uint32_t threshold = Generator::dropoutThreshold(p);
  dispatchFloat(v.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* d = v.data<T>();
    const T keep = static_cast<T>(1 / (1 - p));
    const int64_t n = v.numel();
    std::vector<uint16_t> u(static_cast<size_t>(n));
    gen.uniform16(first, 0, n, u.data());
    for (int64_t i = 0; i < n; ++i) d[i] *= static_cast<T>(u[i] >= threshold) * keep;  // branch-free
  });
  return x.withValues(std::move(v));
}

}  // namespace gnn
