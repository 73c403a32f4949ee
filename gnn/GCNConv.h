// GCNConv: the graph convolution of Kipf & Welling (ICLR 2017),
//   X' = D^-1/2 (A + I) D^-1/2 X W + b,
// with D the in-degree (plus one self-loop) at each target node, as PyG's GCNConv with its defaults
// (add_self_loops=True, normalize=True, bias=True, Glorot weight, zero bias). The normalised adjacency is
// built once per graph and cached (`cached`, on by default for full-batch training; turn it off when every
// batch is a different graph). Message passing runs as one sparse-dense product (SpMM).
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

  /// The propagation matrix: row = target, column = source, D^-1/2 (A + I) D^-1/2 (or A, A + I when asked).
  /// Self-loops are added only to nodes that have none (PyG's add_remaining_self_loops).
  static SparseMatrix normalizedAdjacency(const Tensor& edgeIndex, int64_t numNodes, bool addSelfLoops = true,
                                          bool normalize = true, DType dtype = DType::F32);
  Variable& weight() { return *weight_; }
  Variable* bias() { return bias_; }

 private:
  Variable finish(const Variable& xw, const Tensor& edgeIndex, int64_t numNodes);
  const SparseMatrix& adjacency(const Tensor& edgeIndex, int64_t numNodes);

  int64_t in_, out_;
  GCNConvOptions opt_;
  Variable* weight_;  // [in, out] so that sparse X [N, in] multiplies it directly
  Variable* bias_ = nullptr;
  SparseMatrix cache_;
  // Holding the cached edge_index keeps its storage alive, so no other tensor can reuse its address.
  Tensor cacheEdgeIndex_;
  int64_t cacheNodes_ = -1;
};

}  // namespace gnn
