// GINEConv: GIN with edge features (Hu et al., "Strategies for Pre-training GNNs", ICLR 2020) as PyG 2.3.1's
// GINEConv,
//   x'_i = nn((1 + eps) x_i + sum_{j -> i} ReLU(x_j + lin(e_ji))),
// lin a Linear(edge_dim, nn's in_channels) with edge_dim given, else none (the edge features must then have x's
// width). eps trains with train_eps, else it is a fixed buffer; PyG's state_dict holds "eps" [1] either way, the
// MLP's keys under "nn.", and "lin.weight" [in, edge_dim], "lin.bias" [in] with edge_dim. The messages, their
// ReLU, the sum and the root term run as one fused pass (reluMessageSum: no [E, F] messages).
//
//   auto conv = GINEConv::fromPyG({{"nn", {{"class", "MLP"}, {"args", {{"channel_list", {16, 32, 32}}}}}},
//                                  {"edge_dim", 3}, {"train_eps", true}}, gen);
//   Variable h = conv->forward(x, edgeIndex, edgeAttr);      // x [N, 16], edgeAttr [E, 3] -> [N, 32]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/nn/models/MLP.h"

namespace gnn {

class GINEConv : public MessagePassing {
 public:
  /// edgeDim: the edge features' width (0: none, they must have nn's input width).
  GINEConv(std::unique_ptr<MLP> nn, Generator& gen, double eps = 0.0, bool trainEps = false, int64_t edgeDim = 0);
  /// From PyG's keyword arguments: nn ({"class": "MLP", "args": {...}}), eps, train_eps, edge_dim.
  static std::unique_ptr<GINEConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex [2, E], edgeAttr [E, edge_dim or in] -> [N, out]; b goes to the MLP's norms.
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr, const NormBatch& b = {});
  std::unique_ptr<Module> clone() const override;
  MLP& nn() { return *nn_; }
  Variable& eps() { return *eps_; }
  int64_t edgeDim() const { return edgeDim_; }

 protected:
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  std::unique_ptr<MLP> nn_;
  std::unique_ptr<Linear> lin_;  // edge_dim only
  double initialEps_;
  bool trainEps_;
  int64_t edgeDim_;
  Variable* eps_;
};

}  // namespace gnn
