#include "gnn/nn/norm/PyGBatchNorm.h"

#include <algorithm>
#include <cmath>

#include "gnn/nn/PyGArgs.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {

namespace {
int64_t realRows(const Tensor& x, const Tensor& mask) {
  if (!mask.defined()) return x.dim(0);
  GNN_CHECK_ARG(mask.dtype() == DType::U8 && mask.numel() == x.dim(0), "BatchNorm: nodeMask must be uint8 with one ",
                "entry per row of x ", shapeString(x.shape()), ", got ", shapeString(mask.shape()));
  const uint8_t* m = mask.data<uint8_t>();
  return static_cast<int64_t>(std::count_if(m, m + mask.numel(), [](uint8_t v) { return v != 0; }));
}

int64_t checkedChannels(int64_t channels) {
  GNN_CHECK_ARG(channels >= 1, "BatchNorm: in_channels must be >= 1, got ", channels);
  return channels;
}
}  // namespace

PyGBatchNorm::BatchNorm1d::BatchNorm1d(int64_t channels, const PyGBatchNormOptions& o)
    : channels_(channels), opt_(o) {
  // torch.nn.BatchNorm1d's registration order: weight, bias, running_mean, running_var, num_batches_tracked.
  if (o.affine) {
    weight = &registerParameter("weight", Tensor::full({channels}, 1.0, o.dtype));
    bias = &registerParameter("bias", Tensor({channels}, o.dtype));
  }
  if (o.trackRunningStats) {
    runningMean = &registerBuffer("running_mean", Tensor({channels}, o.dtype));
    runningVar = &registerBuffer("running_var", Tensor::full({channels}, 1.0, o.dtype));
    numBatchesTracked = &registerBuffer("num_batches_tracked", Tensor({}, DType::I64));
  }
}

std::unique_ptr<Module> PyGBatchNorm::BatchNorm1d::clone() const {
  return cloneInto(std::make_unique<BatchNorm1d>(channels_, opt_));
}

PyGBatchNorm::PyGBatchNorm(int64_t channels, PyGBatchNormOptions options)
    : channels_(checkedChannels(channels)), opt_(options), module_(channels_, options) {
  GNN_CHECK_ARG(opt_.eps > 0, "BatchNorm: eps must be > 0, got ", opt_.eps);
  GNN_CHECK_ARG(!opt_.momentum || (*opt_.momentum >= 0 && *opt_.momentum <= 1), "BatchNorm: momentum must be in ",
                "[0, 1] or None, got ", opt_.momentum.value_or(0));
  // PyG's own check, with its wording.
  GNN_CHECK_ARG(!opt_.allowSingleElement || opt_.trackRunningStats,
                "BatchNorm: 'allow_single_element' requires 'track_running_stats' to be set to `True`");
  registerModule("module", module_);
  if (!opt_.affine) {
    ones_ = Variable(Tensor::full({channels}, 1.0, opt_.dtype));
    zeros_ = Variable(Tensor({channels}, opt_.dtype));
  }
}

std::unique_ptr<PyGBatchNorm> PyGBatchNorm::fromPyG(const nlohmann::json& args, DType dtype) {
  const PyGArgs a(args, "BatchNorm", {{"in_channels", nullptr}, {"eps", 1e-5}, {"momentum", 0.1}, {"affine", true},
                                      {"track_running_stats", true}, {"allow_single_element", false}});
  PyGBatchNormOptions o = optionsFromPyG(a.all(), dtype);
  o.allowSingleElement = a.get<bool>("allow_single_element");
  return std::make_unique<PyGBatchNorm>(a.get<int64_t>("in_channels"), o);
}

