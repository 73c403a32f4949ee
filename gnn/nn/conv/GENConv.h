// GENConv: the generalised graph convolution of Li et al. (2020, "DeeperGCN") as PyG 2.3.1's GENConv,
//   m_ji = ReLU(x_j + e_ji) + eps,   x'_i = MLP(x_i + aggr_{j -> i} m_ji)   (msg_norm: MessageNorm(x_i, aggr)),
// aggr softmax (default; t, learn_t; "softmax_sg" its semi-gradient form), powermean (p; learn_p refused), or any
// aggregation PyG's `aggr` names; lin_src, lin_edge, lin_aggr_out and lin_dst map widths that differ from
// out_channels (as PyG creates them); the MLP is GENConv's own (Linear, norm, ReLU, dropout per hidden layer;
// hidden width out x expansion; norm batch, layer or none). State_dict as PyG's: "mlp.<i>.*" in torch's
// Sequential numbering, "aggr_module.t", "msg_norm.scale", "lin_src.*", ... bias defaults to False, as in PyG.
//
//   auto conv = GENConv::fromPyG({{"in_channels", 64}, {"out_channels", 64}, {"learn_t", true},
//                                 {"num_layers", 2}, {"norm", "layer"}}, gen);
//   Variable h = conv->forward(x, edgeIndex, edgeAttr);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/nn/norm/MessageNorm.h"
#include "gnn/nn/norm/Normalization.h"

namespace gnn {

class GENConv : public MessagePassing {
 public:
  /// args: PyG's keyword arguments (checked by fromPyG).
  GENConv(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels as an int, out_channels, aggr, t, learn_t, p, learn_p, msg_norm,
  /// learn_msg_scale, norm, num_layers, expansion, eps, bias, edge_dim).
  static std::unique_ptr<GENConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex [2, E], edgeAttr [E, edge_dim] or undefined -> [N, out]; b goes to the MLP's norms.
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable(),
                   const NormBatch& b = {});
  std::unique_ptr<Module> clone() const override;

 protected:
  Variable message(const Variable& xj, const Variable& xi, const Variable& edgeAttr) override;

 private:
  Variable mlp(const Variable& h, const NormBatch& b);

  nlohmann::json args_;
  DType dtype_;
  int64_t in_, out_;
  double eps_;
  std::unique_ptr<Linear> linSrc_, linEdge_, linAggrOut_, linDst_;
  std::unique_ptr<MessageNorm> msgNorm_;
  // GENConv's MLP: its Linears and hidden norms under torch's Sequential indices.
  std::vector<std::unique_ptr<Linear>> lins_;
  std::vector<std::unique_ptr<Normalization>> norms_;
};

}  // namespace gnn
