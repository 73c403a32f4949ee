// LSTMAggregation: the LSTM aggregation of GraphSAGE (Hamilton et al. 2017) as PyG 2.3.1's LSTMAggregation: each
// destination's messages as a sequence (in index order, the index sorted as PyG asserts), zero-padded to the
// longest one (to_dense_batch), run through torch.nn.LSTM(in_channels, out_channels, batch_first) and the last
// step's output kept -> [dimSize, out]. As in PyG, a shorter sequence also runs over the padding zeros, so a
// destination's result depends on the longest sequence in the call: padding messages that make a longer sequence
// change the others (fixed-size batches whose padding graph is not the largest keep them). State_dict:
// "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0".
//
//   LSTMAggregation aggr(64, 64, gen);
//   Variable h = aggr.forward(messages, sortedDst, numNodes);
#pragma once
#include <memory>

#include "gnn/nn/LSTM.h"
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class LSTMAggregation : public Aggregation {
 public:
  LSTMAggregation(int64_t inChannels, int64_t outChannels, Generator& gen, DType dtype = DType::F32);
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "lstm"; }
  nlohmann::json spec() const override;
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t in_, out_;
  DType dtype_;
  std::unique_ptr<LSTM> lstm_;
};

}  // namespace gnn
