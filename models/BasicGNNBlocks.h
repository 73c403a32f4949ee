// BasicGNNBlocks: one of PyG's ready models (gnn/nn/models/BasicGNN.h: GCN, GraphSAGE, GIN, GAT, PNA, EdgeCNN)
// as a BlockModel, so the Trainer and the simulated IPUs run it by blocks: "input" (input dropout), "layers/<i>"
// (one convolution with its activation, norm and dropout), "head" (jumping knowledge and `lin`, when the model
// has them). The model keeps PyG's parameter names ("convs.0.lin.weight"): it is registered under the empty name.
//
//   BasicGNNBlocks net(std::make_unique<GAT>(options, gen));
//   Variable logits = net.forward(x, edgeIndex);       // the whole graph
//   Variable fromSparse = net.forward(xSparse, edgeIndex);  // SparseMatrix features (not PNA, EdgeCNN)
//   Variable same = net.forward(batch);                // batch.x float [N, F], batch.edgeIndex, batch.nodesMask
#pragma once
#include <memory>

#include "gnn/nn/models/BasicGNN.h"
#include "models/BlockModel.h"

namespace gnn {

class BasicGNNBlocks : public BlockModel {
 public:
  explicit BasicGNNBlocks(std::unique_ptr<BasicGNN> model);

  using BlockModel::forward;
  /// The whole graph's outputs [N, out_channels] from dense features x [N, in_channels].
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable());
  /// The same from sparse features (BasicGNN::forward(const SparseMatrix&, ...)); std::invalid_argument when the
  /// model's class takes dense features only (BasicGNN::takesSparseInput).
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable());
  BasicGNN& model() { return *model_; }
  const BasicGNN& model() const { return *model_; }
  std::unique_ptr<Module> clone() const override;

 private:
  std::unique_ptr<BasicGNN> model_;
};

}  // namespace gnn
