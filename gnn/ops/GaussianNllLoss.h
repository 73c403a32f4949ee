// Mean-variance estimation (Nix and Weigend 1994, "Estimating the mean and variance of the target probability
// distribution", IEEE ICNN; Chemprop v2's MveFFN and MVELoss, chemprop/nn/predictors.py and metrics.py): a
// regression head with two outputs per target, a mean and a raw variance; the variance is softplus(raw) plus
// a small floor, and training minimises the Gaussian negative log-likelihood of the targets.
//
//   Variable out = model.forward(batch);                       // [G, 2T]: T means, then T raw variances
//   Variable loss = gaussianNllLoss(out, scaledTargets, batch.yMask);
//   double v = mveVariance(out.value().matrix<float>()(g, T + t));  // the variance of target t
#pragma once
#include "gnn/autograd/Variable.h"

namespace gnn {

/// Added to softplus(raw) so that the variance, and log(variance), stay finite when softplus underflows
/// (float32's softplus is 0 below a raw value of about -104; Chemprop's MveFFN has no floor and gives -inf).
constexpr double kMveVarianceFloor = 1e-6;

/// softplus(raw) + kMveVarianceFloor, computed stably as max(raw, 0) + log1p(exp(-|raw|)) + floor.
double mveVariance(double raw);

/// Gaussian NLL of a mean-variance head's output `out` [G, 2T] (columns 0..T-1 the means mu, T..2T-1 the raw
/// variances r) against `target` [G, T]: the mean over the counted elements of
/// (mu - y)^2 / (2 v) + log(2 pi v) / 2 with v = mveVariance(r) (Chemprop's MVELoss). `mask` (uint8, 1 =
/// counts) is shaped like target or masks whole rows [G], or undefined (all count); no counted element: 0.
/// Throws std::invalid_argument naming the shapes when out is not [G, 2 * target's columns].
Variable gaussianNllLoss(const Variable& out, const Tensor& target, const Tensor& mask = Tensor());

}  // namespace gnn
