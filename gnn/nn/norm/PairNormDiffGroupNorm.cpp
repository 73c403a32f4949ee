// PairNorm and DiffGroupNorm: PyG's norms against over-smoothing.
#include <string>

#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/norm/DiffGroupNorm.h"
#include "gnn/nn/norm/PairNorm.h"
#include "gnn/ops/Ops.h"

namespace gnn {

namespace {
// Per graph (normSegments), the mean of x's real rows gathered back to every row: [N, F]. The real rows weigh 1,
// padding rows 0 (mask [N, 1]).
Variable graphMeanPerRow(const Variable& x, const Tensor& ptr, const Tensor& mask, const Tensor& owner) {
  // One path with or without padding rows (their weight 0, the real rows' 1), so that padding changes no bit.
  const Variable m(mask);
  const Variable sums = segmentSum(mul(x, m), ptr);
  const Tensor counts = segmentSum(m, ptr).value();  // [G, 1]
  Tensor inv = Tensor::empty(counts.shape(), counts.dtype());
  dispatchFloat(counts.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    for (int64_t g = 0; g < counts.numel(); ++g) {
      const T c = counts.data<T>()[g];
      inv.data<T>()[g] = c > 0 ? T(1) / c : T(0);
    }
  });
  return gatherRows(mul(sums, Variable(inv)), owner);
}

// Each row's graph (the batch vector, or all 0) and the real-row mask as an [N, 1] float column (ones without one).
std::pair<Tensor, Tensor> ownersAndMask(const NormBatch& b, int64_t rows, DType dtype) {
  Tensor owner = b.batch.defined() ? b.batch : Tensor::zeros({rows}, DType::I64);
  Tensor mask = Tensor::full({rows, 1}, 1.0, dtype);
  if (b.nodeMask.defined()) {
    GNN_CHECK_ARG(b.nodeMask.dtype() == DType::U8 && b.nodeMask.numel() == rows, "PairNorm: nodeMask must be uint8 [",
                  rows, "]");
    mask = b.nodeMask.to(dtype).reshape({rows, 1});
  }
  return {owner, mask};
}
}  // namespace

PairNorm::PairNorm(double scale, bool scaleIndividually, double eps)
    : scale_(scale), individually_(scaleIndividually), eps_(eps) {}

std::unique_ptr<PairNorm> PairNorm::fromPyG(const nlohmann::json& args) {
  nlohmann::json a = args;
  // normalization_resolver(norm, channels) hands the width to PairNorm's first parameter, its scale.
  if (a.contains("in_channels")) {
    if (!a.contains("scale")) a["scale"] = a["in_channels"];
    a.erase("in_channels");
  }
  const PyGArgs p(a, "PairNorm", {{"scale", 1.0}, {"scale_individually", false}, {"eps", 1e-5}});
  return std::make_unique<PairNorm>(p.get<double>("scale"), p.get<bool>("scale_individually"), p.get<double>("eps"));
}

std::unique_ptr<Module> PairNorm::clone() const { return std::make_unique<PairNorm>(scale_, individually_, eps_); }

Variable PairNorm::forward(const Variable& x, const NormBatch& b) {
  GNN_CHECK_ARG(x.value().rank() == 2, "PairNorm: input must be [N, F], got ", shapeString(x.shape()));
  const int64_t n = x.dim(0);
  const Tensor ptr = normSegments(b, n);
  const auto [owner, mask] = ownersAndMask(b, n, x.dtype());
  const Variable centred = sub(x, graphMeanPerRow(x, ptr, mask, owner));
  const Variable sq = sumAxis(mul(centred, centred), 1, /*keepDim=*/true);  // [N, 1]
  const Tensor epsColumn = Tensor::full({n, 1}, eps_, x.dtype());
  if (individually_) {
    // eps + ||row||, per row (PyG adds eps outside the root here).
    return scale(mul(centred, reciprocal(add(sqrt(sq), Variable(epsColumn)))), scale_);
  }
  const Variable meanSq = graphMeanPerRow(sq, ptr, mask, owner);
  return scale(mul(centred, reciprocal(sqrt(add(meanSq, Variable(epsColumn))))), scale_);
}

DiffGroupNorm::DiffGroupNorm(int64_t channels, int64_t groups, Generator& gen, double lamda, PyGBatchNormOptions bn)
    : channels_(channels), groups_(groups), lamda_(lamda), bnOptions_(bn) {
  GNN_CHECK_ARG(channels_ >= 1 && groups_ >= 1, "DiffGroupNorm: in_channels = ", channels_, ", groups = ", groups_);
  lin_ = std::make_unique<Linear>(channels_, groups_, gen, false, bn.dtype);
  registerModule("lin", *lin_);
  bn_ = std::make_unique<PyGBatchNorm>(groups_ * channels_, bn);
  registerModule("norm", bn_->module());
}

std::unique_ptr<DiffGroupNorm> DiffGroupNorm::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "DiffGroupNorm", {{"in_channels", nullptr}, {"groups", nullptr}, {"lamda", 0.01},
                                          {"eps", 1e-5}, {"momentum", 0.1}, {"affine", true},
                                          {"track_running_stats", true}});
  return std::make_unique<DiffGroupNorm>(a.get<int64_t>("in_channels"), a.get<int64_t>("groups"), gen,
                                         a.get<double>("lamda"), PyGBatchNorm::optionsFromPyG(a.all(), dtype));
}

std::unique_ptr<Module> DiffGroupNorm::clone() const {
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<DiffGroupNorm>(channels_, groups_, unused, lamda_, bnOptions_));
}

Variable DiffGroupNorm::forward(const Variable& x, const NormBatch& b) {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == channels_, "DiffGroupNorm(", channels_, "): input has shape ",
                shapeString(x.shape()));
  const int64_t F = channels_, G = groups_;
  const Variable s = softmax(lin_->forward(x), -1);  // [N, G]
  std::vector<Variable> copies;
  for (int64_t g = 0; g < G; ++g) copies.push_back(mul(x, sliceCols(s, g, g + 1)));
  bn_->train(isTraining());  // (bn_ is not a registered child: its BatchNorm1d is, as "norm")
  const Variable normed = bn_->forward(G == 1 ? copies[0] : concatCols(copies), b);
  Variable sum = sliceCols(normed, 0, F);
  for (int64_t g = 1; g < G; ++g) sum = add(sum, sliceCols(normed, g * F, (g + 1) * F));
  return add(x, scale(sum, lamda_));
}

}  // namespace gnn
