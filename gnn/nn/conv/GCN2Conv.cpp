#include "gnn/nn/conv/GCN2Conv.h"

#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

GCN2Conv::GCN2Conv(int64_t channels, double alpha, Generator& gen, double theta, int64_t layer, bool sharedWeights,
                   bool addSelfLoops, bool normalize, DType dtype)
    : MessagePassing("sum"), channels_(channels), alpha_(alpha), theta_(theta), layer_(layer),
      sharedWeights_(sharedWeights), addSelfLoops_(addSelfLoops), normalize_(normalize), dtype_(dtype) {
  GNN_CHECK_ARG(channels_ > 0, "GCN2Conv: channels = ", channels_, " must be positive");
  GNN_CHECK_ARG((theta_ > 0) == (layer_ > 0), "GCN2Conv: give theta and layer together (or neither), got theta = ",
                theta_, ", layer = ", layer_);
  if (layer_ > 0) beta_ = std::log(theta_ / static_cast<double>(layer_) + 1);
  weight1_ = &registerParameter("weight1", init::glorotUniform({channels_, channels_}, channels_, channels_, gen,
                                                               dtype_));
  if (!sharedWeights_)
    weight2_ = &registerParameter("weight2", init::glorotUniform({channels_, channels_}, channels_, channels_, gen,
                                                                 dtype_));
}

std::unique_ptr<GCN2Conv> GCN2Conv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "GCN2Conv", {{"channels", nullptr}, {"alpha", nullptr}, {"theta", nullptr},
                                     {"layer", nullptr}, {"shared_weights", true}, {"cached", false},
                                     {"add_self_loops", true}, {"normalize", true}});
  if (a.has("theta") != a.has("layer")) throw a.invalidValue("theta", a.at("theta"), "give theta and layer together");
  (void)a.get<bool>("cached");  // the adjacency is cached per graph either way
  return std::make_unique<GCN2Conv>(a.get<int64_t>("channels"), a.get<double>("alpha"), gen,
                                    a.has("theta") ? a.get<double>("theta") : 0.0,
                                    a.has("layer") ? a.get<int64_t>("layer") : 0, a.get<bool>("shared_weights"),
                                    a.get<bool>("add_self_loops"), a.get<bool>("normalize"), dtype);
}

std::unique_ptr<Module> GCN2Conv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GCN2Conv>(channels_, alpha_, unused, theta_, layer_, sharedWeights_,
                                              addSelfLoops_, normalize_, dtype_));
}

Variable GCN2Conv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&,
                                       int64_t numNodes) {
  return spmm(gcnNormAdjacency(*cache_, edgeIndex, numNodes, normalize_, addSelfLoops_, x.dtype()), x);
}

Variable GCN2Conv::forward(const Variable& x, const Variable& x0, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.defined() && x.value().rank() == 2 && x.dim(1) == channels_, "GCN2Conv(", channels_,
                "): input has shape ", x.defined() ? shapeString(x.shape()) : std::string("none"));
  GNN_CHECK_ARG(x0.defined() && x0.value().rank() == 2 && x0.dim(1) == channels_ && x0.dim(0) >= x.dim(0),
                "GCN2Conv: x_0 must be [>= ", x.dim(0), ", ", channels_, "], got ",
                x0.defined() ? shapeString(x0.shape()) : std::string("none"));
  const int64_t n = x.dim(0);
  const Variable h = scale(propagate(edgeIndex, x, Variable(), n), 1 - alpha_);
  const Variable h0 = scale(sliceRows(x0, 0, n), alpha_);
  auto mix = [&](const Variable& v, const Variable& w) { return add(scale(v, 1 - beta_), scale(matmul(v, w), beta_)); };
  if (sharedWeights_) return mix(add(h, h0), *weight1_);
  return add(mix(h, *weight1_), mix(h0, *weight2_));
}

}  // namespace gnn
