#include "gnn/nn/pool/TopKPooling.h"

#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvRegistry.h"
#include "gnn/ops/Ops.h"

namespace gnn {

namespace {
void refuseMinScore(const PyGArgs& a) {
  if (a.has("min_score")) throw a.invalidValue("min_score", a.at("min_score"), "only ratio selection is offered");
}
}  // namespace

TopKPooling::TopKPooling(const nlohmann::json& args, Generator& gen, DType dtype) : args_(args), dtype_(dtype) {
  const PyGArgs a(args, "TopKPooling", {{"in_channels", nullptr}, {"ratio", 0.5}, {"min_score", nullptr},
                                        {"multiplier", 1.0}, {"nonlinearity", "tanh"}});
  refuseMinScore(a);
  in_ = a.get<int64_t>("in_channels");
  ratio_ = a.get<double>("ratio");
  multiplier_ = a.get<double>("multiplier");
  act_ = activationFromPyG(a.at("nonlinearity"));
  // PyG's uniform(in_channels, weight): U(-1/sqrt(in), 1/sqrt(in)).
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_));
  weight_ = &registerParameter("weight", init::uniform({1, in_}, -bound, bound, gen, dtype_));
}

std::unique_ptr<TopKPooling> TopKPooling::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  return std::make_unique<TopKPooling>(args, gen, dtype);
}

std::unique_ptr<Module> TopKPooling::clone() const {
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<TopKPooling>(args_, unused, dtype_));
}

PooledGraph TopKPooling::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr,
                                 const Tensor& batch, int64_t numGraphs, bool fixedSize, const Tensor& realNodes) {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_, "TopKPooling(", in_, "): input ", shapeString(x.shape()));
  // (x w^T) / ||w||, then the nonlinearity.
  const Variable norm = sqrt(sum(mul(*weight_, *weight_)));
  const Variable raw = reshape(matmulNT(x, *weight_), {x.dim(0)});
  const Variable score = act_(scaleByScalar(raw, reciprocal(reshape(norm, {1}))));
  return topKSelect(x, score, edgeIndex, edgeAttr, batch, numGraphs, ratio_, multiplier_, fixedSize, realNodes);
}

SAGPooling::SAGPooling(const nlohmann::json& args, Generator& gen, DType dtype) : args_(args), dtype_(dtype) {
  nlohmann::json gnnArgs = nlohmann::json::object(), own = nlohmann::json::object();
  for (const auto& [k, v] : args.items()) {
    if (k == "in_channels" || k == "ratio" || k == "GNN" || k == "min_score" || k == "multiplier" ||
        k == "nonlinearity")
      own[k] = v;
    else
      gnnArgs[k] = v;  // PyG passes the rest to the GNN
  }
  const PyGArgs a(own, "SAGPooling", {{"in_channels", nullptr}, {"ratio", 0.5}, {"GNN", "GraphConv"},
                                      {"min_score", nullptr}, {"multiplier", 1.0}, {"nonlinearity", "tanh"}});
  refuseMinScore(a);
  ratio_ = a.get<double>("ratio");
  multiplier_ = a.get<double>("multiplier");
  gnnClass_ = a.get<std::string>("GNN");
  act_ = activationFromPyG(a.at("nonlinearity"));
  gnnArgs["in_channels"] = a.get<int64_t>("in_channels");
  gnnArgs["out_channels"] = 1;
  gnn_ = convFromPyG(gnnClass_, gnnArgs, gen, dtype_);
  registerModule("gnn", *gnn_);
}

std::unique_ptr<SAGPooling> SAGPooling::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  return std::make_unique<SAGPooling>(args, gen, dtype);
}

std::unique_ptr<Module> SAGPooling::clone() const {
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<SAGPooling>(args_, unused, dtype_));
}

PooledGraph SAGPooling::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr,
                                const Tensor& batch, int64_t numGraphs, bool fixedSize, const Tensor& realNodes) {
  ConvInputs in;
  in.x = x;
  in.edgeIndex = edgeIndex;
  const Variable score = act_(reshape(convForward(gnnClass_, *gnn_, in), {x.dim(0)}));
  return topKSelect(x, score, edgeIndex, edgeAttr, batch, numGraphs, ratio_, multiplier_, fixedSize, realNodes);
}

}  // namespace gnn
