#include "app/NodeModel.h"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>

#include "app/MemoryBounds.h"
#include "app/Program.h"
#include "models/BasicGNNBlocks.h"
#include "models/NodeGCN.h"

namespace gnn::app {

namespace {

/// Kipf & Welling's two-layer GCN.
class GcnNodeModel final : public NodeModel {
 public:
  GcnNodeModel(const NodeModelSpec& spec, Generator& gen)
      : net_(spec.inChannels, spec.hidden, spec.numClasses, gen, options(spec)) {}

  BlockModel& module() override { return net_; }
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex) override { return net_.forward(x, edgeIndex); }
  Variable forward(const Variable& x, const Tensor& edgeIndex) override { return net_.forward(x, edgeIndex); }
  Variable forward(const Batch& batch) override { return net_.forward(batch); }
  void prepare(const Batch& batch) override { net_.prepare(batch); }
  void keepAdjacencyOf(const Tensor& edgeIndex, int64_t numNodes) override {
    net_.keepAdjacencyOf(edgeIndex, numNodes);
  }
  std::vector<ParamGroup> parameterGroups(double weightDecay) override {
    // The paper's L2 regularisation applies to the first layer only (Kipf & Welling 2017, section 5.2).
    return {{net_.conv1().parameters(), weightDecay}, {net_.conv2().parameters(), 0.0}};
  }

 private:
  static NodeGCNOptions options(const NodeModelSpec& spec) {
    NodeGCNOptions mo;
    mo.dropout = spec.dropout;
    mo.cached = spec.cached;
    return mo;
  }

  NodeGCN net_;
};

/// PyG's BasicGNN models (node_property): every parameter under --weight-decay; sparse features for the
/// classes that take them (BasicGNN::takesSparseInput; readNodeData keeps the others' dense).
class BasicGnnNodeModel final : public NodeModel {
 public:
  BasicGnnNodeModel(const NodeModelSpec& spec, Generator& gen) : net_(build(spec, gen)) {}

  BlockModel& module() override { return net_; }
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex) override { return net_.forward(x, edgeIndex); }
  Variable forward(const Variable& x, const Tensor& edgeIndex) override { return net_.forward(x, edgeIndex); }
  BasicGNN* basicGnn() override { return &net_.model(); }
  // A neighbour batch with one hop per layer: each layer over the rows and edges the seeds need (PyG's
  // trim_to_layer), the seeds' rows out.
  Variable forward(const Batch& b) override {
    BasicGNN& m = net_.model();
    if (trimToLayer_ && !m.convStack() && !b.nodesPerHop.empty() &&
        static_cast<int64_t>(b.edgesPerHop.size()) == m.numLayers())
      return m.forwardHops(Variable(b.x), b.edgeIndex, b.nodesPerHop, b.edgesPerHop);
    return NodeModel::forward(b);
  }
  void setTrimToLayer(bool on) override { trimToLayer_ = on; }
  std::vector<ParamGroup> parameterGroups(double weightDecay) override { return {{net_.parameters(), weightDecay}}; }

 private:
  static std::unique_ptr<BasicGNN> build(const NodeModelSpec& spec, Generator& gen) {
    const nlohmann::json j = spec.basicGnnSpec();
    BasicGNNOptions o = BasicGNNOptions::fromPyG(j["args"]);
    o.inputDropout = spec.inputDropout;
    o.attentionDropout = spec.attnDropout;
    o.outputHeads = spec.outHeads;
    return std::make_unique<BasicGNN>(j["class"].get<std::string>(), std::move(o), gen);
  }

  BasicGNNBlocks net_;
  bool trimToLayer_ = true;
};

// The memory a BasicGNN takes over `numNodes` nodes: weights with gradients, Adam's moments and the best
// epoch's copy, and a handful of activations per layer and node (GAT's per-edge attention is small beside
// them at citation-graph degrees).
double basicGnnBytes(const NodeModelSpec& s, int64_t numNodes) {
  const double h = static_cast<double>(s.hidden), f = static_cast<double>(s.inChannels),
               k = static_cast<double>(s.numClasses), n = static_cast<double>(numNodes),
               l = static_cast<double>(s.layers);
  const double params = f * h * 2 + (l - 1) * h * h * 2 + h * k * 2;
  return params * 6 * 4 + n * (h * l * 8 + f * 2) * 4;
}

struct NodeModelEntry {
  std::string name;
  std::function<std::unique_ptr<NodeModel>(const NodeModelSpec&, Generator&)> make;
  /// Bytes the model takes at `spec`'s width over `numNodes` nodes, and what they are.
  std::function<double(const NodeModelSpec&, int64_t numNodes)> bytes;
  std::function<std::string(int64_t numNodes)> what;
};

