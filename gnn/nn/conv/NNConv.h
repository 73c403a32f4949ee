// NNConv: the edge-conditioned convolution of Gilmer et al. (ICML 2017, MPNN; Simonovsky & Komodakis 2017) as PyG
// 2.3.1's NNConv,
//   x'_i = W_root x_i + aggr_{j -> i} x_j Theta(e_ji) + b,  Theta(e) = nn(e) viewed as [in, out],
// nn a PyG MLP from edge_dim to in x out, aggr "add" (default), "mean", "max", ... State_dict: "nn.*", "lin.weight"
// [out, in] (root_weight; no bias), "bias" [out] (zeros at first). Each edge's product runs as one batched
// [1, in] x [in, out] product.
//
//   auto conv = NNConv::fromPyG({{"in_channels", 16}, {"out_channels", 16}, {"aggr", "mean"},
//                                {"nn", {{"class", "MLP"}, {"args", {{"channel_list", {3, 32, 256}}}}}}}, gen);
//   Variable h = conv->forward(x, edgeIndex, edgeAttr);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/nn/models/MLP.h"

namespace gnn {

class NNConv : public MessagePassing {
 public:
  NNConv(int64_t inChannels, int64_t outChannels, std::unique_ptr<MLP> nn, Generator& gen,
         const nlohmann::json& aggr = "add", bool rootWeight = true, bool bias = true);
  /// From PyG's keyword arguments (in_channels as an int, out_channels, nn: {"class": "MLP", "args": {...}}, aggr,
  /// root_weight, bias).
  static std::unique_ptr<NNConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex [2, E], edgeAttr [E, nn's input width] -> [N, out].
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr);
  std::unique_ptr<Module> clone() const override;
  MLP& nn() { return *nn_; }

 private:
  /// The messages x_j Theta_e with the edge network's last Linear folded in (h: that Linear's input per edge).
  Variable foldedMessages(const Variable& x, const Tensor& src, const Variable& h);
  int64_t in_, out_;
  std::unique_ptr<MLP> nn_;
  bool rootWeight_, bias_;
  DType dtype_;
  std::unique_ptr<Linear> lin_;
  Variable* biasParam_ = nullptr;
};

}  // namespace gnn
