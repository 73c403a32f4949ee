#include "gnn/nn/conv/HeteroConv.h"

#include <set>
#include <stdexcept>

#include "gnn/nn/conv/ConvRegistry.h"
#include "gnn/nn/conv/GATConv.h"
#include "gnn/nn/conv/GINConv.h"
#include "gnn/nn/conv/GraphConv.h"
#include "gnn/nn/conv/SAGEConv.h"
#include "gnn/ops/Ops.h"

namespace gnn {

namespace {

// The classes whose bipartite form (x_src, x_dst) HeteroConv calls for a relation between two node types.
bool hasBipartiteForm(const std::string& className) {
  return className == "SAGEConv" || className == "GraphConv" || className == "GATConv" || className == "GINConv";
}

std::string typeString(const EdgeType& t) { return "('" + t.src + "', '" + t.rel + "', '" + t.dst + "')"; }

}  // namespace

std::string HeteroConv::moduleKey(const EdgeType& type) {
  // PyG's ModuleDict stores a '.' of a key as '#' (torch's ModuleDict refuses dots): state_dict keys carry the '#'.
  std::string key = type.str();
  for (char& c : key)
    if (c == '.') c = '#';
  return key;
}

HeteroConv::HeteroConv(std::vector<Entry> convs, std::string aggr) : convs_(std::move(convs)), aggr_(std::move(aggr)) {
  static const std::set<std::string> aggrs = {"sum", "mean", "max", "min", "cat", "none"};
  GNN_CHECK_ARG(aggrs.count(aggr_), "HeteroConv: aggr '", aggr_,
                "' is not one of sum, mean, max, min, cat, none (PyG's None)");
  GNN_CHECK_ARG(!convs_.empty(), "HeteroConv: no convolutions");
  for (size_t i = 0; i < convs_.size(); ++i) {
    Entry& e = convs_[i];
    GNN_CHECK_ARG(e.conv != nullptr, "HeteroConv: edge type ", typeString(e.type), " has no convolution");
    GNN_CHECK_ARG(!convNeedsEdgeFeatures(e.className), "HeteroConv: ", e.className, " for ", typeString(e.type),
                  " needs edge features, which this layer does not pass");
    // PyG's check_add_self_loops refuses self-loops on a relation between two types: GATConv's are an option, the
    // other layers with a bipartite form here have none, and the rest run on same-type relations only.
    GNN_CHECK_ARG(e.type.src == e.type.dst || hasBipartiteForm(e.className), "HeteroConv: ", e.className, " for ",
                  typeString(e.type),
                  " has no bipartite (x_src, x_dst) form here; relations between two types take SAGEConv, GraphConv, "
                  "GATConv or GINConv");
    GNN_CHECK_ARG(e.type.src == e.type.dst || e.className != "GATConv" ||
                      !static_cast<const GATConv&>(*e.conv).options().addSelfLoops,
                  "HeteroConv: GATConv for ", typeString(e.type), " has add_self_loops=True, which PyG refuses on a "
                  "relation between two types (incorrect message passing results): pass add_self_loops=False");
    const std::string key = moduleKey(e.type);
    GNN_CHECK_ARG(byKey_.emplace(key, i).second, "HeteroConv: edge type ", typeString(e.type), " given twice");
    registerModule("convs." + key, *e.conv);
  }
}

std::unique_ptr<HeteroConv> HeteroConv::fromPyG(const nlohmann::json& spec, Generator& gen, DType dtype) {
  GNN_CHECK_ARG(spec.is_object() && spec.contains("convs") && spec["convs"].is_array(),
                "HeteroConv: expected {\"convs\": [{\"edge_type\": [src, rel, dst], \"class\": ..., \"args\": {...}}, "
                "...], \"aggr\": ...}");
  for (const auto& [k, v] : spec.items())
    GNN_CHECK_ARG(k == "convs" || k == "aggr", "HeteroConv: unknown key '", k, "'");
  std::vector<Entry> convs;
  for (const nlohmann::json& c : spec["convs"]) {
    GNN_CHECK_ARG(c.is_object() && c.contains("edge_type") && c["edge_type"].is_array() &&
                      c["edge_type"].size() == 3 && c.contains("class"),
                  "HeteroConv: each conv is {\"edge_type\": [src, rel, dst], \"class\": ..., \"args\": {...}}, got ",
                  c.dump().substr(0, 200));
    const auto t = c["edge_type"].get<std::vector<std::string>>();
    const std::string cls = c["class"].get<std::string>();
    convs.push_back({{t[0], t[1], t[2]}, cls, convFromPyG(cls, c.value("args", nlohmann::json::object()), gen, dtype)});
  }
  const nlohmann::json aggr = spec.value("aggr", nlohmann::json("sum"));
  return std::make_unique<HeteroConv>(std::move(convs), aggr.is_null() ? "none" : aggr.get<std::string>());
}

std::unique_ptr<Module> HeteroConv::clone() const {
  std::vector<Entry> copies;
  for (const Entry& e : convs_) copies.push_back({e.type, e.className, e.conv->clone()});
  return cloneInto(std::make_unique<HeteroConv>(std::move(copies), aggr_));
}

Variable HeteroConv::runConv(const Entry& e, const std::map<std::string, Variable>& xDict, const Tensor& edgeIndex) {
  const auto features = [&](const std::string& type) -> const Variable& {
    auto it = xDict.find(type);
    GNN_CHECK_ARG(it != xDict.end() && it->second.defined(), "HeteroConv: relation ", typeString(e.type),
                  " reads node type '", type, "', which has no features in x_dict");
    return it->second;
  };
  Module& conv = *e.conv;
  // As PyG: a same-type relation calls conv(x, edge_index), any other conv((x_src, x_dst), edge_index).
  if (e.type.src == e.type.dst) {
    ConvInputs in;
    in.x = features(e.type.src);
    in.edgeIndex = edgeIndex;
    return convForward(e.className, conv, in);
  }
  const Variable& xSrc = features(e.type.src);
  const Variable& xDst = features(e.type.dst);
  if (e.className == "SAGEConv") return static_cast<SAGEConv&>(conv).forward(xSrc, xDst, edgeIndex);
  if (e.className == "GATConv") return static_cast<GATConv&>(conv).forward(xSrc, xDst, edgeIndex);
  if (e.className == "GINConv") return static_cast<GINConv&>(conv).forward(xSrc, xDst, edgeIndex);
  return static_cast<GraphConv&>(conv).forward(xSrc, xDst, edgeIndex);
}

std::map<std::string, Variable> HeteroConv::forward(const std::map<std::string, Variable>& xDict,
                                                    const EdgeIndexDict& edgeIndexDict) {
  // Outputs per destination type in the order the relations come (PyG's out_dict of lists).
  std::map<std::string, std::vector<Variable>> outs;
  for (const auto& [type, edgeIndex] : edgeIndexDict) {
    auto it = byKey_.find(moduleKey(type));
    if (it == byKey_.end()) continue;  // PyG skips an edge type without a convolution
    const Entry& e = convs_[it->second];
    GNN_CHECK_ARG(e.type == type, "HeteroConv: edge types ", typeString(e.type), " and ", typeString(type),
                  " share the key '", it->first, "'");
    outs[type.dst].push_back(runConv(e, xDict, edgeIndex));
  }
  std::map<std::string, Variable> grouped;
  for (const auto& [dst, xs] : outs) grouped.emplace(dst, heteroGroup(xs, aggr_));
  return grouped;
}

Variable heteroGroup(const std::vector<Variable>& xs, const std::string& aggr) {
  GNN_CHECK_ARG(!xs.empty(), "group: no outputs");
  const int64_t k = static_cast<int64_t>(xs.size());
  for (const Variable& x : xs)
    GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(0) == xs[0].dim(0) &&
                      (aggr == "cat" || x.dim(1) == xs[0].dim(1)),
                  "group (", aggr, "): the relations' outputs ", shapeString(xs[0].shape()), " and ",
                  shapeString(x.shape()), " do not fit together");
  const int64_t n = xs[0].dim(0), f = xs[0].dim(1);
  // PyG's None: torch.stack(xs, dim=1), one relation or several.
  if (aggr == "none") return reshape(k == 1 ? xs[0] : concatCols(xs), {n, k, f});
  if (k == 1) return xs[0];
  if (aggr == "cat") return concatCols(xs);
  if (aggr == "sum" || aggr == "mean") {
    Variable s = xs[0];
    for (int64_t r = 1; r < k; ++r) s = add(s, xs[static_cast<size_t>(r)]);
    return aggr == "sum" ? s : scale(s, 1.0 / static_cast<double>(k));
  }
  GNN_CHECK_ARG(aggr == "max" || aggr == "min", "group: aggr '", aggr, "' is not sum, mean, max, min, cat or none");
  // torch.max(torch.stack(xs), dim=0): the k rows of node i sit together ([n, k f] viewed as [n k, f]) and reduce
  // at i; the gradient goes to the first of them holding the extreme, torch's index.
  Tensor index = Tensor::empty({n * k}, DType::I64);
  int64_t* p = index.data<int64_t>();
  for (int64_t r = 0; r < n * k; ++r) p[r] = r / k;
  const Variable rows = reshape(concatCols(xs), {n * k, f});
  return aggr == "max" ? scatterMax(rows, index, n) : scatterMin(rows, index, n);
}

}  // namespace gnn
