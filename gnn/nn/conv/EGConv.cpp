#include "gnn/nn/conv/EGConv.h"

#include "gnn/nn/Init.h"
#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/aggr/Aggregation.h"
#include "gnn/nn/conv/ConvArgs.h"
#include "gnn/nn/conv/GcnNormEdges.h"

namespace gnn {

EGConv::EGConv(int64_t inChannels, int64_t outChannels, Generator& gen, std::vector<std::string> aggregators,
               int64_t numHeads, int64_t numBases, bool addSelfLoops, bool bias, DType dtype)
    : MessagePassing("sum"), in_(inChannels), out_(outChannels), aggregators_(std::move(aggregators)),
      heads_(numHeads), bases_(numBases), addSelfLoops_(addSelfLoops), hasBias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(in_ > 0 && out_ > 0 && heads_ > 0 && bases_ > 0, "EGConv: sizes must be positive");
  GNN_CHECK_ARG(out_ % heads_ == 0, "EGConv: out_channels must be divisible by the number of heads (", out_, ", ",
                heads_, ")");
  GNN_CHECK_ARG(!aggregators_.empty(), "EGConv: no aggregator");
  for (const std::string& a : aggregators_)
    GNN_CHECK_ARG(a == "symnorm" || a == "sum" || a == "mean" || a == "min" || a == "max" || a == "var" || a == "std",
                  "EGConv: unsupported aggregator '", a, "'");
  const int64_t width = out_ / heads_, A = static_cast<int64_t>(aggregators_.size());
  basesLin_ = std::make_unique<Linear>(in_, width * bases_, gen, false, dtype_);
  basesLin_->weight().value() = init::glorotUniform({width * bases_, in_}, in_, width * bases_, gen, dtype_);
  registerModule("bases_lin", *basesLin_);
  combLin_ = std::make_unique<Linear>(in_, heads_ * bases_ * A, gen, true, dtype_);
  registerModule("comb_lin", *combLin_);
  if (hasBias_) bias_ = &registerParameter("bias", Tensor::zeros({out_}, dtype_));
}

std::unique_ptr<EGConv> EGConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "EGConv", {{"in_channels", nullptr}, {"out_channels", nullptr}, {"aggregators", {"symnorm"}},
                                   {"num_heads", 8}, {"num_bases", 4}, {"cached", false}, {"add_self_loops", true},
                                   {"bias", true}});
  (void)a.get<bool>("cached");  // the normalisation is computed per call
  return std::make_unique<EGConv>(intChannels(a, "in_channels"), intChannels(a, "out_channels"), gen,
                                  a.get<std::vector<std::string>>("aggregators"), a.get<int64_t>("num_heads"),
                                  a.get<int64_t>("num_bases"), a.get<bool>("add_self_loops"), a.get<bool>("bias"),
                                  dtype);
}

std::unique_ptr<Module> EGConv::clone() const {
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<EGConv>(in_, out_, unused, aggregators_, heads_, bases_, addSelfLoops_, hasBias_,
                                            dtype_));
}

Variable EGConv::forward(const Variable& x, const Tensor& edgeIndex) {
  checkNodeFeatures("EGConv", x, in_);
  const int64_t n = x.dim(0), width = out_ / heads_, A = static_cast<int64_t>(aggregators_.size());
  // PyG's edges: gcn_norm's (the graph's self-loops replaced by one per node) with or without symnorm.
  const NormalizedEdges e = gcnNormEdges(edgeIndex, n, addSelfLoops_, x.dtype());
  const Variable bases = basesLin_->forward(x);
  Variable messages;  // [E', B C'], gathered only for the aggregators other than symnorm
  std::vector<Variable> outs;
  for (const std::string& a : aggregators_) {
    if (a == "symnorm") {
      outs.push_back(weightedMessageSum(bases, Variable(e.weight), e.edgeIndex, n));
      continue;
    }
    if (!messages.defined()) messages = gatherRows(bases, e.src);
    outs.push_back(aggregationFromName(a)->forward(messages, e.dst, n));
  }
  const Variable aggregated = reshape(A == 1 ? outs[0] : concatCols(outs), {n, A * bases_, width});
  const Variable w = reshape(combLin_->forward(x), {n, heads_, A * bases_});
  const Variable out = reshape(bmm(w, aggregated), {n, out_});
  return bias_ ? add(out, *bias_) : out;
}

}  // namespace gnn
