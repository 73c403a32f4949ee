// AttentionalAggregation: the soft attention readout of Li et al. (ICLR 2016, gated graph sequence networks) as
// PyG 2.3.1's AttentionalAggregation (the former GlobalAttention),
//   out_i = sum_{e -> i} softmax_i(gate_nn(x_e)) * nn(x_e),
// gate_nn a PyG MLP to 1 channel (one weight per message) or to nn's width (one per channel), nn an MLP or none
// (the messages themselves). State_dict: "gate_nn.*", "nn.*". Over a batch's nodes with index = the batch vector
// it is a graph readout.
//
//   auto readout = aggregationFromPyG({{"class", "AttentionalAggregation"},
//                                      {"args", {{"gate_nn", mlpSpec({64, 1})}}}}, gen);
//   Variable g = readout->forward(h, batch.batch, batch.numGraphs);
#pragma once
#include <memory>

#include "gnn/nn/aggr/Aggregation.h"
#include "gnn/nn/models/MLP.h"

namespace gnn {

class AttentionalAggregation : public Aggregation {
 public:
  /// gateNn, nn: PyG MLP specs ({"class": "MLP", "args": {...}}); nn may be null (the messages themselves).
  AttentionalAggregation(const nlohmann::json& gateNn, const nlohmann::json& nn, Generator& gen,
                         DType dtype = DType::F32);
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "attentional"; }
  nlohmann::json spec() const override;
  std::unique_ptr<Module> clone() const override;

 private:
  nlohmann::json gateSpec_, nnSpec_;
  DType dtype_;
  std::unique_ptr<MLP> gateNn_, nn_;
};

}  // namespace gnn
