// PNAConv: the Principal Neighbourhood Aggregation convolution (Corso et al., NeurIPS 2020), as PyG 2.3.1's
// PNAConv with its arguments, defaults and state_dict keys:
//   x'_i = lin(cat over towers t of post_t(cat[x_i, (scalers x aggregators)_{j -> i} pre_t(cat[x_i, x_j, e_ij])]))
// Per tower t (on x's column block t with divide_input, else on all of x): pre_t is Linear((2 or 3) F_in, F_in)
// then (act, Linear(F_in, F_in)) x (pre_layers - 1) on each edge's [x_i, x_j(, edge_encoder(e))]; the messages
// are reduced at their target by DegreeScalerAggregation ("aggr_module": avg_deg_lin, avg_deg_log); post_t is
// Linear((1 + aggregators x scalers) F_in, F_out) then (act, Linear(F_out, F_out)) x (post_layers - 1); F_out =
// out / towers. PNA adds no self-loops: the graph's own are ordinary edges. Keys: "edge_encoder.weight",
// "pre_nns.<t>.<2k>.weight", "post_nns.<t>.<2k>.weight", "lin.weight" (and biases), "aggr_module.avg_deg_lin".
// The first pre layer runs as x W_i^T + b and x W_j^T on the nodes rather than one product over [E, 2 F_in]
// rows: the same sum, a node-sized product instead of an edge-sized one. With one pre layer both come from one
// product x [W_i^T | W_j^T] and pnaAggregatePaired (gnn/ops/PnaAggregate.h) adds them per edge as it
// aggregates, so no [E, F_in] message exists. The scalers
// are applied after post_t's product (x W_x^T + b + sum_s scaler_s * (A W_s^T), scaledBlockSum) instead of
// to the [N, scalers x aggregators x F_in] concatenation: the same sum in another order (last bits only).
//
//   PNAConvOptions o;
//   o.aggregators = {"mean", "min", "max", "std"};
//   o.scalers = {"identity", "amplification", "attenuation"};
//   o.deg = {0, 12, 40, 31, 5};                    // training set's in-degree histogram
//   PNAConv conv(16, 32, o, gen);
//   Variable h = conv.forward(x, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/nn/Activation.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/system/Random.h"

namespace gnn {

/// PyG's keyword arguments (edge_dim 0 = None).
struct PNAConvOptions {
  std::vector<std::string> aggregators;
  std::vector<std::string> scalers;
  std::vector<int64_t> deg;
  int64_t edgeDim = 0;
  int64_t towers = 1;
  int64_t preLayers = 1;
  int64_t postLayers = 1;
  bool divideInput = false;
  nlohmann::json act = "relu";
  nlohmann::json actKwargs = nullptr;
  bool trainNorm = false;
  DType dtype = DType::F32;
};

class PNAConv : public MessagePassing {
 public:
  PNAConv(int64_t inChannels, int64_t outChannels, PNAConvOptions options, Generator& gen);
  /// From PyG's keyword arguments (in_channels, out_channels, aggregators, scalers, deg as a list of counts,
  /// edge_dim, towers, pre_layers, post_layers, divide_input, act, act_kwargs, train_norm); std::invalid_argument
  /// for any other (MessagePassing's aggr, flow, ...), a lazy in_channels (-1) or PyG's failed assertions.
  static std::unique_ptr<PNAConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex int64 [2, E] (row 0 source, row 1 target), edgeAttr [E, edge_dim] exactly when the
  /// layer has edge_dim -> [N, out].
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable());
  std::unique_ptr<Module> clone() const override;
  const PNAConvOptions& options() const { return opt_; }

 private:
  using Mlp = std::vector<std::unique_ptr<Linear>>;
  /// Tower t's pre-MLP on every edge [E, F_in] from the tower's node features xt [N, F_in].
  Variable towerMessages(int64_t t, const Variable& xt, const Tensor& src, const Tensor& dst,
                         const Variable& encoded) const;
  /// Tower t's aggregators' output [N, aggregators x F_in] (pnaAggregate; the messages made on the fly when
  /// the pre-MLP is one linear layer).
  Variable towerAggregate(int64_t t, const Variable& xt, const Tensor& src, const Tensor& dst, int64_t N,
                          const Variable& encoded) const;
  /// post_t's first layer on cat[x_t, the scaled aggregations], with the scalers' factors (undefined: identity)
  /// applied to its product instead of to the aggregations.
  Variable towerPost(int64_t t, const Variable& xt, const Variable& aggregated,
                     const std::vector<Variable>& factors) const;
  Variable runMlp(const Mlp& mlp, Variable h, size_t from) const;

  int64_t in_, out_, fIn_, fOut_;
  PNAConvOptions opt_;
  Activation act_;
  std::unique_ptr<Linear> edgeEncoder_;
  std::vector<Mlp> pre_, post_;
  std::unique_ptr<Linear> lin_;
};

}  // namespace gnn
