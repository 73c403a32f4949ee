// BatchNorm: torch.nn.BatchNorm1d over the real rows of a fixed-size batch. In training, each column is
// normalised with the mean and biased variance of the rows whose mask is 1 (padding rows are normalised with
// the same statistics but never enter them, so padding does not change a real row), and the running averages
// are updated as PyTorch does: running = (1 - momentum) running + momentum batch, with the unbiased variance
// (n / (n - 1)) for running_var. In evaluation, and when frozen (its weight takes no gradient), the running
// averages are used and kept. Parameters "weight" (ones) and
// "bias" (zeros); buffers "running_mean" (zeros) and "running_var" (ones), PyTorch's names, kept in checkpoints.
//
//   BatchNorm bn(300);
//   Variable y = bn.forward(h, batch.nodesMask);            // training: batch statistics over real nodes
//   bn.eval();  Variable z = bn.forward(h, batch.nodesMask); // evaluation: the running statistics
#pragma once
#include "gnn/nn/Module.h"

namespace gnn {

class BatchNorm : public Module {
 public:
  explicit BatchNorm(int64_t features, double eps = 1e-5, double momentum = 0.1, DType dtype = DType::F32);
  /// x [M, F]; rowMask uint8 [M] (1 = a real row; undefined = every row real). In training, updates the running
  /// statistics (unless no row is real).
  Variable forward(const Variable& x, const Tensor& rowMask);
  /// relu(forward(x, rowMask)).
  Variable forwardRelu(const Variable& x, const Tensor& rowMask);
  const Tensor& runningMean() const { return mean_->value(); }
  const Tensor& runningVar() const { return var_->value(); }
  std::unique_ptr<Module> clone() const override;

 private:
  double eps_, momentum_;
  Variable* gamma_;
  Variable* beta_;
  Variable* mean_;
  Variable* var_;
};

}  // namespace gnn
