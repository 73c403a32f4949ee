// NodeGCN: the two-layer graph convolutional network of Kipf & Welling (ICLR 2017) for semi-supervised node
// classification: dropout -> GCNConv -> ReLU -> dropout -> GCNConv, returning logits. With the paper's
// settings (hidden 16, dropout 0.5, Adam lr 0.01, L2 5e-4 on the first layer, 200 epochs) it reaches
// 81.5% test accuracy on Cora's public split. Blocks: "layers/0" (dropout, conv1, ReLU; state "h") and
// "layers/1" (dropout, conv2; state "out"). Dropout draws its masks from the current ExecutionContext's
// random key, so set it every step.
//
//   NodeGCN net(1433, 16, 7, gen);
//   ExecutionContext::current().setRandomKey({seed, step, 0});    // step: the optimizer's step count
//   Variable logits = net.forward(features, edgeIndex);     // features: SparseMatrix or Variable
//   Variable same = net.forward(batch);                     // batch.x dense [N, 1433], batch.edgeIndex
#pragma once
#include "gnn/nn/conv/GCNConv.h"
#include "models/BlockModel.h"

namespace gnn {

struct NodeGCNOptions {
  double dropout = 0.5;
  /// Keep the normalised adjacency between calls (full-batch training on one graph). Either way its two layers
  /// share one matrix per forward.
  bool cached = true;
};

class NodeGCN : public BlockModel {
 public:
  NodeGCN(int64_t inChannels, int64_t hidden, int64_t numClasses, Generator& gen, NodeGCNOptions options = {});

  using BlockModel::forward;
  /// Logits [N, numClasses].
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex);
  Variable forward(const Variable& x, const Tensor& edgeIndex);
  /// Builds the batch's normalised adjacency into the layers' shared cache ahead of forward(batch), from
  /// another thread if need be (ClusterLoader::Options::prepare): the forward then finds it.
  void prepare(const Batch& batch);
  /// Keeps this graph's normalised adjacency for both layers once built, also when the model is not cached (the
  /// whole graph of Cluster-GCN's evaluations, between batches whose matrices go with their forward).
  void keepAdjacencyOf(const Tensor& edgeIndex, int64_t numNodes) { conv1_.keepAdjacencyOf(edgeIndex, numNodes); }
  std::unique_ptr<Module> clone() const override;

  GCNConv& conv1() { return conv1_; }
  GCNConv& conv2() { return conv2_; }

 private:
  int64_t in_, hidden_, classes_;
  NodeGCNOptions opt_;
  GCNConv conv1_, conv2_;
};

}  // namespace gnn
