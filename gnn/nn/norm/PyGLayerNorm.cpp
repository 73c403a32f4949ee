#include "gnn/nn/norm/PyGLayerNorm.h"

#include "gnn/nn/PyGArgs.h"
#include "gnn/ops/Ops.h"

namespace gnn {

PyGLayerNorm::PyGLayerNorm(int64_t channels, double eps, bool affine, std::string mode, DType dtype)
    : channels_(channels), eps_(eps), affine_(affine), mode_(std::move(mode)), dtype_(dtype) {
  GNN_CHECK_ARG(channels >= 1, "LayerNorm: in_channels must be >= 1, got ", channels);
  GNN_CHECK_ARG(eps >= 0, "LayerNorm: eps must be >= 0, got ", eps);
  // PyG raises at the first forward ("Unknow normalization mode"); here at construction.
  GNN_CHECK_ARG(mode_ == "graph" || mode_ == "node", "LayerNorm: mode must be \"graph\" or \"node\", got \"", mode_,
                "\"");
  GNN_CHECK_ARG(mode_ == "graph" || eps > 0, "LayerNorm: eps must be > 0 in mode \"node\"");
  if (affine) {
    weight_ = &registerParameter("weight", Tensor::full({channels}, 1.0, dtype));
    bias_ = &registerParameter("bias", Tensor({channels}, dtype));
  }
}

std::unique_ptr<PyGLayerNorm> PyGLayerNorm::fromPyG(const nlohmann::json& args, DType dtype) {
  const PyGArgs a(args, "LayerNorm", {{"in_channels", nullptr}, {"eps", 1e-5}, {"affine", true}, {"mode", "graph"}});
  return std::make_unique<PyGLayerNorm>(a.get<int64_t>("in_channels"), a.get<double>("eps"), a.get<bool>("affine"),
                                        a.get<std::string>("mode"), dtype);
}

std::unique_ptr<Module> PyGLayerNorm::clone() const {
  return cloneInto(std::make_unique<PyGLayerNorm>(channels_, eps_, affine_, mode_, dtype_));
}

Variable PyGLayerNorm::forward(const Variable& x, const NormBatch& b) {
  const Variable w = affine_ ? *weight_ : Variable(), bias = affine_ ? *bias_ : Variable();
  if (mode_ == "node") {
    // Each row alone: padding rows touch nothing real. layerNorm takes an affine map: ones and zeros without one.
    if (affine_) return layerNorm(x, w, bias, eps_);
    return layerNorm(x, Variable(Tensor::full({channels_}, 1.0, x.dtype())), Variable(Tensor({channels_}, x.dtype())),
                     eps_);
  }
  SegmentNormOptions o;
  o.wholeSegment = true;
  o.epsOnStd = !b.batch.defined();  // PyG's batch=None branch: x / (x.std(unbiased=False) + eps)
  o.eps = eps_;
  return segmentNorm(x, normSegments(b, x.dim(0)), b.nodeMask, Variable(), w, bias, o);
}

}  // namespace gnn
