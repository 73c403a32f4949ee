// SoftmaxAggregation, PowerMeanAggregation, MultiAggregation and the resolver of PyG's aggregation arguments.
#include <cmath>
#include <numeric>

#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/aggr/AttentionalAggregation.h"
#include "gnn/nn/aggr/LSTMAggregation.h"
#include "gnn/nn/aggr/MultiAggregation.h"
#include "gnn/nn/aggr/PowerMeanAggregation.h"
#include "gnn/nn/aggr/Set2Set.h"
#include "gnn/nn/aggr/SoftmaxAggregation.h"
#include "gnn/nn/aggr/SortAggregation.h"
#include "gnn/ops/IndexPlan.h"
#include "gnn/ops/Ops.h"

namespace gnn {

SoftmaxAggregation::SoftmaxAggregation(double t, bool learn, bool semiGrad, int64_t channels, DType dtype)
    : t_(t), learn_(learn), semiGrad_(semiGrad), channels_(channels), dtype_(dtype) {
  GNN_CHECK_ARG(!(learn_ && semiGrad_), "SoftmaxAggregation: semi_grad needs a fixed temperature (learn=False)");
  GNN_CHECK_ARG(learn_ || channels_ == 1, "SoftmaxAggregation: channels = ", channels_,
                " needs a learnt temperature (learn=True)");
  GNN_CHECK_ARG(channels_ >= 1, "SoftmaxAggregation: channels = ", channels_);
  if (learn_) tParam_ = &registerParameter("t", Tensor::full({channels_}, t_, dtype_));
}

Variable SoftmaxAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  GNN_CHECK_ARG(x.value().rank() == 2 && (channels_ == 1 || x.dim(1) == channels_), "SoftmaxAggregation: messages ",
                shapeString(x.shape()), " for ", channels_, " temperature channels");
  const auto [perm, ptr] = ops::groupedRows("SoftmaxAggregation", index, dimSize);
  const Variable xs = gatherRows(x, perm);
  Variable logits = xs;
  if (tParam_) logits = channels_ == 1 ? scaleByScalar(xs, *tParam_) : mul(xs, *tParam_);
  else if (t_ != 1.0) logits = scale(xs, t_);
  Variable alpha = segmentSoftmax(logits, ptr);
  if (semiGrad_) alpha = Variable(alpha.value());  // PyG: the softmax under torch.no_grad()
  return segmentSum(mul(xs, alpha), ptr);
}

Variable SoftmaxAggregation::temperature() const {
  return tParam_ ? *tParam_ : Variable(Tensor::full({1}, t_, dtype_));
}

nlohmann::json SoftmaxAggregation::spec() const {
  return {{"class", "SoftmaxAggregation"},
          {"args", {{"t", t_}, {"learn", learn_}, {"semi_grad", semiGrad_}, {"channels", channels_}}}};
}

std::unique_ptr<Module> SoftmaxAggregation::clone() const {
  return cloneInto(std::make_unique<SoftmaxAggregation>(t_, learn_, semiGrad_, channels_, dtype_));
}

PowerMeanAggregation::PowerMeanAggregation(double p) : p_(p) {
  GNN_CHECK_ARG(p_ != 0, "PowerMeanAggregation: p = 0 has no 1/p");
}

Variable PowerMeanAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  if (p_ == 1.0) return scatterMean(x, index, dimSize);  // PyG skips the clamps for p == 1
  const Variable m = scatterMean(pow(clamp(x, 0, 100), p_), index, dimSize);
  return pow(clamp(m, 0, 100), 1.0 / p_);
}

nlohmann::json PowerMeanAggregation::spec() const {
  return {{"class", "PowerMeanAggregation"}, {"args", {{"p", p_}}}};
}

