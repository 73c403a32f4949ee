// EdgeConv: the edge convolution of DGCNN (Wang et al., "Dynamic Graph CNN for Learning on Point Clouds",
// 2019) as PyG 2.3.1's EdgeConv,
//   x'_i = aggr_{j -> i} nn([x_i, x_j - x_i]),
// with nn a PyG MLP of 2 * in input channels and aggr "max" (default), "mean", "sum" ("add"), ... over the
// incoming edges; no self-loops are added (the graph's own are ordinary edges), a node without edges gets 0.
// Parameters: the MLP's under "nn." ("nn.lins.0.weight", ...), as PyG's state_dict.
// nn's first Linear runs on the nodes, split over the halves of its input (see forward), and only the rest of
// the MLP on the edges.
//
//   auto conv = EdgeConv::fromPyG({{"nn", {{"class", "MLP"}, {"args", {{"channel_list", {6, 64, 64}}}}}}}, gen);
//   Variable h = conv->forward(pos, edgeIndex);      // [N, 3] -> [N, 64]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/nn/models/MLP.h"

namespace gnn {

class EdgeConv : public MessagePassing {
 public:
  EdgeConv(std::unique_ptr<MLP> nn, const std::string& aggr = "max");
  /// From PyG's keyword arguments: nn ({"class": "MLP", "args": {...}}; no other module), aggr.
  static std::unique_ptr<EdgeConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in] (nn takes 2 * in) -> [N, out]. The MLP runs on the E edge rows: a norm in it normalises over
  /// the edges (as PyG's), so pass edgeBatch (per edge row: which graph, which rows are real) to keep a
  /// fixed-size batch's padding edges out of its statistics.
  Variable forward(const Variable& x, const Tensor& edgeIndex, const NormBatch& edgeBatch = {});
  std::unique_ptr<Module> clone() const override;
  MLP& nn() { return *nn_; }

 private:
  std::unique_ptr<MLP> nn_;
  std::string aggr_;
};

}  // namespace gnn
