#include "gnn/nn/models/HeteroBasicGNN.h"

#include <algorithm>
#include <deque>
#include <set>
#include <stdexcept>

#include "gnn/nn/conv/HeteroConv.h"
#include "gnn/ops/Ops.h"

namespace gnn {

namespace {

using json = nlohmann::json;

std::string typeString(const EdgeType& t) { return "('" + t.src + "', '" + t.rel + "', '" + t.dst + "')"; }

// A width of in_channels: a positive int, or -1 for the type's own (PyG's lazy initialisation).
int64_t widthOf(const json& v, const std::string& type, const std::map<std::string, int64_t>& inWidths) {
  if (!v.is_number_integer() || (v.get<int64_t>() <= 0 && v.get<int64_t>() != -1))
    throw std::invalid_argument("to_hetero: in_channels " + v.dump() + " is not a positive int or -1");
  auto it = inWidths.find(type);
  if (v.get<int64_t>() == -1) {
    if (it == inWidths.end())
      throw std::invalid_argument("to_hetero: in_channels -1 reads node type '" + type + "''s width, not given");
    return it->second;
  }
  if (it != inWidths.end() && it->second != v.get<int64_t>())
    throw std::invalid_argument("to_hetero: node type '" + type + "' has " + std::to_string(it->second) +
                                " features, in_channels says " + v.dump() + " (-1 takes each type's own)");
  return v.get<int64_t>();
}

}  // namespace

const std::vector<std::string>& HeteroBasicGNN::classNames() {
  static const std::vector<std::string> names = {"GraphSAGE"};
  return names;
}

std::string HeteroBasicGNN::key(const std::string& nodeType) {
  std::string k = nodeType;
  for (char& c : k)
    if (c == ' ' || c == '-' || c == ':') c = '_';
  return k;
}

std::string HeteroBasicGNN::key(const EdgeType& edgeType) { return key(edgeType.str()); }

std::vector<std::pair<int64_t, int64_t>> HeteroBasicGNN::firstWidths(
    const json& in, const std::map<std::string, int64_t>& inWidths) const {
  if (in.is_array() && in.size() != 2)
    throw std::invalid_argument("to_hetero: in_channels " + in.dump() + " is not an int or [source, target]");
  std::vector<std::pair<int64_t, int64_t>> widths;
  for (const EdgeType& t : meta_.second) {
    // BasicGNN hands in_channels to its first convolution as it is: an int n is (n, n) there.
    const json src = in.is_array() ? in.at(0) : in, dst = in.is_array() ? in.at(1) : in;
    widths.emplace_back(widthOf(src, t.src, inWidths), widthOf(dst, t.dst, inWidths));
  }
  return widths;
}

HeteroBasicGNN::HeteroBasicGNN(const json& spec, HeteroMetadata metadata,
                               const std::map<std::string, int64_t>& inWidths, std::string aggr, Generator& gen,
                               DType dtype)
    : spec_(spec), meta_(std::move(metadata)), inWidths_(inWidths), aggr_(std::move(aggr)), dtype_(dtype) {
  const std::string cls = spec.value("class", std::string());
  const std::vector<std::string>& classes = classNames();
  if (std::find(classes.begin(), classes.end(), cls) == classes.end())
    throw std::invalid_argument("to_hetero: class '" + cls +
                                "' is not offered (GraphSAGE: its SAGEConv copies take sources and targets apart)");
  static const std::set<std::string> aggrs = {"sum", "mean", "max", "min", "mul"};
  if (!aggrs.count(aggr_))
    throw std::invalid_argument("to_hetero: aggr '" + aggr_ + "' is not one of sum, mean, max, min, mul");
  if (meta_.first.empty() || meta_.second.empty())
    throw std::invalid_argument("to_hetero: the metadata needs node types and edge types (PyG asserts both)");
  const std::set<std::string> nodeTypes(meta_.first.begin(), meta_.first.end());
  std::set<std::string> destinations;
  for (const EdgeType& t : meta_.second) {
    if (!nodeTypes.count(t.src) || !nodeTypes.count(t.dst))
      throw std::invalid_argument("to_hetero: edge type " + typeString(t) + " names a node type not in the metadata");
    destinations.insert(t.dst);
  }
  for (const std::string& t : meta_.first)
    if (!destinations.count(t))
      throw std::invalid_argument("to_hetero: node type '" + t +
                                  "' is no edge type's destination, so the layers after the first have no input for "
                                  "it (PyG warns and the model fails when run); add reverse relations (ToUndirected)");
  json args = spec.value("args", json::object());
  const json in = args.value("in_channels", json(nullptr));
  args["in_channels"] = 1;  // BasicGNNOptions reads the rest; the widths are per relation here
  opt_ = BasicGNNOptions::fromPyG(args);
  act_ = activationFromPyG(opt_.act, opt_.actKwargs);
  const std::vector<std::pair<int64_t, int64_t>> first = firstWidths(in, inWidths);
  const int64_t L = opt_.numLayers, hidden = opt_.hiddenChannels;
  const bool toOut = opt_.outChannels > 0 && opt_.jk.empty();
  // PyG registers convs (a ModuleDict per layer, in the metadata's order), then norms, jk and lin: the same order.
  for (int64_t i = 0; i < L; ++i) {
    convs_.emplace_back();
    for (size_t k = 0; k < meta_.second.size(); ++k) {
      json a = opt_.conv;
      a["in_channels"] = i == 0 ? json{first[k].first, first[k].second} : json{hidden, hidden};
      a["out_channels"] = i + 1 < L ? hidden : (toOut ? opt_.outChannels : hidden);
      convs_.back().push_back(SAGEConv::fromPyG(a, gen, dtype));
      registerModule("convs." + std::to_string(i) + "." + key(meta_.second[k]), *convs_.back().back());
    }
  }
  if (!opt_.norm.is_null()) {
    for (int64_t i = 0; i < L - 1 + (opt_.jk.empty() ? 0 : 1); ++i) {
      norms_.emplace_back();
      for (const std::string& t : meta_.first) {
        norms_.back().push_back(normalizationFromPyG(opt_.norm, hidden, opt_.normKwargs, gen, dtype));
        registerModule("norms." + std::to_string(i) + "." + key(t), *norms_.back().back());
      }
    }
  }
  if (!opt_.jk.empty() && opt_.jk != "last") {
    for (const std::string& t : meta_.first) {
      jk_.push_back(std::make_unique<JumpingKnowledge>(opt_.jk, hidden, L, gen, dtype));
      registerModule("jk." + key(t), *jk_.back());
    }
  }
  if (!opt_.jk.empty()) {
    const int64_t width = jk_.empty() ? hidden : jk_.front()->outChannels(hidden);
    for (const std::string& t : meta_.first) {
      lin_.push_back(std::make_unique<Linear>(width, outChannels(), gen, true, dtype));
      registerModule("lin." + key(t), *lin_.back());
    }
  }
}

std::unique_ptr<Module> HeteroBasicGNN::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<HeteroBasicGNN>(spec_, meta_, inWidths_, aggr_, unused, dtype_));
}

