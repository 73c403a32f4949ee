// LSTM: torch.nn.LSTM with one layer, uni- or bidirectional, under torch's parameter names and shapes
// (weight_ih_l0 [4H, in], weight_hh_l0 [4H, H], bias_ih_l0 and bias_hh_l0 [4H], the same with the suffix _reverse
// for the second direction), gate order i, f, g, o, a zero initial state, and torch's default initialisation
// U(-1/sqrt(H), 1/sqrt(H)) for every parameter. forward returns torch's `output` (not (h_n, c_n)).
//
//   LSTMOptions o;
//   o.bidirectional = true;
//   o.batchFirst = true;
//   LSTM lstm(16, 24, gen, o);
//   Variable out = lstm.forward(x);  // x [B, T, 16] -> [B, T, 48]: forward direction, then reverse
#pragma once
#include <utility>

#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

/// torch.nn.LSTM's options beyond the sizes (num_layers 1, dropout 0, proj_size 0 are the only ones here).
struct LSTMOptions {
  bool bias = true;
  /// Input and output [B, T, F] (else torch's default [T, B, F]).
  bool batchFirst = false;
  bool bidirectional = false;
};

class LSTM : public Module {
 public:
  LSTM(int64_t inputSize, int64_t hiddenSize, Generator& gen, LSTMOptions options = {}, DType dtype = DType::F32);
  /// x [B, T, inputSize] (batchFirst) or [T, B, inputSize] -> the hidden states of every step, [.., D H] with
  /// D = 2 when bidirectional (the forward direction's H columns first).
  Variable forward(const Variable& x) const;
  /// One step of the forward direction from a given state (torch's LSTM on a length-1 sequence with (h, c)):
  /// x [B, in], h and c [B, H] -> (h', c'). Set2Set carries its state across steps with it.
  std::pair<Variable, Variable> step(const Variable& x, const Variable& h, const Variable& c) const;
  /// torch's reset_parameters: every parameter U(-1/sqrt(H), 1/sqrt(H)), in registration order.
  void resetParameters(Generator& gen);
  std::unique_ptr<Module> clone() const override;

  int64_t inputSize() const { return in_; }
  int64_t hiddenSize() const { return hidden_; }
  const LSTMOptions& options() const { return opt_; }

 private:
  struct Direction {
    Variable *weightIh = nullptr, *weightHh = nullptr, *biasIh = nullptr, *biasHh = nullptr;
  };
  Variable runDirection(const Variable& x2d, int64_t batch, int64_t steps, const Direction& d, bool reverse) const;

  int64_t in_, hidden_;
  LSTMOptions opt_;
  Direction dirs_[2];
};

}  // namespace gnn
