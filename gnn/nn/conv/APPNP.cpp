#include "gnn/nn/conv/APPNP.h"

#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvArgs.h"

namespace gnn {

APPNP::APPNP(int64_t K, double alpha, double dropout, bool addSelfLoops, bool normalize)
    : MessagePassing("sum"), k_(K), alpha_(alpha), dropout_(dropout), addSelfLoops_(addSelfLoops),
      normalize_(normalize) {
  GNN_CHECK_ARG(k_ >= 0, "APPNP: K = ", k_, " must be >= 0");
  GNN_CHECK_ARG(dropout_ >= 0 && dropout_ < 1, "APPNP: dropout = ", dropout_, " must be in [0, 1)");
}

std::unique_ptr<APPNP> APPNP::fromPyG(const nlohmann::json& args, Generator&, DType) {
  const PyGArgs a(args, "APPNP", {{"K", nullptr}, {"alpha", nullptr}, {"dropout", 0.0}, {"cached", false},
                                  {"add_self_loops", true}, {"normalize", true}});
  (void)a.get<bool>("cached");  // the matrix is cached per graph either way (see the header)
  return std::make_unique<APPNP>(a.get<int64_t>("K"), a.get<double>("alpha"), a.get<double>("dropout"),
                                 a.get<bool>("add_self_loops"), a.get<bool>("normalize"));
}

std::unique_ptr<Module> APPNP::clone() const {
  return cloneInto(std::make_unique<APPNP>(k_, alpha_, dropout_, addSelfLoops_, normalize_));
}

Variable APPNP::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable&, int64_t numNodes) {
  const SparseMatrix a = gcnNormAdjacency(*cache_, edgeIndex, numNodes, normalize_, addSelfLoops_, x.dtype());
  return spmm(isTraining() && dropout_ > 0 ? dropoutValues(a, dropout_) : a, x);
}

Variable APPNP::forward(const Variable& x, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.defined() && x.value().rank() == 2, "APPNP: input must be [N, F], got ",
                x.defined() ? shapeString(x.shape()) : std::string("none"));
  const Variable teleport = scale(x, alpha_);
  Variable h = x;
  for (int64_t k = 0; k < k_; ++k) h = add(scale(propagate(edgeIndex, h, Variable(), x.dim(0)), 1 - alpha_), teleport);
  return h;
}

}  // namespace gnn