PyGBatchNormOptions PyGBatchNorm::optionsFromPyG(const nlohmann::json& args, DType dtype) {
  PyGBatchNormOptions o;
  o.eps = args.value("eps", o.eps);
  const nlohmann::json momentum = args.value("momentum", nlohmann::json(0.1));
  if (momentum.is_null()) o.momentum = std::nullopt;
  else o.momentum = momentum.get<double>();
  o.affine = args.value("affine", o.affine);
  o.trackRunningStats = args.value("track_running_stats", o.trackRunningStats);
  o.dtype = dtype;
  return o;
}

std::unique_ptr<Module> PyGBatchNorm::clone() const {
  return cloneInto(std::make_unique<PyGBatchNorm>(channels_, opt_));
}

int64_t PyGBatchNorm::numBatchesTracked() const {
  return module_.numBatchesTracked ? module_.numBatchesTracked->value().data<int64_t>()[0] : 0;
}

Variable PyGBatchNorm::forward(const Variable& x, const NormBatch& b) {
  const Variable& w = opt_.affine ? *module_.weight : ones_;
  const Variable& bias = opt_.affine ? *module_.bias : zeros_;
  const int64_t n = realRows(x.value(), b.nodeMask);
  if (opt_.allowSingleElement && n <= 1)
    return batchNormInference(x, module_.runningMean->value(), module_.runningVar->value(), w, bias, opt_.eps);
  // torch.nn.BatchNorm1d: batch statistics in training, and always without running statistics.
  if (opt_.trackRunningStats && !isTraining())
    return batchNormInference(x, module_.runningMean->value(), module_.runningVar->value(), w, bias, opt_.eps);
  // torch refuses batch statistics of one row (in evaluation too when there are no running statistics).
  GNN_CHECK_ARG(n != 1, "BatchNorm: Expected more than 1 value per channel when training, got 1 real row of ",
                x.dim(1), " channels (torch's error; allow_single_element=True uses the running statistics for such "
                "batches)");
  Tensor mean, var;
  Variable y = maskedBatchNorm(x, b.nodeMask, w, bias, opt_.eps, &mean, &var);
  if (isTraining() && opt_.trackRunningStats) updateRunningStats(mean, var, n);
  return y;
}

void PyGBatchNorm::updateRunningStats(const Tensor& batchMean, const Tensor& batchVar, int64_t n) {
  // A recomputed forward (pipelined training) saw this batch already: it was counted once.
  if (n == 0 || ExecutionContext::current().recomputing()) return;
  Tensor& counter = module_.numBatchesTracked->value();
  GNN_CHECK_ARG(counter.dtype() == DType::I64 && counter.numel() == 1, "BatchNorm: module.num_batches_tracked must ",
                "be an int64 scalar (torch's buffer), got ", dtypeName(counter.dtype()), " ",
                shapeString(counter.shape()), ": load a state_dict's entry with its dtype");
  int64_t& tracked = counter.data<int64_t>()[0];
  ++tracked;
  const double factor = opt_.momentum ? *opt_.momentum : 1.0 / static_cast<double>(tracked);
  // In place: the Variables that share these buffers (a trainer's, a checkpoint's) see the new values.
  dispatchFloat(batchMean.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T m = static_cast<T>(factor), keep = static_cast<T>(1.0 - factor);
    const T unbias = n > 1 ? static_cast<T>(static_cast<double>(n) / static_cast<double>(n - 1)) : T(1);
    T* rm = module_.runningMean->value().data<T>();
    T* rv = module_.runningVar->value().data<T>();
    const T* bm = batchMean.data<T>();
    const T* bv = batchVar.data<T>();
    // As gnn::BatchNorm: a batch whose statistics are not finite leaves the averages as they were.
    for (int64_t j = 0; j < batchMean.numel(); ++j)
      if (!std::isfinite(static_cast<double>(bm[j])) || !std::isfinite(static_cast<double>(bv[j]))) return 0;
    for (int64_t j = 0; j < batchMean.numel(); ++j) {
      rm[j] = keep * rm[j] + m * bm[j];
      rv[j] = keep * rv[j] + m * (bv[j] * unbias);
    }
    return 0;
  });
}

}  // namespace gnn
