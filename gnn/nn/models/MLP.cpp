#include "gnn/nn/models/MLP.h"

#include <string>

#include "gnn/nn/PyGArgs.h"
#include "gnn/ops/Ops.h"

namespace gnn {

MLP::MLP(MLPOptions options, Generator& gen) : opt_(std::move(options)) {
  const size_t layers = opt_.channelList.size() - 1;
  GNN_CHECK_ARG(opt_.channelList.size() >= 2, "MLP: channel_list needs at least two widths (one layer), got ",
                opt_.channelList.size());
  for (int64_t c : opt_.channelList) GNN_CHECK_ARG(c > 0, "MLP: widths must be positive (no lazy -1), got ", c);
  if (opt_.dropout.empty()) opt_.dropout.assign(layers, 0.0);
  if (opt_.bias.empty()) opt_.bias.assign(layers, true);
  GNN_CHECK_ARG(opt_.dropout.size() == layers, "MLP: ", opt_.dropout.size(), " dropout values for ", layers,
                " layers");
  GNN_CHECK_ARG(opt_.bias.size() == layers, "MLP: ", opt_.bias.size(), " bias values for ", layers, " layers");
  for (double p : opt_.dropout) GNN_CHECK_ARG(p >= 0 && p < 1, "MLP: dropout must be in [0, 1), got ", p);
  act_ = activationFromPyG(opt_.act, opt_.actKwargs);
  // PyG's order: every Linear (each reset as torch's Linear: U(-1/sqrt(in), 1/sqrt(in))), then the norms.
  for (size_t i = 0; i < layers; ++i) {
    lins_.push_back(std::make_unique<Linear>(opt_.channelList[i], opt_.channelList[i + 1], gen, opt_.bias[i],
                                             opt_.dtype));
    registerModule("lins." + std::to_string(i), *lins_.back());
  }
  const size_t normed = opt_.plainLast ? layers - 1 : layers;
  for (size_t i = 0; i < normed; ++i) {
    norms_.push_back(normalizationFromPyG(opt_.norm, opt_.channelList[i + 1], opt_.normKwargs, gen, opt_.dtype));
    if (norms_.back()) registerModule("norms." + std::to_string(i), *norms_.back());
  }
}

namespace {

// PyG's channel_list / in_channels, hidden_channels, out_channels, num_layers.
std::vector<int64_t> channelListOf(const PyGArgs& a) {
  const nlohmann::json& list = a.at("channel_list");
  const bool byCounts = a.has("in_channels") || list.is_number_integer();
  if (!byCounts) {
    if (!list.is_array()) throw a.invalidValue("channel_list", list, "a list of widths, or give in_channels");
    std::vector<int64_t> out;
    for (const auto& c : list) {
      if (!c.is_number_integer()) throw a.invalidValue("channel_list", list, "widths must be integers");
      out.push_back(c.get<int64_t>());
    }
    if (out.size() < 2) throw a.invalidValue("channel_list", list, "needs at least two widths");
    return out;
  }
  // An int channel_list is in_channels (PyG: `if isinstance(channel_list, int): in_channels = channel_list`).
  const int64_t in = list.is_number_integer() ? list.get<int64_t>() : a.get<int64_t>("in_channels");
  if (!a.has("num_layers")) throw a.invalidValue("num_layers", nullptr, "must be given with in_channels");
  const int64_t layers = a.get<int64_t>("num_layers");
  if (layers < 1) throw a.invalidValue("num_layers", layers, "must be at least 1");
  if (layers > 1 && !a.has("hidden_channels"))
    throw a.invalidValue("hidden_channels", nullptr, "must be given for num_layers=" + std::to_string(layers));
  if (!a.has("out_channels")) throw a.invalidValue("out_channels", nullptr, "must be given with in_channels");
  std::vector<int64_t> out{in};
  for (int64_t i = 1; i < layers; ++i) out.push_back(a.get<int64_t>("hidden_channels"));
  out.push_back(a.get<int64_t>("out_channels"));
  return out;
}

// A number for every layer (with PyG's plain_last rule for dropout), or PyG's list form.
template <class T>
std::vector<T> perLayer(const PyGArgs& a, const std::string& key, size_t layers, bool zeroLast) {
  const nlohmann::json& v = a.at(key);
  if (v.is_array()) {
    if (v.size() != layers)
      throw a.invalidValue(key, v, std::to_string(v.size()) + " values for " + std::to_string(layers) + " layers");
    std::vector<T> out;
    for (const auto& e : v) {
      if (std::is_same_v<T, bool> ? !e.is_boolean() : !e.is_number()) throw a.invalidValue(key, v);
      out.push_back(e.get<T>());
    }
    return out;
  }
  std::vector<T> out(layers, a.get<T>(key));
  if (zeroLast) out.back() = T(0);
  return out;
}

}  // namespace

std::unique_ptr<MLP> MLP::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "MLP",
                  {{"channel_list", nullptr}, {"in_channels", nullptr}, {"hidden_channels", nullptr},
                   {"out_channels", nullptr}, {"num_layers", nullptr}, {"dropout", 0.0}, {"act", "relu"},
                   {"act_first", false}, {"act_kwargs", nullptr}, {"norm", "batch_norm"}, {"norm_kwargs", nullptr},
                   {"plain_last", true}, {"bias", true}});
  MLPOptions o;
  o.dtype = dtype;
  o.channelList = channelListOf(a);
  o.plainLast = a.get<bool>("plain_last");
  const size_t layers = o.channelList.size() - 1;
  o.dropout = perLayer<double>(a, "dropout", layers, o.plainLast);
  o.bias = perLayer<bool>(a, "bias", layers, false);
  for (const char* k : {"act", "norm"})
    if (a.has(k) && !a.at(k).is_string()) throw a.invalidValue(k, a.at(k), "a name (callables are Python only)");
  o.act = a.at("act");
  o.actKwargs = a.at("act_kwargs");
  o.actFirst = a.get<bool>("act_first");
  o.norm = a.at("norm");
  o.normKwargs = a.at("norm_kwargs");
  return std::make_unique<MLP>(std::move(o), gen);
}

