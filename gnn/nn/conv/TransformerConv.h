// TransformerConv: the graph transformer operator of Shi et al. (IJCAI 2021, UniMP) as PyG 2.3.1's
// TransformerConv, per head h over the incoming edges e = j -> i,
//   alpha_e = softmax_i((W_q x_i) . (W_k x_j + W_e e_ji) / sqrt(C)),
//   x'_i = concat_h (or mean_h) sum_e alpha_e (W_v x_j + W_e e_ji) + W_skip x_i        (root_weight)
//   with beta: b = sigmoid(w_beta . [x'_i, r_i, x'_i - r_i]), x'_i = b r_i + (1 - b) x'_i, r_i = W_skip x_i,
// heads, concat, beta, dropout (on the attention, in training), edge_dim, bias (lin_skip's), root_weight.
// State_dict: "lin_key", "lin_query", "lin_value" (weight and bias), "lin_edge.weight" (edge_dim),
// "lin_skip.weight" (+ ".bias"), "lin_beta.weight" (beta). The edges are grouped by target once per call; the
// logits, softmax and weighted sum run per group (segment ops: no atomics, the same bits for any thread count).
//
//   auto conv = TransformerConv::fromPyG({{"in_channels", 16}, {"out_channels", 8}, {"heads", 4},
//                                         {"edge_dim", 3}}, gen);
//   Variable h = conv->forward(x, edgeIndex, edgeAttr);     // [N, 16] -> [N, 32]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

struct TransformerConvOptions {
  int64_t heads = 1;
  bool concat = true;
  bool beta = false;
  double dropout = 0.0;
  int64_t edgeDim = 0;  // 0: no edge features
  bool bias = true;
  bool rootWeight = true;
  DType dtype = DType::F32;
};

class TransformerConv : public MessagePassing {
 public:
  TransformerConv(int64_t inChannels, int64_t outChannels, Generator& gen, TransformerConvOptions options = {});
  /// From PyG's keyword arguments (in_channels as an int, out_channels, heads, concat, beta, dropout, edge_dim,
  /// bias, root_weight).
  static std::unique_ptr<TransformerConv> fromPyG(const nlohmann::json& args, Generator& gen,
                                                  DType dtype = DType::F32);

  /// x [N, in], edgeIndex [2, E], edgeAttr [E, edge_dim] (with edge_dim) -> [N, heads * out] or [N, out].
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable());
  std::unique_ptr<Module> clone() const override;

 private:
  /// The attention as a composition of ops, for training with attention dropout (the fused op has none).
  Variable attentionWithDropout(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr);
  int64_t in_, out_;
  TransformerConvOptions opt_;
  std::unique_ptr<Linear> linKey_, linQuery_, linValue_, linEdge_, linSkip_, linBeta_;
};

}  // namespace gnn
