// GatedGraphConv: the gated graph sequence network's propagation (Li et al., ICLR 2016) as PyG 2.3.1's
// GatedGraphConv,
//   h^0 = x padded with zero columns to out_channels,
//   m^l = aggr_{j -> i} h_j^l W_l,  h^{l+1} = GRUCell(m^l, h^l),  l < num_layers,
// aggr "add" (default), "mean", "max", ... over the incoming edges. W_l multiplies from the right (PyG's
// matmul(x, weight[l])). State_dict: "weight" [num_layers, out, out], "rnn.weight_ih", "rnn.weight_hh",
// "rnn.bias_ih", "rnn.bias_hh" (torch's GRUCell). Sum and mean run as one sparse product, cached per graph.
//
//   auto conv = GatedGraphConv::fromPyG({{"out_channels", 32}, {"num_layers", 3}}, gen);
//   Variable h = conv->forward(x, edgeIndex);      // x [N, <= 32] -> [N, 32]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gnn/nn/GRUCell.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class GatedGraphConv : public MessagePassing {
 public:
  GatedGraphConv(int64_t outChannels, int64_t numLayers, Generator& gen, const nlohmann::json& aggr = "add",
                 bool bias = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (out_channels, num_layers, aggr (aggregationFromPyG), bias).
  static std::unique_ptr<GatedGraphConv> fromPyG(const nlohmann::json& args, Generator& gen,
                                                 DType dtype = DType::F32);

  /// x [N, F <= out_channels] -> [N, out_channels].
  Variable forward(const Variable& x, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;

 protected:
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  int64_t out_, layers_;
  bool bias_;
  DType dtype_;
  Variable* weight_;
  std::unique_ptr<GRUCell> rnn_;
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
