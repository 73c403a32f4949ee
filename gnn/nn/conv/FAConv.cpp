#include "gnn/nn/conv/FAConv.h"

#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/GcnNormEdges.h"

namespace gnn {

FAConv::FAConv(int64_t channels, Generator& gen, double eps, double dropout, bool addSelfLoops, DType dtype)
    : MessagePassing("sum"), channels_(channels), eps_(eps), dropout_(dropout), addSelfLoops_(addSelfLoops),
      dtype_(dtype) {
  GNN_CHECK_ARG(channels_ > 0, "FAConv: channels = ", channels_, " must be positive");
  GNN_CHECK_ARG(dropout_ >= 0 && dropout_ < 1, "FAConv: dropout = ", dropout_, " must be in [0, 1)");
  attL_ = std::make_unique<Linear>(channels_, 1, gen, false, dtype_);
  registerModule("att_l", *attL_);
  attR_ = std::make_unique<Linear>(channels_, 1, gen, false, dtype_);
  registerModule("att_r", *attR_);
}

std::unique_ptr<FAConv> FAConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "FAConv", {{"channels", nullptr}, {"eps", 0.1}, {"dropout", 0.0}, {"cached", false},
                                   {"add_self_loops", true}, {"normalize", true}});
  if (!a.get<bool>("normalize"))
    throw a.invalidValue("normalize", false, "normalize=False needs edge weights given to forward, not offered");
  (void)a.get<bool>("cached");
  return std::make_unique<FAConv>(a.get<int64_t>("channels"), gen, a.get<double>("eps"), a.get<double>("dropout"),
                                  a.get<bool>("add_self_loops"), dtype);
}

std::unique_ptr<Module> FAConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<FAConv>(channels_, unused, eps_, dropout_, addSelfLoops_, dtype_));
}

Variable FAConv::forward(const Variable& x, const Variable& x0, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(x.defined() && x.value().rank() == 2 && x.dim(1) == channels_, "FAConv(", channels_,
                "): input has shape ", x.defined() ? shapeString(x.shape()) : std::string("none"));
  GNN_CHECK_ARG(x0.defined() && x0.shape() == x.shape(), "FAConv: x_0 must have x's shape ",
                shapeString(x.shape()));
  const int64_t n = x.dim(0);
  const NormalizedEdges e = gcnNormEdges(edgeIndex, n, addSelfLoops_, x.dtype());
  const Variable alpha = tanh(add(gatherRows(attL_->forward(x), e.src), gatherRows(attR_->forward(x), e.dst)));
  const Variable coef = mul(dropout(alpha, dropout_, isTraining()), Variable(e.weight));  // [E', 1]
  Variable out = weightedMessageSum(x, coef, e.edgeIndex, n);  // no [E', C] gathered rows
  return eps_ != 0.0 ? add(out, scale(x0, eps_)) : out;
}

}  // namespace gnn
