// GRUCell: one step of a gated recurrent unit (Cho et al., 2014) as torch.nn.GRUCell,
//   r = sigmoid(W_ir x + b_ir + W_hr h + b_hr),  z = sigmoid(W_iz x + b_iz + W_hz h + b_hz),
//   n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),  h' = (1 - z) * n + z * h,
// parameters as torch's state_dict: "weight_ih" [3H, in], "weight_hh" [3H, H], "bias_ih" [3H], "bias_hh" [3H]
// (gates in the order r, z, n; biases with bias), all U(-1/sqrt(H), 1/sqrt(H)) at first. GatedGraphConv's update.
//
//   GRUCell cell(32, 32, gen);
//   Variable h2 = cell.forward(m, h);            // [N, 32], [N, 32] -> [N, 32]
#pragma once
#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

class GRUCell : public Module {
 public:
  GRUCell(int64_t inputSize, int64_t hiddenSize, Generator& gen, bool bias = true, DType dtype = DType::F32);
  /// x [N, in], h [N, H] -> [N, H].
  Variable forward(const Variable& x, const Variable& h) const;
  std::unique_ptr<Module> clone() const override;
  int64_t hiddenSize() const { return hidden_; }

 private:
  int64_t in_, hidden_;
  bool bias_;
  DType dtype_;
  Variable *weightIh_, *weightHh_, *biasIh_ = nullptr, *biasHh_ = nullptr;
};

}  // namespace gnn