const std::vector<NodeModelEntry>& entries() {
  static const std::vector<NodeModelEntry> all = {
      {"gcn", [](const NodeModelSpec& s, Generator& g) { return std::make_unique<GcnNodeModel>(s, g); },
       // The two layers' weights with their gradients, Adam's moments and the best epoch's copy, and a few
       // activations of every node.
       [](const NodeModelSpec& s, int64_t numNodes) {
         const double h = static_cast<double>(s.hidden), f = static_cast<double>(s.inChannels),
                      k = static_cast<double>(s.numClasses), n = static_cast<double>(numNodes);
         return (f * h + h * k + h + k) * 6 * 4 + n * h * 6 * 4;
       },
       [](int64_t numNodes) {
         return "a two-layer GCN's weights and optimizer state, and its activations over " + std::to_string(numNodes) +
                " nodes";
       }},
  };
  return all;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

const NodeModelEntry& basicGnnEntry(const std::string& name) {
  static const std::vector<NodeModelEntry> all = [] {
    std::vector<NodeModelEntry> v;
    for (const std::string& n : basicGnnNodeModelNames())
      v.push_back({n, [](const NodeModelSpec& s, Generator& g) { return std::make_unique<BasicGnnNodeModel>(s, g); },
                   basicGnnBytes,
                   [n](int64_t numNodes) {
                     return "the " + n + " model's weights and optimizer state, and its activations over " +
                            std::to_string(numNodes) + " nodes";
                   }});
    return v;
  }();
  for (const NodeModelEntry& e : all)
    if (e.name == name) return e;
  throw UsageError("--model '" + name + "': must be one of " + joined(basicGnnNodeModelNames()));
}

const NodeModelEntry& entry(const std::string& name) {
  for (const NodeModelEntry& e : entries())
    if (e.name == name) return e;
  throw UsageError("--model '" + name + "': must be one of " + joined(nodeModelNames()));
}

}  // namespace

const std::vector<std::string>& nodeModelNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const NodeModelEntry& e : entries()) v.push_back(e.name);
    return v;
  }();
  return names;
}

namespace {
// node_property's convolutions stacked (BasicGNN over a convolution class), by short name, with the arguments
// a class needs and PyG does not default: Chebyshev order 2 (Kipf & Welling 2017 compare K = 2 and 3),
// APPNP's K = 10 and alpha = 0.1 (Gasteiger et al. 2019; PyG's examples/appnp.py), GCNII's alpha = 0.1 and
// theta = 0.5 (PyG's examples/gcn2_cora.py), three gated steps (GatedGraphConv), k = 20 neighbours (PyG's
// examples/dgcnn_*.py).
// --conv-args overrides them. GINEConv and NNConv need edge features, which node_property's graphs do not
// carry.
struct StackedConv {
  const char* name;
  const char* cls;
  const char* defaults;  // JSON
};
const StackedConv kStackedConvs[] = {
    {"appnp", "APPNP", R"({"K": 10, "alpha": 0.1})"},
    {"cheb", "ChebConv", R"({"K": 2})"},
    {"clustergcn", "ClusterGCNConv", "{}"},
    {"dynamicedge", "DynamicEdgeConv", R"({"k": 20})"},
    {"eg", "EGConv", "{}"},
    {"fa", "FAConv", "{}"},
    {"film", "FiLMConv", "{}"},
    {"gatedgraph", "GatedGraphConv", R"({"num_layers": 3})"},
    {"gcn2", "GCN2Conv", R"({"alpha": 0.1, "theta": 0.5})"},
    {"gen", "GENConv", "{}"},
    {"general", "GeneralConv", "{}"},
    {"graph", "GraphConv", "{}"},
    {"le", "LEConv", "{}"},
    {"mf", "MFConv", "{}"},
    {"resgatedgraph", "ResGatedGraphConv", "{}"},
    {"sg", "SGConv", "{}"},
    {"tag", "TAGConv", "{}"},
    {"transformer", "TransformerConv", "{}"},
};

const StackedConv* stackedConv(const std::string& name) {
  for (const StackedConv& c : kStackedConvs)
    if (name == c.name) return &c;
  return nullptr;
}
}  // namespace

const std::vector<std::string>& basicGnnNodeModelNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"gcn", "sage", "gin", "gat", "gatv2", "pna", "edgecnn"};
    for (const StackedConv& c : kStackedConvs) v.push_back(c.name);
    return v;
  }();
  return names;
}

