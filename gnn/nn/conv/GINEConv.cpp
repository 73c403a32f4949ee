#include "gnn/nn/conv/GINEConv.h"

#include "gnn/nn/PyGArgs.h"

namespace gnn {

GINEConv::GINEConv(std::unique_ptr<MLP> nn, Generator& gen, double eps, bool trainEps, int64_t edgeDim)
    : MessagePassing("sum"), nn_(std::move(nn)), initialEps_(eps), trainEps_(trainEps), edgeDim_(edgeDim) {
  GNN_CHECK_ARG(nn_ != nullptr, "GINEConv: no nn given");
  GNN_CHECK_ARG(edgeDim_ >= 0, "GINEConv: edge_dim = ", edgeDim_);
  const DType dtype = nn_->options().dtype;
  registerModule("nn", *nn_);
  // PyG's order: nn, then eps (a Parameter with train_eps, else a buffer; "eps" [1] in the state_dict either way),
  // then lin.
  const Tensor value = Tensor::full({1}, eps, dtype);
  eps_ = trainEps_ ? &registerParameter("eps", value) : &registerBuffer("eps", value);
  if (edgeDim_ > 0) {
    lin_ = std::make_unique<Linear>(edgeDim_, nn_->inChannels(), gen, /*bias=*/true, dtype);
    registerModule("lin", *lin_);
  }
}

std::unique_ptr<GINEConv> GINEConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "GINEConv", {{"nn", nullptr}, {"eps", 0.0}, {"train_eps", false}, {"edge_dim", nullptr}});
  if (!a.has("nn")) throw a.invalidValue("nn", nullptr, "required: {\"class\": \"MLP\", \"args\": {...}}");
  const int64_t edgeDim = a.has("edge_dim") ? a.get<int64_t>("edge_dim") : 0;
  if (a.has("edge_dim") && edgeDim < 1) throw a.invalidValue("edge_dim", a.at("edge_dim"), "must be >= 1");
  return std::make_unique<GINEConv>(mlpFromPyGSpec(a.at("nn"), "GINEConv", gen, dtype), gen, a.get<double>("eps"),
                                    a.get<bool>("train_eps"), edgeDim);
}

std::unique_ptr<Module> GINEConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GINEConv>(std::make_unique<MLP>(nn_->options(), unused), unused, initialEps_,
                                              trainEps_, edgeDim_));
}

Variable GINEConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                                       int64_t numNodes) {
  // The root term joins the fused pass when (1 + eps) is a constant; a trained eps goes through its scalar op.
  const double self = eps_->requiresGrad() ? 0.0 : 1.0 + eps_->value().at(0);
  Variable out = reluMessageSum(x, edgeAttr, edgeIndex, numNodes, self);
  if (eps_->requiresGrad()) out = add(out, scaleByScalar(x, add(*eps_, Variable(Tensor::full({1}, 1.0, x.dtype())))));
  return out;
}

Variable GINEConv::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr, const NormBatch& b) {
  const int64_t in = nn_->inChannels();
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in, "GINEConv(nn: ", in, " -> ", nn_->outChannels(),
                "): input has shape ", shapeString(x.shape()), ", expected [N, ", in, "]");
  GNN_CHECK_ARG(edgeAttr.defined() && edgeAttr.value().rank() == 2 && edgeAttr.dim(0) == edgeIndex.dim(1),
                "GINEConv: edge_attr must be [E, F] with E = ", edgeIndex.dim(1), " edges, got ",
                edgeAttr.defined() ? shapeString(edgeAttr.shape()) : std::string("none"));
  const int64_t width = edgeDim_ > 0 ? edgeDim_ : in;
  GNN_CHECK_ARG(edgeAttr.dim(1) == width, "GINEConv: edge_attr has ", edgeAttr.dim(1), " features, expected ",
                width, edgeDim_ > 0 ? " (edge_dim)" : " (the node features' width: set edge_dim to project them)");
  const Variable e = lin_ ? lin_->forward(edgeAttr) : edgeAttr;
  return nn_->forward(propagate(edgeIndex, x, e, x.dim(0)), b);
}

}  // namespace gnn
