// ResGatedGraphConv: the residual gated graph convolution of Bresson & Laurent (2017) as PyG 2.3.1's
// ResGatedGraphConv,
//   x'_i = W_skip x_i + sum_{j -> i} act(W_k x_i + W_q x_j) * (W_v x_j) + b,
// act sigmoid by default (any of activationFromPyG's names), each edge's gate per channel. State_dict:
// "lin_key", "lin_query", "lin_value" (weight [out, in] and bias [out] each), "lin_skip.weight" (root_weight),
// "bias" [out] (bias; zeros at first). The messages are [E, out] rows (gathered, gated, summed by target).
//
//   auto conv = ResGatedGraphConv::fromPyG({{"in_channels", 16}, {"out_channels", 32}}, gen);
//   Variable h = conv->forward(x, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/Activation.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class ResGatedGraphConv : public MessagePassing {
 public:
  ResGatedGraphConv(int64_t inChannels, int64_t outChannels, Generator& gen, const nlohmann::json& act = "sigmoid",
                    bool rootWeight = true, bool bias = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels as an int, out_channels, act by name, root_weight, bias).
  static std::unique_ptr<ResGatedGraphConv> fromPyG(const nlohmann::json& args, Generator& gen,
                                                    DType dtype = DType::F32);

  Variable forward(const Variable& x, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t in_, out_;
  nlohmann::json actName_;
  Activation act_;
  bool rootWeight_, bias_;
  DType dtype_;
  std::unique_ptr<Linear> linKey_, linQuery_, linValue_, linSkip_;
  Variable* biasParam_ = nullptr;
};

}  // namespace gnn
