#include "gnn/nn/norm/GraphNorm.h"

#include "gnn/nn/PyGArgs.h"
#include "gnn/ops/Ops.h"

namespace gnn {

GraphNorm::GraphNorm(int64_t channels, double eps, DType dtype) : channels_(channels), eps_(eps) {
  GNN_CHECK_ARG(channels >= 1, "GraphNorm: in_channels must be >= 1, got ", channels);
  GNN_CHECK_ARG(eps >= 0, "GraphNorm: eps must be >= 0, got ", eps);
  weight_ = &registerParameter("weight", Tensor::full({channels}, 1.0, dtype));
  bias_ = &registerParameter("bias", Tensor({channels}, dtype));
  meanScale_ = &registerParameter("mean_scale", Tensor::full({channels}, 1.0, dtype));
}

std::unique_ptr<GraphNorm> GraphNorm::fromPyG(const nlohmann::json& args, DType dtype) {
  const PyGArgs a(args, "GraphNorm", {{"in_channels", nullptr}, {"eps", 1e-5}});
  return std::make_unique<GraphNorm>(a.get<int64_t>("in_channels"), a.get<double>("eps"), dtype);
}

std::unique_ptr<Module> GraphNorm::clone() const {
  return cloneInto(std::make_unique<GraphNorm>(channels_, eps_, weight_->dtype()));
}

Variable GraphNorm::forward(const Variable& x, const NormBatch& b) {
  SegmentNormOptions o;
  o.eps = eps_;
  return segmentNorm(x, normSegments(b, x.dim(0)), b.nodeMask, *meanScale_, *weight_, *bias_, o);
}

}  // namespace gnn
