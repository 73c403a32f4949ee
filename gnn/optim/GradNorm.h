// Global gradient norm over a set of parameters, and clipping to a maximum norm (torch's clip_grad_norm_):
// every gradient is scaled by maxNorm / (norm + 1e-6) when the norm exceeds maxNorm. The norm is summed in
// double, in pieces fixed by each tensor's length and added in parameter order, so it is the same bits at any
// thread count.
//
//   loss.backward();
//   GradNormResult r = clipGradNorm(model.parameters(), 5.0);   // r.norm before clipping
//   if (!std::isfinite(r.norm)) ... r.firstNonFinite names the parameter
//   opt.step();
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "gnn/autograd/Variable.h"

namespace gnn {

struct GradNormResult {
  double norm = 0;            // L2 norm of all gradients before clipping
  bool clipped = false;
  int64_t firstNonFinite = -1;  // index of the first parameter whose gradient holds NaN/Inf, -1 when none
};

/// Index of the first tensor among the parameters' values that holds NaN or Inf; -1 when all are finite.
int64_t firstNonFiniteValue(const std::vector<Variable>& params);

/// Parameters without a gradient count as zero.
GradNormResult gradNorm(const std::vector<Variable>& params);
/// Scales the gradients in place when their global norm exceeds maxNorm (> 0); a non-finite norm leaves them
/// unchanged (the caller decides what to do with the step).
GradNormResult clipGradNorm(const std::vector<Variable>& params, double maxNorm);

/// The same over gradient tensors (one per parameter, undefined = none), e.g. a device's reduced gradients;
/// clipping replaces a shared tensor by a scaled copy.
GradNormResult gradNorm(const std::vector<Tensor>& grads);
GradNormResult clipGradNorm(std::vector<Tensor>& grads, double maxNorm);

}  // namespace gnn
