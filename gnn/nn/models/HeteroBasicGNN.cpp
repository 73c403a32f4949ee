#include "gnn/nn/models/HeteroBasicGNN.h"

#include <algorithm>
#include <deque>
#include <set>
#include <stdexcept>

#include "gnn/nn/conv/GATConv.h"
#include "gnn/nn/conv/GINConv.h"
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

// What PyG refuses or cannot run for GAT's and GIN's copies (first: each relation's widths into the first layer).
void checkCopies(const std::string& cls, const BasicGNNOptions& opt, bool pairIn, const HeteroMetadata& meta,
                 const std::vector<std::pair<int64_t, int64_t>>& first) {
  if (cls == "GraphSAGE") return;
  if (cls == "GAT" && opt.conv.value("v2", false))
    throw std::invalid_argument("to_hetero: GAT with v2=True (GATv2Conv) is not offered: only GATConv's bipartite "
                                "form is");
  if (cls == "GIN" && pairIn)
    throw std::invalid_argument("to_hetero: GIN takes an int or -1 in_channels (PyG's MLP([in, out, out]) takes no "
                                "[source, target])");
  for (size_t k = 0; k < meta.second.size(); ++k) {
    const EdgeType& t = meta.second[k];
    if (t.src == t.dst) continue;
    if (cls == "GAT" && opt.conv.value("add_self_loops", true))
      throw std::invalid_argument("to_hetero: GAT's add_self_loops=True on edge type " + typeString(t) +
                                  ", which PyG refuses for a relation between two types (check_add_self_loops: "
                                  "'incorrect message passing results'); pass add_self_loops=False");
    if (!pairIn && first[k].first != first[k].second)
      throw std::invalid_argument(
          "to_hetero: edge type " + typeString(t) + " joins widths " + std::to_string(first[k].first) + " and " +
          std::to_string(first[k].second) + ", which " +
          (cls == "GIN" ? std::string("GINConv adds together (x_dst to the sum of x_src)")
                        : std::string("one shared lin_src = lin_dst (an int in_channels) cannot read; pass "
                                      "in_channels [-1, -1]")));
  }
}

}  // namespace

const std::vector<std::string>& HeteroBasicGNN::classNames() {
  static const std::vector<std::string> names = {"GraphSAGE", "GAT", "GIN"};
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
                                "' is not offered (GraphSAGE, GAT, GIN: their convolutions take sources and targets apart)");
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
  class_ = cls;
  const std::vector<std::pair<int64_t, int64_t>> first = firstWidths(in, inWidths);
  checkCopies(cls, opt_, in.is_array(), meta_, first);
  const int64_t L = opt_.numLayers, hidden = opt_.hiddenChannels;
  const bool toOut = opt_.outChannels > 0 && opt_.jk.empty();
  // PyG registers convs (a ModuleDict per layer, in the metadata's order), then norms, jk and lin: the same order.
  for (int64_t i = 0; i < L; ++i) {
    convs_.emplace_back();
    for (size_t k = 0; k < meta_.second.size(); ++k) {
      const bool last = i + 1 == L;
      convs_.back().push_back(makeConv(i == 0 ? first[k] : std::pair{hidden, hidden}, in.is_array(),
                                       last && toOut ? opt_.outChannels : hidden, last && toOut, gen));
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

nlohmann::json HeteroBasicGNN::gatArgs(json a, int64_t out, bool toOut) const {
  // PyG's GAT.init_conv: hidden_channels is the heads' total width; the output layer averages its heads.
  const int64_t heads = a.value("heads", int64_t{1});
  const bool concat = !toOut && a.value("concat", true);
  return BasicGNN::gatConvArgs(std::move(a), out, heads, concat,
                               opt_.attentionDropout >= 0 ? opt_.attentionDropout : opt_.dropout);
}

std::unique_ptr<Module> HeteroBasicGNN::makeConv(std::pair<int64_t, int64_t> in, bool pairIn, int64_t out,
                                                 bool toOut, Generator& gen) const {
  json a = opt_.conv;
  if (class_ == "GIN") {
    // PyG's GIN.init_conv: MLP([in, out, out]) with the model's act and norm.
    const json mlp = {{"channel_list", {in.first, out, out}}, {"act", opt_.act},   {"act_first", opt_.actFirst},
                      {"act_kwargs", opt_.actKwargs},         {"norm", opt_.norm}, {"norm_kwargs", opt_.normKwargs}};
    a["nn"] = {{"class", "MLP"}, {"args", mlp}};
    return GINConv::fromPyG(a, gen, dtype_);
  }
  a["out_channels"] = out;
  if (class_ == "GraphSAGE") {
    a["in_channels"] = {in.first, in.second};  // an int n is (n, n) to SAGEConv
    return SAGEConv::fromPyG(a, gen, dtype_);
  }
  // GATConv: a [source, target] in_channels gives a lin_dst of its own, an int one shared with lin_src.
  a["in_channels"] = pairIn ? json{in.first, in.second} : json(in.first);
  return GATConv::fromPyG(gatArgs(a, out, toOut), gen, dtype_);
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
    perDst[t.dst].push_back(runConv(*convs_[i][k], t, h, *edges[k]));
  }
  std::map<std::string, Variable> out;
  for (auto& [dst, outs] : perDst) out.emplace(dst, combine(std::move(outs)));
  return out;
}

Variable HeteroBasicGNN::runConv(Module& conv, const EdgeType& t, const std::map<std::string, Variable>& h,
                                 const Tensor& edgeIndex) const {
  const Variable& x = h.at(t.src);
  const bool same = t.src == t.dst;
  if (class_ == "GAT") {
    auto& c = static_cast<GATConv&>(conv);
    return same ? c.forward(x, edgeIndex) : c.forward(x, h.at(t.dst), edgeIndex);
  }
  if (class_ == "GIN") {
    auto& c = static_cast<GINConv&>(conv);
    return same ? c.forward(x, edgeIndex) : c.forward(x, h.at(t.dst), edgeIndex);
  }
  auto& c = static_cast<SAGEConv&>(conv);
  return same ? c.forward(x, edgeIndex) : c.forward(x, h.at(t.dst), edgeIndex);
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
