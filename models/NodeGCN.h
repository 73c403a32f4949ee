// NodeGCN: the two-layer graph convolutional network of Kipf & Welling (ICLR 2017) for semi-supervised node
// classification: dropout -> GCNConv -> ReLU -> dropout -> GCNConv, returning logits. With the paper's
// settings (hidden 16, dropout 0.5, Adam lr 0.01, L2 5e-4 on the first layer, 200 epochs) it reaches
// 81.5% test accuracy on Cora's public split.
//
//   NodeGCN net(1433, 16, 7, gen);
//   Variable logits = net.forward(features, edgeIndex, dropoutGen);   // features: SparseMatrix or Variable
#pragma once
#include "gnn/GCNConv.h"
#include "gnn/Module.h"

namespace gnn {

struct NodeGCNOptions {
  double dropout = 0.5;
  /// Keep the normalised adjacency between calls (full-batch training on one graph).
  bool cached = true;
};

class NodeGCN : public Module {
 public:
  NodeGCN(int64_t inChannels, int64_t hidden, int64_t numClasses, Generator& gen, NodeGCNOptions options = {});

  /// Logits [N, numClasses]; dropout draws from `dropoutGen` when training.
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex, Generator& dropoutGen);
  Variable forward(const Variable& x, const Tensor& edgeIndex, Generator& dropoutGen);

  GCNConv& conv1() { return conv1_; }
  GCNConv& conv2() { return conv2_; }

 private:
  Variable head(const Variable& h1, const Tensor& edgeIndex, Generator& dropoutGen);
  NodeGCNOptions opt_;
  GCNConv conv1_, conv2_;
};

/// Inverted dropout on the non-zeros of a constant sparse matrix. Dropping an explicit zero changes nothing,
/// so this equals dense dropout on the matrix at a fraction of the cost.
SparseMatrix dropoutValues(const SparseMatrix& x, double p, Generator& gen);

}  // namespace gnn