Variable HeteroBasicGNN::combine(std::vector<Variable> outs) const {
  // to_hetero's graph: pop two, append their combination, until one is left; mean divides that sum by the count.
  const size_t count = outs.size();
  std::deque<Variable> queue(outs.begin(), outs.end());
  while (queue.size() >= 2) {
    const Variable a = queue.front();
    queue.pop_front();
    const Variable b = queue.front();
    queue.pop_front();
    if (aggr_ == "sum" || aggr_ == "mean") queue.push_back(add(a, b));
    else if (aggr_ == "mul") queue.push_back(mul(a, b));
    else queue.push_back(heteroGroup({a, b}, aggr_));  // torch.max / torch.min of the two
  }
  return aggr_ == "mean" && count > 1 ? scale(queue.front(), 1.0 / static_cast<double>(count)) : queue.front();
}

std::map<std::string, Variable> HeteroBasicGNN::convLayer(size_t i, const std::map<std::string, Variable>& h,
                                                          const std::vector<const Tensor*>& edges) {
  std::map<std::string, std::vector<Variable>> perDst;  // each destination's outputs in the metadata's order
  for (size_t k = 0; k < meta_.second.size(); ++k) {
    const EdgeType& t = meta_.second[k];
    SAGEConv& conv = *convs_[i][k];
    perDst[t.dst].push_back(t.src == t.dst ? conv.forward(h.at(t.src), *edges[k])
                                           : conv.forward(h.at(t.src), h.at(t.dst), *edges[k]));
  }
  std::map<std::string, Variable> out;
  for (auto& [dst, outs] : perDst) out.emplace(dst, combine(std::move(outs)));
  return out;
}

Variable HeteroBasicGNN::afterConv(size_t i, size_t type, Variable x) const {
  if (opt_.actFirst) x = act_(x);
  if (!norms_.empty()) x = norms_[i][type]->forward(x, NormBatch{});
  if (!opt_.actFirst) x = act_(x);
  return opt_.dropout > 0 ? dropout(x, opt_.dropout, isTraining()) : x;
}

std::map<std::string, Variable> HeteroBasicGNN::forward(const std::map<std::string, Variable>& xDict,
                                                        const EdgeIndexDict& edgeIndexDict) {
  std::map<std::string, Variable> h;
  for (const std::string& t : meta_.first) {
    auto it = xDict.find(t);
    GNN_CHECK_ARG(it != xDict.end() && it->second.defined(), "to_hetero: node type '", t, "' has no features");
    h.emplace(t, it->second);
  }
  std::vector<const Tensor*> edges;
  for (const EdgeType& t : meta_.second) {
    auto it = std::find_if(edgeIndexDict.begin(), edgeIndexDict.end(), [&](const auto& e) { return e.first == t; });
    GNN_CHECK_ARG(it != edgeIndexDict.end(), "to_hetero: no edge_index for edge type ", typeString(t));
    edges.push_back(&it->second);
  }
  const size_t L = convs_.size();
  std::vector<std::vector<Variable>> xs(meta_.first.size());  // per node type, every layer's output (jk)
  for (size_t i = 0; i < L; ++i) {
    h = convLayer(i, h, edges);
    if (i + 1 == L && opt_.jk.empty()) break;
    for (size_t k = 0; k < meta_.first.size(); ++k) {
      Variable& v = h.at(meta_.first[k]);
      v = afterConv(i, k, v);
      if (!jk_.empty()) xs[k].push_back(v);
    }
  }
  if (lin_.empty()) return h;
  for (size_t k = 0; k < meta_.first.size(); ++k) {
    Variable& v = h.at(meta_.first[k]);
    v = lin_[k]->forward(jk_.empty() ? v : jk_[k]->forward(xs[k]));
  }
  return h;
}

}  // namespace gnn