MultiAggregation::MultiAggregation(std::vector<std::unique_ptr<Aggregation>> aggrs, const std::string& mode,
                                   const nlohmann::json& modeKwargs, Generator& gen, DType dtype)
    : aggrs_(std::move(aggrs)), mode_(mode), modeKwargs_(modeKwargs.is_null() ? nlohmann::json::object() : modeKwargs),
      dtype_(dtype) {
  GNN_CHECK_ARG(!aggrs_.empty(), "MultiAggregation: aggrs must not be empty");
  GNN_CHECK_ARG(mode_ == "cat" || mode_ == "proj" || mode_ == "sum" || mode_ == "mean", "MultiAggregation: mode '",
                mode_, "' is not offered (cat, proj, sum, mean; PyG's max, min, logsumexp, std, var and attn are not)");
  for (size_t k = 0; k < aggrs_.size(); ++k) registerModule("aggrs." + std::to_string(k), *aggrs_[k]);
  if (mode_ == "proj") {
    GNN_CHECK_ARG(aggrs_.size() > 1, "MultiAggregation: mode proj needs several aggregations");
    GNN_CHECK_ARG(modeKwargs_.contains("in_channels") && modeKwargs_.contains("out_channels"),
                  "MultiAggregation: mode proj needs mode_kwargs in_channels and out_channels");
    const nlohmann::json& in = modeKwargs_["in_channels"];
    int64_t total = 0;
    if (in.is_array()) {
      GNN_CHECK_ARG(in.size() == aggrs_.size(), "MultiAggregation: ", in.size(), " in_channels for ", aggrs_.size(),
                    " aggregations");
      for (const auto& c : in) total += c.get<int64_t>();
    } else {
      total = in.get<int64_t>() * static_cast<int64_t>(aggrs_.size());
    }
    for (const auto& [key, unused] : modeKwargs_.items())
      GNN_CHECK_ARG(key == "in_channels" || key == "out_channels" || key == "bias", "MultiAggregation: mode_kwargs '",
                    key, "' is not offered (in_channels, out_channels, bias)");
    lin_ = std::make_unique<Linear>(total, modeKwargs_["out_channels"].get<int64_t>(), gen,
                                    modeKwargs_.value("bias", true), dtype_);
    registerModule("lin", *lin_);
  }
}

Variable MultiAggregation::forward(const Variable& x, const Tensor& index, int64_t dimSize) const {
  std::vector<Variable> outs;
  for (const auto& a : aggrs_) outs.push_back(a->forward(x, index, dimSize));
  if (mode_ == "cat" || mode_ == "proj") {
    const Variable cat = outs.size() == 1 ? outs[0] : concatCols(outs);
    return lin_ ? lin_->forward(cat) : cat;
  }
  Variable acc = outs[0];
  for (size_t k = 1; k < outs.size(); ++k) acc = add(acc, outs[k]);
  return mode_ == "mean" ? scale(acc, 1.0 / static_cast<double>(outs.size())) : acc;
}

int64_t MultiAggregation::outChannels(int64_t in) const {
  if (lin_) return lin_->outFeatures();
  return mode_ == "cat" ? in * static_cast<int64_t>(aggrs_.size()) : in;
}

nlohmann::json MultiAggregation::spec() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& a : aggrs_) list.push_back(a->spec());
  return {{"class", "MultiAggregation"}, {"args", {{"aggrs", list}, {"mode", mode_}, {"mode_kwargs", modeKwargs_}}}};
}

std::unique_ptr<Module> MultiAggregation::clone() const {
  std::vector<std::unique_ptr<Aggregation>> copies;
  for (const auto& a : aggrs_) copies.emplace_back(static_cast<Aggregation*>(a->clone().release()));
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<MultiAggregation>(std::move(copies), mode_, modeKwargs_, unused, dtype_));
}

