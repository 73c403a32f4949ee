// MFConv: the molecular fingerprint convolution of Duvenaud et al. (NeurIPS 2015) as PyG 2.3.1's MFConv,
//   x'_i = W_l^{(d_i)} sum_{j -> i} x_j + b^{(d_i)} + W_r^{(d_i)} x_i,
// one pair of weights per in-degree d_i (the number of incoming edges, duplicates and self-loops counted),
// degrees above max_degree sharing the last. State_dict: "lins_l.<d>.weight", "lins_l.<d>.bias" (bias),
// "lins_r.<d>.weight" for d = 0..max_degree. The neighbour sum is one sparse product (cached per graph); each
// degree's rows are gathered, transformed and put back.
//
//   auto conv = MFConv::fromPyG({{"in_channels", 16}, {"out_channels", 32}, {"max_degree", 6}}, gen);
//   Variable h = conv->forward(x, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class MFConv : public MessagePassing {
 public:
  MFConv(int64_t inChannels, int64_t outChannels, Generator& gen, int64_t maxDegree = 10, bool bias = true,
         DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels as an int, out_channels, max_degree, bias).
  static std::unique_ptr<MFConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  Variable forward(const Variable& x, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t in_, out_, maxDegree_;
  bool bias_;
  DType dtype_;
  std::vector<std::unique_ptr<Linear>> linsL_, linsR_;
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
