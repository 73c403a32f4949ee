#include "gnn/nn/LSTM.h"

#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {

LSTM::LSTM(int64_t inputSize, int64_t hiddenSize, Generator& gen, LSTMOptions options, DType dtype)
    : in_(inputSize), hidden_(hiddenSize), opt_(options) {
  GNN_CHECK_ARG(inputSize > 0 && hiddenSize > 0, "LSTM: input_size and hidden_size must be positive, got ",
                inputSize, " and ", hiddenSize);
  const int64_t G = 4 * hiddenSize;
  // torch's order: weight_ih, weight_hh, bias_ih, bias_hh of each direction in turn.
  for (int dir = 0; dir < (opt_.bidirectional ? 2 : 1); ++dir) {
    const std::string sfx = dir == 0 ? "_l0" : "_l0_reverse";
    Direction& d = dirs_[dir];
    d.weightIh = &registerParameter("weight_ih" + sfx, Tensor({G, in_}, dtype));
    d.weightHh = &registerParameter("weight_hh" + sfx, Tensor({G, hidden_}, dtype));
    if (opt_.bias) {
      d.biasIh = &registerParameter("bias_ih" + sfx, Tensor({G}, dtype));
      d.biasHh = &registerParameter("bias_hh" + sfx, Tensor({G}, dtype));
    }
  }
  resetParameters(gen);
}

void LSTM::resetParameters(Generator& gen) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_));
  for (int dir = 0; dir < (opt_.bidirectional ? 2 : 1); ++dir)
    for (Variable* p : {dirs_[dir].weightIh, dirs_[dir].weightHh, dirs_[dir].biasIh, dirs_[dir].biasHh})
      if (p) p->value() = init::uniform(p->shape(), -bound, bound, gen, p->dtype());
}

std::unique_ptr<Module> LSTM::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<LSTM>(in_, hidden_, unused, opt_, dirs_[0].weightIh->dtype()));
}

Variable LSTM::runDirection(const Variable& x2d, int64_t batch, int64_t steps, const Direction& d,
                            bool reverse) const {
  // The input projection of every step at once (one product), then the recurrence (one fused op).
  Variable gates = linear(x2d, *d.weightIh, d.biasIh ? *d.biasIh : Variable());
  return lstmRecurrence(reshape(gates, {batch, steps, 4 * hidden_}), *d.weightHh,
                        d.biasHh ? *d.biasHh : Variable(), reverse);
}

Variable LSTM::forward(const Variable& input) const {
  GNN_CHECK_ARG(input.value().rank() == 3 && input.dim(2) == in_, "LSTM(", in_, ", ", hidden_,
                "): input has shape ", shapeString(input.shape()), ", expected ",
                opt_.batchFirst ? "[B, T, " : "[T, B, ", in_, "] (unbatched input is not supported)");
  const Variable x = opt_.batchFirst ? input : transpose(input, 0, 1);
  const int64_t B = x.dim(0), T = x.dim(1);
  const Variable x2d = reshape(x, {B * T, in_});
  Variable out = runDirection(x2d, B, T, dirs_[0], false);
  if (opt_.bidirectional) {
    const Variable back = runDirection(x2d, B, T, dirs_[1], true);
    out = reshape(concatCols({reshape(out, {B * T, hidden_}), reshape(back, {B * T, hidden_})}), {B, T, 2 * hidden_});
  }
  return opt_.batchFirst ? out : transpose(out, 0, 1);
}

std::pair<Variable, Variable> LSTM::step(const Variable& x, const Variable& h, const Variable& c) const {
  const Direction& d = dirs_[0];
  const int64_t H = hidden_;
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_ && h.shape() == Shape({x.dim(0), H}) && c.shape() == h.shape(),
                "LSTM::step: x ", shapeString(x.shape()), ", h ", shapeString(h.shape()), ", c ", shapeString(c.shape()),
                " for input ", in_, " and hidden ", H);
  // torch's gate order i, f, g, o over the [B, 4H] sum of the two products.
  const Variable gates = add(linear(x, *d.weightIh, d.biasIh ? *d.biasIh : Variable()),
                             linear(h, *d.weightHh, d.biasHh ? *d.biasHh : Variable()));
  const Variable i = sigmoid(sliceCols(gates, 0, H)), f = sigmoid(sliceCols(gates, H, 2 * H));
  const Variable g = tanh(sliceCols(gates, 2 * H, 3 * H)), o = sigmoid(sliceCols(gates, 3 * H, 4 * H));
  const Variable c2 = add(mul(f, c), mul(i, g));
  return {mul(o, tanh(c2)), c2};
}

}  // namespace gnn