void requireNodeModel(const std::string& name, const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
    throw UsageError("--model '" + name + "': must be one of " + joined(allowed));
}

std::unique_ptr<NodeModel> makeNodeModel(const NodeModelSpec& spec, Generator& gen) {
  return (spec.basicGnn ? basicGnnEntry(spec.name) : entry(spec.name)).make(spec, gen);
}

nlohmann::json NodeModelSpec::basicGnnSpec() const {
  static const std::map<std::string, std::string> classes = {
      {"gcn", "GCN"},   {"sage", "GraphSAGE"}, {"gin", "GIN"},        {"gat", "GAT"},
      {"gatv2", "GAT"}, {"pna", "PNA"},        {"edgecnn", "EdgeCNN"}};
  auto it = classes.find(name);
  const StackedConv* stacked = stackedConv(name);
  if (it == classes.end() && !stacked)
    throw UsageError("--model '" + name + "': must be one of " + joined(basicGnnNodeModelNames()));
  nlohmann::json a = {{"in_channels", inChannels},
                      {"hidden_channels", hidden},
                      {"num_layers", layers},
                      {"out_channels", numClasses},
                      {"dropout", dropout},
                      {"act", act},
                      {"norm", norm == "none" ? nlohmann::json(nullptr) : nlohmann::json(norm + "_norm")},
                      {"jk", jk == "none" ? nlohmann::json(nullptr) : nlohmann::json(jk)}};
  if (name == "gcn") a["cached"] = cached;
  if (name == "sage" || name == "edgecnn") {
    if (!aggr.empty()) a["aggr"] = aggr;
  }
  if (name == "gat" || name == "gatv2") {
    a["heads"] = heads;
    if (name == "gatv2") a["v2"] = true;
  }
  if (name == "pna") {
    // PyG's PNA example's choice (examples/pna.py): four aggregators and three degree scalers.
    std::vector<std::string> aggregators = {"mean", "min", "max", "std"};
    if (!aggr.empty()) {
      aggregators.clear();
      for (size_t b = 0; b <= aggr.size();) {
        size_t e = aggr.find(',', b);
        if (e == std::string::npos) e = aggr.size();
        aggregators.push_back(aggr.substr(b, e - b));
        b = e + 1;
      }
    }
    a["aggregators"] = aggregators;
    a["scalers"] = {"identity", "amplification", "attenuation"};
    a["deg"] = degreeHistogram;
  }
  if (!stacked) {
    if (!convArgs.empty())
      throw UsageError("--conv-args: for the stacked convolutions (--model " + name + " takes its arguments as flags)");
    return {{"class", it->second}, {"args", a}};
  }
  nlohmann::json kwargs = nlohmann::json::parse(stacked->defaults);
  if (name == "transformer") kwargs["heads"] = heads;
  if (!aggr.empty()) kwargs["aggr"] = aggr;  // the layer's own aggregation (PyG refuses it for a layer without one)
  if (!convArgs.empty()) {
    nlohmann::json given;
    try {
      given = nlohmann::json::parse(convArgs);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError("--conv-args '" + convArgs + "': not JSON (" + e.what() + ")");
    }
    if (!given.is_object()) throw UsageError("--conv-args '" + convArgs + "': give a JSON object, e.g. {\"K\": 3}");
    for (const auto& [k, v] : given.items()) kwargs[k] = v;
  }
  a["conv_kwargs"] = kwargs;
  return {{"class", stacked->cls}, {"args", a}};
}

std::vector<int64_t> inDegreeHistogram(const Tensor& edgeIndex, int64_t numNodes) {
  std::vector<int64_t> degree(static_cast<size_t>(numNodes), 0);
  const int64_t e = edgeIndex.dim(1);
  const int64_t* dst = edgeIndex.data<int64_t>() + e;
  for (int64_t k = 0; k < e; ++k) ++degree[static_cast<size_t>(dst[k])];
  std::vector<int64_t> hist;
  for (int64_t d : degree) {
    if (static_cast<size_t>(d) >= hist.size()) hist.resize(static_cast<size_t>(d) + 1, 0);
    ++hist[static_cast<size_t>(d)];
  }
  return hist;
}

void requireNodeModelFits(const NodeModelSpec& spec, int64_t numNodes, const std::string& sizesFrom) {
  const NodeModelEntry& e = spec.basicGnn ? basicGnnEntry(spec.name) : entry(spec.name);
  requireFitsInMemory("hidden", static_cast<double>(spec.hidden), e.bytes(spec, numNodes), sizesFrom, e.what(numNodes));
}

}  // namespace gnn::app
