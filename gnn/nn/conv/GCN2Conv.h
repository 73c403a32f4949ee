// GCN2Conv: the graph convolution with initial residual and identity mapping of Chen et al. (ICML 2020, GCNII)
// as PyG 2.3.1's GCN2Conv,
//   P = (1 - alpha) A_hat X + alpha X_0,
//   X' = (1 - beta) P + beta P W_1                                   (shared_weights)
//   X' = (1 - beta) ((1 - alpha) A_hat X) + beta ((1 - alpha) A_hat X) W_1 + (1 - beta) alpha X_0 + beta alpha X_0 W_2,
// A_hat GCN's normalised adjacency (gcn_norm, with or without its self-loops) or the edges as they are without
// normalize, beta = log(theta / layer + 1) when theta and layer are given, else 1. W multiplies from the right
// (PyG's addmm(out, out, weight1)). State_dict: "weight1" [C, C], "weight2" [C, C] (not shared). The adjacency
// is cached per graph as GCNConv's.
//
//   GCN2Conv conv(64, 0.1, gen, 0.5, /*layer=*/3);
//   Variable h = conv.forward(x, x0, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class GCN2Conv : public MessagePassing {
 public:
  /// theta and layer: both given (beta = log(theta / layer + 1)) or both <= 0 (beta = 1).
  GCN2Conv(int64_t channels, double alpha, Generator& gen, double theta = 0, int64_t layer = 0,
           bool sharedWeights = true, bool addSelfLoops = true, bool normalize = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (channels, alpha, theta, layer, shared_weights, cached, add_self_loops, normalize).
  static std::unique_ptr<GCN2Conv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, C], x0 [>= N, C] (its first N rows are read), edgeIndex [2, E] -> [N, C].
  Variable forward(const Variable& x, const Variable& x0, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;
  double beta() const { return beta_; }

 protected:
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  int64_t channels_;
  double alpha_, theta_;
  int64_t layer_;
  bool sharedWeights_, addSelfLoops_, normalize_;
  DType dtype_;
  double beta_ = 1.0;
  Variable* weight1_;
  Variable* weight2_ = nullptr;
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
