// APPNP: personalized-PageRank propagation of Klicpera et al. (ICLR 2019, "Predict then Propagate") as PyG
// 2.3.1's APPNP,
//   X^0 = X,  X^{k+1} = (1 - alpha) A_hat X^k + alpha X,  output X^K,
// A_hat GCN's normalised adjacency (gcn_norm, with or without its self-loops) or, without normalize, the edges
// as they are. No parameters. dropout drops the propagation matrix's entries at every step in training (PyG's
// edge dropout; duplicate edges are one entry here, one weight each in PyG: the same expectation). The matrix is
// cached per graph as GCNConv's (PyG's `cached` keeps it for one graph; the outputs are the same).
//
//   APPNP prop(10, 0.1);
//   Variable h = prop.forward(mlp.forward(x), edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class APPNP : public MessagePassing {
 public:
  APPNP(int64_t K, double alpha, double dropout = 0.0, bool addSelfLoops = true, bool normalize = true);
  /// From PyG's keyword arguments (K, alpha, dropout, cached, add_self_loops, normalize).
  static std::unique_ptr<APPNP> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, F] -> [N, F].
  Variable forward(const Variable& x, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;

 protected:
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  int64_t k_;
  double alpha_, dropout_;
  bool addSelfLoops_, normalize_;
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