namespace {
// PyG's resolver keys: the class name or its short form, lower case, without "aggregation" and '_'.
std::string aggregationKey(std::string name) {
  std::string key;
  for (char c : name)
    if (c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string suffix = "aggregation";
  if (key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0)
    key.resize(key.size() - suffix.size());
  return key;
}
}  // namespace

std::unique_ptr<Aggregation> aggregationFromPyG(const nlohmann::json& spec, Generator& gen, DType dtype) {
  if (spec.is_array()) {
    std::vector<std::unique_ptr<Aggregation>> list;
    for (const auto& s : spec) list.push_back(aggregationFromPyG(s, gen, dtype));
    return std::make_unique<MultiAggregation>(std::move(list), "cat", nullptr, gen, dtype);
  }
  std::string cls;
  nlohmann::json args = nlohmann::json::object();
  if (spec.is_string()) {
    cls = spec.get<std::string>();
  } else if (spec.is_object() && spec.contains("class") && spec["class"].is_string()) {
    cls = spec["class"].get<std::string>();
    if (spec.contains("args")) args = spec["args"];
  } else {
    throw std::invalid_argument("aggregation " + spec.dump() +
                                ": a name (\"mean\"), a list of them, or {\"class\": ..., \"args\": {...}}");
  }
  const std::string key = aggregationKey(cls);
  if (key == "softmax") {
    const PyGArgs a(args, "SoftmaxAggregation", {{"t", 1.0}, {"learn", false}, {"semi_grad", false}, {"channels", 1}});
    return std::make_unique<SoftmaxAggregation>(a.get<double>("t"), a.get<bool>("learn"), a.get<bool>("semi_grad"),
                                                a.get<int64_t>("channels"), dtype);
  }
  if (key == "powermean") {
    const PyGArgs a(args, "PowerMeanAggregation", {{"p", 1.0}, {"learn", false}, {"channels", 1}});
    if (a.get<bool>("learn")) throw a.invalidValue("learn", true, "a learnt p is not offered");
    return std::make_unique<PowerMeanAggregation>(a.get<double>("p"));
  }
  if (key == "multi") {
    const PyGArgs a(args, "MultiAggregation",
                    {{"aggrs", nullptr}, {"aggrs_kwargs", nullptr}, {"mode", "cat"}, {"mode_kwargs", nullptr}});
    if (!a.at("aggrs").is_array()) throw a.invalidValue("aggrs", a.at("aggrs"), "a list of aggregations");
    const nlohmann::json& kw = a.at("aggrs_kwargs");
    if (!kw.is_null() && (!kw.is_array() || kw.size() != a.at("aggrs").size()))
      throw a.invalidValue("aggrs_kwargs", kw, "one object per aggregation");
    std::vector<std::unique_ptr<Aggregation>> list;
    for (size_t k = 0; k < a.at("aggrs").size(); ++k) {
      nlohmann::json s = a.at("aggrs")[k];
      if (!kw.is_null() && !kw[k].empty()) s = {{"class", s}, {"args", kw[k]}};
      list.push_back(aggregationFromPyG(s, gen, dtype));
    }
    return std::make_unique<MultiAggregation>(std::move(list), a.get<std::string>("mode"), a.at("mode_kwargs"), gen,
                                              dtype);
  }
  if (key == "attentional" || key == "globalattention") {
    const PyGArgs a(args, "AttentionalAggregation", {{"gate_nn", nullptr}, {"nn", nullptr}});
    if (!a.has("gate_nn")) throw a.invalidValue("gate_nn", nullptr, "required: {\"class\": \"MLP\", \"args\": {...}}");
    return std::make_unique<AttentionalAggregation>(a.at("gate_nn"), a.at("nn"), gen, dtype);
  }
  if (key == "set2set") {
    const PyGArgs a(args, "Set2Set", {{"in_channels", nullptr}, {"processing_steps", nullptr}});
    return std::make_unique<Set2Set>(a.get<int64_t>("in_channels"), a.get<int64_t>("processing_steps"), gen, dtype);
  }
  if (key == "lstm") {
    const PyGArgs a(args, "LSTMAggregation", {{"in_channels", nullptr}, {"out_channels", nullptr}});
    return std::make_unique<LSTMAggregation>(a.get<int64_t>("in_channels"), a.get<int64_t>("out_channels"), gen, dtype);
  }
  if (key == "sort") {
    const PyGArgs a(args, "SortAggregation", {{"k", nullptr}});
    return std::make_unique<SortAggregation>(a.get<int64_t>("k"));
  }
  if (!args.empty()) {
    // The plain reductions take no arguments.
    const PyGArgs a(args, cls, nlohmann::json::object());
  }
  return aggregationFromName(key == "add" ? "sum" : key);
}

}  // namespace gnn
