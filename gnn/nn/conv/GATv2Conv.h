// GATv2Conv: the dynamic graph attention of Brody et al. (ICLR 2022), as PyG 2.3.1's GATv2Conv:
//   x'_i = sum over j in N(i) + {i} of alpha_ij Theta_l x_j (per head; concatenated or averaged) + b,
//   alpha_ij = softmax_j(a . leakyRelu(Theta_l x_j + Theta_r x_i (+ Theta_e e_ij))),
// with PyG's arguments and defaults (heads=1, concat=True, negative_slope=0.2, dropout=0.0, add_self_loops=True,
// edge_dim=None, fill_value="mean", bias=True, share_weights=False) and its parameters named and shaped as
// PyG's named_parameters: "att" [1, heads, out], "bias" [heads * out] ([out] when not concat), "lin_l.weight"
// [heads * out, in], "lin_l.bias" [heads * out] (with bias), "lin_r.weight", "lin_r.bias" (not with
// share_weights: PyG then sets lin_r = lin_l, whose tensors its state_dict lists under both names,
// Module::registerAlias), "lin_edge.weight" [heads * out, edge_dim] (no bias) with edge_dim. Self-loops as
// GATConv's (static edge count); the attention runs fused (gatv2Attention).
//
//   GATv2ConvOptions o;
//   o.heads = 4;
//   o.edgeDim = 3;
//   GATv2Conv conv(64, 16, gen, o);
//   Variable h = conv.forward(x, edgeIndex, edgeAttr);        // edge_attr [E, 3] -> [N, 64]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/nn/conv/SelfLoopFill.h"
#include "gnn/system/Random.h"

namespace gnn {

/// PyG's keyword arguments of GATv2Conv (in_channels an int).
struct GATv2ConvOptions {
  int64_t heads = 1;
  bool concat = true;
  double negativeSlope = 0.2;
  double dropout = 0.0;
  bool addSelfLoops = true;
  /// Width of the edge features (PyG's edge_dim), 0 for None.
  int64_t edgeDim = 0;
  SelfLoopFill fillValue;
  bool bias = true;
  bool shareWeights = false;
  DType dtype = DType::F32;
};

class GATv2Conv : public MessagePassing {
 public:
  GATv2Conv(int64_t inChannels, int64_t outChannels, Generator& gen, GATv2ConvOptions options = {});
  /// From PyG's keyword arguments (in_channels, out_channels, heads, concat, negative_slope, dropout,
  /// add_self_loops, edge_dim, fill_value, bias, share_weights): std::invalid_argument for any other.
  static std::unique_ptr<GATv2Conv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edge_index int64 [2, E], edge_attr [E, edge_dim] (or [E] for edge_dim 1) optional (an error
  /// without edge_dim, as PyG's assertion). -> [N, heads * out] (concat) or [N, out].
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable());
  /// Same with constant sparse input features (bag of words): lin_l and lin_r run as sparse products, the rest
  /// as for dense input (the same map up to rounding).
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable());
  /// Glorot weights and attention vector, PyG Linear's uniform biases, zero output bias.
  void resetParameters(Generator& gen);
  std::unique_ptr<Module> clone() const override;

  const GATv2ConvOptions& options() const { return opt_; }

 private:
  /// Everything after the projections x_l = Theta_l x, x_r = Theta_r x [N, heads * out].
  Variable attend(const Variable& xl, const Variable& xr, const Tensor& edgeIndex, const Variable& edgeAttr);

  int64_t in_, out_;
  GATv2ConvOptions opt_;
  Variable* att_;
  Variable* bias_ = nullptr;
  Linear linL_;
  std::unique_ptr<Linear> linR_, linEdge_;
};

}  // namespace gnn
