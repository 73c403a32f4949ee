// GCNConv: the graph convolution of Kipf & Welling (ICLR 2017),
//   X' = D^-1/2 (A + I) D^-1/2 X W + b,
// with D the in-degree (plus one self-loop) at each target node, as PyG's GCNConv with its defaults
// (add_self_loops=True, normalize=True, bias=True, Glorot weight, zero bias). Message passing goes through
// propagate(), whose fused messageAndAggregate() is one sparse-dense product (SpMM) with the normalised
// adjacency. That matrix is built once per graph and cached (`cached`, on by default for full-batch training;
// turn it off when every batch is a different graph). The cache is keyed by the edge_index buffer's identity
// and version (Tensor::storageId, Tensor::version), its view, shape and the node count: a buffer overwritten
// in place, as a device with static input buffers does every step, is a new graph.
//
//   GCNConv conv(1433, 16, gen);
//   Variable h = conv.forward(x, edgeIndex);            // dense features [N, 1433]
//   Variable h = conv.forward(xSparse, edgeIndex);      // sparse features (bag of words)
#pragma once
#include "gnn/MessagePassing.h"
#include "gnn/Random.h"

namespace gnn {

struct GCNConvOptions {
  bool bias = true;
  bool cached = true;
  bool addSelfLoops = true;
  bool normalize = true;
  DType dtype = DType::F32;
};

class GCNConv : public MessagePassing {
 public:
  GCNConv(int64_t inChannels, int64_t outChannels, Generator& gen, GCNConvOptions options = {});

  Variable forward(const Variable& x, const Tensor& edgeIndex);
  /// Same with constant sparse input features (the product X W runs sparse).
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex);
  void resetParameters(Generator& gen);
  /// A copy with the same weights and an empty cache.
  std::unique_ptr<Module> clone() const override;

  /// The propagation matrix: row = target, column = source, D^-1/2 (A + I) D^-1/2 (or A, A + I when asked).
  /// Self-loops are added only to nodes that have none (PyG's add_remaining_self_loops).
  static SparseMatrix normalizedAdjacency(const Tensor& edgeIndex, int64_t numNodes, bool addSelfLoops = true,
                                          bool normalize = true, DType dtype = DType::F32);
  Variable& weight() { return *weight_; }
  Variable* bias() { return bias_; }
  /// Normalised adjacencies built so far (cache misses, or every call when not cached).
  int64_t adjacencyBuilds() const { return builds_; }

 protected:
  /// A_hat X: the normalised adjacency times the (already transformed) features.
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  Variable finish(const Variable& xw, const Tensor& edgeIndex, int64_t numNodes);
  const SparseMatrix& adjacency(const Tensor& edgeIndex, int64_t numNodes);

  int64_t in_, out_;
  GCNConvOptions opt_;
  Variable* weight_;  // [in, out] so that sparse X [N, in] multiplies it directly
  Variable* bias_ = nullptr;
  SparseMatrix cache_;
  // What cache_ was built from. Holding the edge_index keeps its storage alive, so no other buffer can take
  // its identity; the version says whether it was written since.
  Tensor cacheEdgeIndex_;
  const void* cacheData_ = nullptr;  // the view's first element (slices share a storage)
  uint64_t cacheVersion_ = 0;
  int64_t cacheNodes_ = -1;
  int64_t builds_ = 0;
};

}  // namespace gnn
