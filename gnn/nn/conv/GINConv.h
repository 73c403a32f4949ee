// GINConv: the graph isomorphism operator (Xu et al., ICLR 2019) as PyG 2.3.1's GINConv,
//   x'_i = nn((1 + eps) x_i + sum_{j -> i} x_j),
// summed over the incoming edges (the graph's own self-loops are ordinary edges), with nn a PyG MLP. eps is a
// trained parameter with train_eps, else a fixed buffer; PyG's state_dict holds "eps" [1] either way, and the
// MLP's keys under "nn." ("nn.lins.0.weight", "nn.norms.0.module.weight", ...). The neighbour sum is one sparse
// product with the graph's adjacency (no [E, F] messages), cached per graph as GCNConv's. PyG's bipartite form
// (x_src, x_dst): x'_i = nn((1 + eps) x_dst[i] + sum_{j -> i} x_src[j]), both sides of the MLP's input width.
//
//   auto conv = GINConv::fromPyG({{"nn", {{"class", "MLP"}, {"args", {{"channel_list", {16, 32, 32}}}}}},
//                                 {"train_eps", true}}, gen);
//   Variable h = conv->forward(x, edgeIndex);                       // [N, 16] -> [N, 32]
//   Variable h = conv->forward(xSparse, edgeIndex);                 // SparseMatrix features
//   Variable h = conv->forward(x, edgeIndex, {b.batch, b.numGraphs, b.nodesMask});  // norms see the batch
//   Variable hDst = conv->forward(xSrc, xDst, edgeIndex);           // [S, 16], [T, 16] -> [T, 32]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/nn/models/MLP.h"

namespace gnn {

class GINConv : public MessagePassing {
 public:
  GINConv(std::unique_ptr<MLP> nn, double eps = 0.0, bool trainEps = false);
  /// From PyG's keyword arguments: nn ({"class": "MLP", "args": {...}}, PyG's MLP keywords; no other module),
  /// eps, train_eps.
  static std::unique_ptr<GINConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in] -> [N, out]; b goes to the MLP's norms (which rows are real, which graph each is in).
  Variable forward(const Variable& x, const Tensor& edgeIndex, const NormBatch& b = {});
  /// PyG's bipartite form: xSrc [S, in] and xDst [T, in], edgeIndex's row 0 into the sources and row 1 into the
  /// targets -> [T, out]; the neighbour sum one product with the [T, S] count adjacency (a relation's own graph:
  /// not cached).
  Variable forward(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex, const NormBatch& b = {});
  /// Same with constant sparse input features (bag of words), the same map up to rounding: the MLP's first
  /// Linear goes before the neighbour sum, (1 + eps) x W^T + sum_j x_j W^T + b, with x W^T a sparse product.
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex, const NormBatch& b = {});
  std::unique_ptr<Module> clone() const override;
  /// From now on this layer uses `other`'s adjacency cache: a model's layers on one graph build its matrix (and
  /// the backward's transpose) once. The shared cache keeps the two most recent graphs.
  void shareAdjacencyWith(GINConv& other);
  MLP& nn() { return *nn_; }
  /// "eps" [1]: a parameter with train_eps, else a buffer.
  Variable& eps() { return *eps_; }

 protected:
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  /// (1 + eps) v.
  Variable selfTerm(const Variable& v) const;

  std::unique_ptr<MLP> nn_;
  double initialEps_;
  bool trainEps_;
  Variable* eps_;
  // The last graph's adjacency; a clone starts empty.
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
