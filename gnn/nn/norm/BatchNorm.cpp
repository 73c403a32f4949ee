#include "gnn/nn/norm/BatchNorm.h"

#include <algorithm>
#include <cmath>

#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {

BatchNorm::BatchNorm(int64_t features, double eps, double momentum, DType dtype) : eps_(eps), momentum_(momentum) {
  GNN_CHECK_ARG(features >= 1, "BatchNorm: features must be >= 1, got ", features);
  GNN_CHECK_ARG(momentum >= 0 && momentum <= 1, "BatchNorm: momentum must be in [0, 1], got ", momentum);
  gamma_ = &registerParameter("weight", Tensor::full({features}, 1.0, dtype));
  beta_ = &registerParameter("bias", Tensor({features}, dtype));
  mean_ = &registerBuffer("running_mean", Tensor({features}, dtype));
  var_ = &registerBuffer("running_var", Tensor::full({features}, 1.0, dtype));
}

std::unique_ptr<Module> BatchNorm::clone() const {
  return cloneInto(std::make_unique<BatchNorm>(gamma_->dim(0), eps_, momentum_, gamma_->dtype()));
}

Variable BatchNorm::forward(const Variable& x, const Tensor& rowMask) {
  // Frozen (its weight takes no gradient, as a frozen encoder's: app/TransferInit.h): the running statistics, kept
  // as they are, as Keras's trainable = False; the layer then is the function the checkpoint holds.
  if (!isTraining() || !gamma_->requiresGrad())
    return batchNormInference(x, mean_->value(), var_->value(), *gamma_, *beta_, eps_);
  Tensor mean, var;
  Variable y = maskedBatchNorm(x, rowMask, *gamma_, *beta_, eps_, &mean, &var);
  int64_t n = x.dim(0);
  if (rowMask.defined()) {
    const uint8_t* m = rowMask.data<uint8_t>();
    n = static_cast<int64_t>(std::count_if(m, m + rowMask.numel(), [](uint8_t v) { return v != 0; }));
  }
  // A recomputed forward (pipelined training) saw this batch already: its statistics entered the averages once.
  if (n == 0 || ExecutionContext::current().recomputing()) return y;
  // In place: the Variables that share these buffers (the trainer's, a checkpoint's) see the new values.
  dispatchFloat(mean.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T m = static_cast<T>(momentum_), keep = static_cast<T>(1.0 - momentum_);
    const T unbias = n > 1 ? static_cast<T>(static_cast<double>(n) / static_cast<double>(n - 1)) : T(1);
    T* rm = mean_->value().data<T>();
    T* rv = var_->value().data<T>();
    const T* bm = mean.data<T>();
    const T* bv = var.data<T>();
    // A batch whose statistics are not finite (its loss is not either: the trainer stops on it and saves the
    // state before the step) leaves the averages as they were, so that state holds no NaN.
    for (int64_t j = 0; j < mean.numel(); ++j)
      if (!std::isfinite(static_cast<double>(bm[j])) || !std::isfinite(static_cast<double>(bv[j]))) return 0;
    for (int64_t j = 0; j < mean.numel(); ++j) {
      rm[j] = keep * rm[j] + m * bm[j];
      rv[j] = keep * rv[j] + m * (bv[j] * unbias);
    }
    return 0;
  });
  return y;
}

Variable BatchNorm::forwardRelu(const Variable& x, const Tensor& rowMask) { return relu(forward(x, rowMask)); }

}  // namespace gnn
