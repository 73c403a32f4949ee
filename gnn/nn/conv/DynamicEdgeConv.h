// DynamicEdgeConv: EdgeConv on the k-nearest-neighbour graph of its input (Wang et al., DGCNN) as PyG 2.3.1's
// DynamicEdgeConv: each node's k nearest nodes of its own graph in feature space (Euclidean; the node itself
// among them, at distance 0, as torch_cluster.knn), ties broken by the lower node index, edges neighbour -> node,
// then EdgeConv's aggr_{j} nn([x_i, x_j - x_i]). A graph of fewer than k nodes gives each node all of them. The
// neighbours are chosen without a gradient (as PyG's). State_dict: "nn.*".
//
//   auto conv = DynamicEdgeConv::fromPyG({{"nn", mlpSpec({6, 64, 64})}, {"k", 20}}, gen);
//   Variable h = conv->forward(pos, batch.batch);         // [N, 3] -> [N, 64]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/conv/EdgeConv.h"

namespace gnn {

class DynamicEdgeConv : public EdgeConv {
 public:
  DynamicEdgeConv(std::unique_ptr<MLP> nn, int64_t k, const std::string& aggr = "max");
  /// From PyG's keyword arguments: nn ({"class": "MLP", "args": {...}}), k, aggr.
  static std::unique_ptr<DynamicEdgeConv> fromPyG(const nlohmann::json& args, Generator& gen,
                                                  DType dtype = DType::F32);

  /// x [N, in], batch int64 [N] sorted graph ids (undefined: one graph) -> [N, out].
  Variable forward(const Variable& x, const Tensor& batch = Tensor());
  std::unique_ptr<Module> clone() const override;
  /// The k-nearest-neighbour edges [2, N k'] (row 0 the neighbour, row 1 the node), nodes in order, each node's
  /// neighbours nearest first.
  Tensor knnGraph(const Tensor& x, const Tensor& batch) const;

 private:
  int64_t k_;
  std::string aggrName_;
};

}  // namespace gnn
