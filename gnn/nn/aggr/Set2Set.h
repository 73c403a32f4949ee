// Set2Set: the order-invariant set readout of Vinyals et al. (ICLR 2016) as PyG 2.3.1's Set2Set,
//   q*_0 = 0;  for t < processing_steps:  q_t = LSTM(q*_{t-1}),  a_e = softmax_i(x_e . q_t[i]),
//   r_t[i] = sum_{e -> i} a_e x_e,  q*_t = [q_t, r_t]          -> [dimSize, 2 in_channels],
// the LSTM (input 2C, hidden C, one layer) carrying its state across the steps. State_dict: "lstm.weight_ih_l0",
// "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0".
//
//   Set2Set readout(64, 3, gen);
//   Variable g = readout.forward(h, batch.batch, batch.numGraphs);     // [numGraphs, 128]
#pragma once
#include <memory>

#include "gnn/nn/LSTM.h"
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class Set2Set : public Aggregation {
 public:
  Set2Set(int64_t inChannels, int64_t processingSteps, Generator& gen, DType dtype = DType::F32);
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "set2set"; }
  nlohmann::json spec() const override;
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t in_, steps_;
  DType dtype_;
  std::unique_ptr<LSTM> lstm_;
};

}  // namespace gnn
