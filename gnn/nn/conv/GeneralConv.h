// GeneralConv: the general GNN layer of You et al. (NeurIPS 2020, "Design Space for Graph Neural Networks") as PyG
// 2.3.1's GeneralConv: per edge j -> i and head, the message W_msg x_j (+ W_msg_i x_i when not directed_msg)
// (+ W_edge e_ji with in_edge_channels), optionally weighted by attention (additive: a . m; dot_product: the
// reverse message's dot with it / sqrt(C), PyG's scaler rounded to float32 as PyG holds it; then LeakyReLU(0.2)
// and a softmax over i's edges), aggregated by aggr (add by default, any PyG aggregation), averaged over the heads,
// plus W_self x_i (a Linear when skip_linear or the widths differ, else x_i itself), L2-normalised with
// l2_normalize. State_dict: "lin_msg.*", "lin_msg_i.*", "lin_self.*", "lin_edge.*", "att_msg" [1, H, C].
//
//   auto conv = GeneralConv::fromPyG({{"in_channels", 16}, {"out_channels", 32}, {"heads", 2},
//                                     {"attention", true}}, gen);
//   Variable h = conv->forward(x, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class GeneralConv : public MessagePassing {
 public:
  /// args: PyG's keyword arguments (checked by fromPyG).
  GeneralConv(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels as an int, out_channels, in_edge_channels, aggr, skip_linear,
  /// directed_msg, heads, attention, attention_type additive | dot_product, l2_normalize, bias).
  static std::unique_ptr<GeneralConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex [2, E], edgeAttr [E, in_edge_channels] (with in_edge_channels) -> [N, out].
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable());
  std::unique_ptr<Module> clone() const override;

 private:

  nlohmann::json args_;
  DType dtype_;
  int64_t in_, out_, heads_, edgeChannels_;
  bool directed_, attention_, dotProduct_, l2_;
  std::unique_ptr<Linear> linMsg_, linMsgI_, linSelf_, linEdge_;
  Variable* attMsg_ = nullptr;
};

}  // namespace gnn
