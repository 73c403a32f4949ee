// LEConv: the local extremum operator of Ranjan et al. (AAAI 2020, ASAP) as PyG 2.3.1's LEConv,
//   x'_i = sum_{j -> i} (W_1 x_j + b_1 - W_2 x_i) + W_3 x_i + b_3
//        = A (X W_1^T + b_1) - deg_i W_2 x_i + W_3 x_i + b_3,
// the sum over incoming edges (duplicates and self-loops count; deg_i their number). State_dict:
// "lin1.weight", "lin1.bias", "lin2.weight" (no bias), "lin3.weight", "lin3.bias" ([out, in] and [out]; the
// biases with bias). The neighbour sum is one sparse product with the count adjacency, cached per graph.
//
//   auto conv = LEConv::fromPyG({{"in_channels", 16}, {"out_channels", 32}}, gen);
//   Variable h = conv->forward(x, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class LEConv : public MessagePassing {
 public:
  LEConv(int64_t inChannels, int64_t outChannels, Generator& gen, bool bias = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels as an int, out_channels, bias).
  static std::unique_ptr<LEConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  Variable forward(const Variable& x, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t in_, out_;
  bool bias_;
  DType dtype_;
  std::unique_ptr<Linear> lin1_, lin2_, lin3_;
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
