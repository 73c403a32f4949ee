#include "gnn/GCNConv.h"

#include <cmath>

#include "gnn/Init.h"

namespace gnn {

GCNConv::GCNConv(int64_t inChannels, int64_t outChannels, Generator& gen, GCNConvOptions options)
    : MessagePassing(Aggregation::Sum), in_(inChannels), out_(outChannels), opt_(options) {
  GNN_CHECK_ARG(inChannels > 0 && outChannels > 0, "GCNConv: channel counts must be positive");
  weight_ = &registerParameter("weight", Tensor({in_, out_}, opt_.dtype));
  if (opt_.bias) bias_ = &registerParameter("bias", Tensor({out_}, opt_.dtype));
  resetParameters(gen);
}

std::unique_ptr<Module> GCNConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GCNConv>(in_, out_, unused, opt_));
}

void GCNConv::resetParameters(Generator& gen) {
  weight_->value() = init::glorotUniform({in_, out_}, in_, out_, gen, opt_.dtype);
  if (bias_) bias_->value() = Tensor({out_}, opt_.dtype);
}

SparseMatrix GCNConv::normalizedAdjacency(const Tensor& edgeIndex, int64_t numNodes, bool addSelfLoops,
                                          bool normalize, DType dtype) {
  // Read through const views: a non-const access would bump the buffer's version and defeat the cache.
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  const int64_t E = edgeIndex.dim(1);
  const int64_t *s = src.data<int64_t>(), *d = dst.data<int64_t>();
  std::vector<int64_t> rows, cols;
  rows.reserve(E + numNodes);
  cols.reserve(E + numNodes);
  std::vector<char> hasLoop(static_cast<size_t>(numNodes), 0);
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(s[e] >= 0 && s[e] < numNodes && d[e] >= 0 && d[e] < numNodes, "GCNConv: edge ", e, " (", s[e],
                  " -> ", d[e], ") points outside the ", numNodes, " nodes");
    rows.push_back(d[e]);
    cols.push_back(s[e]);
    if (s[e] == d[e]) hasLoop[s[e]] = 1;
  }
  if (addSelfLoops)
    for (int64_t i = 0; i < numNodes; ++i)
      if (!hasLoop[i]) {
        rows.push_back(i);
        cols.push_back(i);
      }
  std::vector<double> w(rows.size(), 1.0);
  if (normalize) {
    std::vector<double> deg(static_cast<size_t>(numNodes), 0.0);
    for (int64_t r : rows) deg[r] += 1.0;
    for (size_t k = 0; k < rows.size(); ++k) {
      double a = deg[rows[k]] > 0 ? 1.0 / std::sqrt(deg[rows[k]]) : 0.0;
      double b = deg[cols[k]] > 0 ? 1.0 / std::sqrt(deg[cols[k]]) : 0.0;
      w[k] = a * b;
    }
  }
  return SparseMatrix::fromCoo(numNodes, numNodes, rows, cols, w, dtype);
}

const SparseMatrix& GCNConv::adjacency(const Tensor& edgeIndex, int64_t numNodes) {
  // The version is read before the build: a write that races with it makes the next call rebuild.
  const uint64_t version = edgeIndex.version();
  const bool hit = opt_.cached && cacheEdgeIndex_.defined() && cacheEdgeIndex_.storageId() == edgeIndex.storageId() &&
                   cacheData_ == edgeIndex.raw() && cacheVersion_ == version &&
                   cacheEdgeIndex_.shape() == edgeIndex.shape() && cacheNodes_ == numNodes;
  if (!hit) {
    cache_ = normalizedAdjacency(edgeIndex, numNodes, opt_.addSelfLoops, opt_.normalize, opt_.dtype);
    ++builds_;
    if (opt_.cached) {
      cacheEdgeIndex_ = edgeIndex;
      cacheData_ = edgeIndex.raw();
      cacheVersion_ = version;
      cacheNodes_ = numNodes;
    }
  }
  return cache_;
}

Variable GCNConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&, int64_t numNodes) {
  return spmm(adjacency(edgeIndex, numNodes), x);
}

Variable GCNConv::finish(const Variable& xw, const Tensor& edgeIndex, int64_t numNodes) {
  // As PyG's GCNConv: the bias is added after propagate, not in update().
  Variable out = propagate(edgeIndex, xw, Variable(), numNodes);
  return bias_ ? add(out, *bias_) : out;
}

Variable GCNConv::forward(const Variable& x, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_, "GCNConv(", in_, " -> ", out_, "): input has shape ",
                shapeString(x.shape()), ", expected [N, ", in_, "]");
  return finish(matmul(x, *weight_), edgeIndex, x.dim(0));
}

Variable GCNConv::forward(const SparseMatrix& x, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.cols() == in_, "GCNConv(", in_, " -> ", out_, "): sparse input has ", x.cols(), " columns");
  return finish(spmm(x, *weight_), edgeIndex, x.rows());
}

}  // namespace gnn
