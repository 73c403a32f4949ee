#include "gnn/nn/norm/InstanceNorm.h"

#include <algorithm>
#include <cmath>

#include "gnn/nn/PyGArgs.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {

InstanceNorm::InstanceNorm(int64_t channels, InstanceNormOptions options) : channels_(channels), opt_(options) {
  GNN_CHECK_ARG(channels >= 1, "InstanceNorm: in_channels must be >= 1, got ", channels);
  GNN_CHECK_ARG(opt_.eps > 0, "InstanceNorm: eps must be > 0, got ", opt_.eps);
  GNN_CHECK_ARG(opt_.momentum >= 0 && opt_.momentum <= 1, "InstanceNorm: momentum must be in [0, 1], got ",
                opt_.momentum);
  // torch's _NormBase order: weight, bias, running_mean, running_var, num_batches_tracked.
  if (opt_.affine) {
    weight_ = &registerParameter("weight", Tensor::full({channels}, 1.0, opt_.dtype));
    bias_ = &registerParameter("bias", Tensor({channels}, opt_.dtype));
  }
  if (opt_.trackRunningStats) {
    runningMean_ = &registerBuffer("running_mean", Tensor({channels}, opt_.dtype));
    runningVar_ = &registerBuffer("running_var", Tensor::full({channels}, 1.0, opt_.dtype));
    registerBuffer("num_batches_tracked", Tensor({}, DType::I64));
  }
}

std::unique_ptr<InstanceNorm> InstanceNorm::fromPyG(const nlohmann::json& args, DType dtype) {
  const PyGArgs a(args, "InstanceNorm", {{"in_channels", nullptr}, {"eps", 1e-5}, {"momentum", 0.1},
                                         {"affine", false}, {"track_running_stats", false}});
  InstanceNormOptions o;
  o.eps = a.get<double>("eps");
  o.affine = a.get<bool>("affine");
  o.trackRunningStats = a.get<bool>("track_running_stats");
  if (a.has("momentum")) o.momentum = a.get<double>("momentum");
  else if (o.trackRunningStats) throw a.invalidValue("momentum", nullptr, "needs a value with track_running_stats");
  o.dtype = dtype;
  return std::make_unique<InstanceNorm>(a.get<int64_t>("in_channels"), o);
}

std::unique_ptr<Module> InstanceNorm::clone() const {
  return cloneInto(std::make_unique<InstanceNorm>(channels_, opt_));
}

Variable InstanceNorm::forward(const Variable& x, const NormBatch& b) {
  const Variable w = opt_.affine ? *weight_ : Variable(), bias = opt_.affine ? *bias_ : Variable();
  if (opt_.trackRunningStats && !isTraining()) {
    const Variable one(Tensor::full({channels_}, 1.0, x.dtype())), zero(Tensor({channels_}, x.dtype()));
    return batchNormInference(x, runningMean_->value(), runningVar_->value(), opt_.affine ? w : one,
                              opt_.affine ? bias : zero, opt_.eps);
  }
  SegmentNormOptions o;
  o.eps = opt_.eps;
  const Tensor ptr = normSegments(b, x.dim(0));
  Tensor mean, var;
  const bool track = opt_.trackRunningStats && isTraining();
  Variable y = segmentNorm(x, ptr, b.nodeMask, Variable(), w, bias, o, track ? &mean : nullptr,
                           track ? &var : nullptr);
  if (track) updateRunningStats(mean, var, ptr, b);
  return y;
}

// PyG: running = (1 - momentum) running + momentum * the average over graphs 0..max(batch) of their means (and
// unbiased variances, sum / max(n - 1, 1)). Here max(batch) is over the real rows: padding graphs come last and
// do not count.
void InstanceNorm::updateRunningStats(const Tensor& mean, const Tensor& var, const Tensor& ptr, const NormBatch& b) {
  if (ExecutionContext::current().recomputing()) return;
  const int64_t S = ptr.numel() - 1, F = channels_;
  const int64_t* p = ptr.data<int64_t>();
  const uint8_t* keep = b.nodeMask.defined() ? b.nodeMask.data<uint8_t>() : nullptr;
  std::vector<int64_t> n(static_cast<size_t>(S), 0);
  int64_t graphs = 0;
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t i = p[s]; i < p[s + 1]; ++i) n[s] += !keep || keep[i];
    if (n[s] > 0) graphs = s + 1;
  }
  if (graphs == 0) return;
  dispatchFloat(mean.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* m = mean.data<T>();
    const T* v = var.data<T>();
    std::vector<T> bm(static_cast<size_t>(F), T(0)), bv(static_cast<size_t>(F), T(0));
    for (int64_t s = 0; s < graphs; ++s) {
      const T unbias = static_cast<T>(std::max<int64_t>(n[s], 1)) / static_cast<T>(std::max<int64_t>(n[s] - 1, 1));
      for (int64_t j = 0; j < F; ++j) {
        bm[j] += m[s * F + j];
        bv[j] += v[s * F + j] * unbias;
      }
    }
    // As the batch norms: statistics that are not finite leave the averages as they were.
    for (int64_t j = 0; j < F; ++j)
      if (!std::isfinite(static_cast<double>(bm[j])) || !std::isfinite(static_cast<double>(bv[j]))) return 0;
    const T mom = static_cast<T>(opt_.momentum), keepOld = static_cast<T>(1.0 - opt_.momentum);
    const T count = static_cast<T>(graphs);
    T* rm = runningMean_->value().data<T>();
    T* rv = runningVar_->value().data<T>();
    for (int64_t j = 0; j < F; ++j) {
      rm[j] = keepOld * rm[j] + mom * (bm[j] / count);
      rv[j] = keepOld * rv[j] + mom * (bv[j] / count);
    }
    return 0;
  });
}

}  // namespace gnn