std::unique_ptr<MLP> mlpFromPyGSpec(const nlohmann::json& spec, const std::string& owner, Generator& gen,
                                    DType dtype) {
  const bool isMlp = spec.is_object() && spec.contains("class") && spec["class"] == "MLP";
  if (!isMlp)
    throw std::invalid_argument(owner + ": nn=" + spec.dump() +
                                ": only {\"class\": \"MLP\", \"args\": {...}} (PyG's MLP) is supported");
  for (const auto& [k, v] : spec.items())
    if (k != "class" && k != "args")
      throw std::invalid_argument(owner + ": nn has an unknown entry '" + k + "' (known: class, args)");
  return MLP::fromPyG(spec.value("args", nlohmann::json::object()), gen, dtype);
}

std::unique_ptr<Module> MLP::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<MLP>(opt_, unused));
}

Variable MLP::forward(const Variable& x, const NormBatch& b) {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == inChannels(), "MLP(", inChannels(), " -> ", outChannels(),
                "): input has shape ", shapeString(x.shape()), ", expected [N, ", inChannels(), "]");
  return forwardAfterFirstLinear(lins_[0]->forward(x), b);
}

bool MLP::endsInPlainLinear() const {
  return opt_.plainLast && lins_.size() > 1 && (opt_.dropout.back() == 0 || !isTraining());
}

Variable MLP::forwardBeforeLastLinear(const Variable& x, const NormBatch& b) {
  GNN_CHECK_ARG(endsInPlainLinear(), "MLP: forwardBeforeLastLinear needs a plain last Linear with no dropout after it");
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == inChannels(), "MLP(", inChannels(), " -> ", outChannels(),
                "): input has shape ", shapeString(x.shape()), ", expected [N, ", inChannels(), "]");
  return hiddenLayers(lins_[0]->forward(x), b);
}

Variable MLP::hiddenLayers(const Variable& h0, const NormBatch& b) {
  // PyG's loop: Linear, activation before or after the norm, dropout.
  Variable h = h0;
  for (size_t i = 0; i < norms_.size(); ++i) {
    if (i > 0) h = lins_[i]->forward(h);
    if (opt_.actFirst) h = act_(h);
    if (norms_[i]) h = norms_[i]->forward(h, b);
    if (!opt_.actFirst) h = act_(h);
    h = dropout(h, opt_.dropout[i], isTraining());
  }
  return h;
}

Variable MLP::forwardAfterFirstLinear(const Variable& h0, const NormBatch& b) {
  GNN_CHECK_ARG(h0.value().rank() == 2 && h0.dim(1) == opt_.channelList[1], "MLP: the first Linear's output has "
                "shape ", shapeString(h0.shape()), ", expected [N, ", opt_.channelList[1], "]");
  // The hidden layers, then the plain last Linear and its dropout (0 unless given as a list).
  Variable h = hiddenLayers(h0, b);
  if (opt_.plainLast) {
    if (lins_.size() > 1) h = lins_.back()->forward(h);
    h = dropout(h, opt_.dropout.back(), isTraining());
  }
  return h;
}

}  // namespace gnn
