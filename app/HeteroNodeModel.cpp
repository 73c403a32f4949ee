#include "app/HeteroNodeModel.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "app/MemoryBounds.h"
#include "app/Program.h"
#include "gnn/ops/Ops.h"
#include "models/HeteroHGT.h"

namespace gnn::app {

namespace {

// The first row of the target type in the typed graph (its types one after another) and its rows.
std::pair<int64_t, int64_t> targetRows(const HeteroNodeModelSpec& spec) {
  int64_t first = 0;
  for (const HeteroRGCNNodeType& t : spec.nodeTypes) {
    if (t.name == spec.targetType) return {first, t.numNodes};
    first += t.numNodes;
  }
  throw std::invalid_argument("the target type '" + spec.targetType + "' is not a node type");
}

class RgcnNodeModel final : public HeteroNodeModel {
 public:
  RgcnNodeModel(const HeteroNodeModelSpec& spec, Generator& gen)
      : net_(options(spec), gen), target_(targetRows(spec)) {}

  Module& module() override { return net_; }
  // Every node's rows go through every layer; the target type's are the output.
  Variable forward(const std::vector<Tensor>& features, const Tensor& edgeIndex, const Tensor& edgeType) override {
    return sliceRows(net_.forward(features, edgeIndex, edgeType), target_.first, target_.first + target_.second);
  }

 private:
  static HeteroRGCNOptions options(const HeteroNodeModelSpec& spec) {
    HeteroRGCNOptions o;
    o.nodeTypes = spec.nodeTypes;
    o.numRelations = spec.numRelations;
    o.hidden = spec.hidden;
    o.outChannels = spec.numClasses;
    o.layers = spec.layers;
    o.numBases = spec.numBases;
    o.dropout = spec.dropout;
    return o;
  }

  HeteroRGCN net_;
  std::pair<int64_t, int64_t> target_;
};

class HgtNodeModel final : public HeteroNodeModel {
 public:
  HgtNodeModel(const HeteroNodeModelSpec& spec, Generator& gen) : net_(options(spec), gen) {}

  Module& module() override { return net_; }
  // The typed graph's edges as each relation's own, split again every call (a pass over the edges, small beside
  // the attention over them).
  Variable forward(const std::vector<Tensor>& features, const Tensor& edgeIndex, const Tensor& edgeType) override {
    return net_.forward(features, net_.relationEdges(edgeIndex, edgeType));
  }

 private:
  static HeteroHGTOptions options(const HeteroNodeModelSpec& spec) {
    HeteroHGTOptions o;
    o.nodeTypes = spec.nodeTypes;
    o.edgeTypes = spec.edgeTypes;
    o.targetType = spec.targetType;
    o.hidden = spec.hidden;
    o.outChannels = spec.numClasses;
    o.layers = spec.layers;
    o.heads = spec.heads;
    return o;
  }

  HeteroHGT net_;
};

// R-GCN's memory: its weights (the embeddings of the featureless types first: ogbn-mag's 1.1M authors x 128)
// with their gradients, Adam's moments and the best epoch's copy; per layer, each node's per-relation means
// [N, R x in] (RGCNConv's one product over the relations keeps them for the backward) and a few [N, out]
// activations; the input rows stacked.
double rgcnBytes(const HeteroNodeModelSpec& s) {
  double nodes = 0, embedded = 0, lins = 0;
  std::set<int64_t> widths;  // HeteroRGCN's input width: the one feature width, else --hidden
  for (const HeteroRGCNNodeType& t : s.nodeTypes) {
    nodes += static_cast<double>(t.numNodes);
    if (t.features <= 0) embedded += static_cast<double>(t.numNodes);
    if (t.features > 0) widths.insert(t.features);
    lins += static_cast<double>(std::max<int64_t>(t.features, 0)) * static_cast<double>(s.hidden);
  }
  const double in = static_cast<double>(widths.size() == 1 ? *widths.begin() : s.hidden);
  const double r = static_cast<double>(s.numRelations), rw = s.numBases > 0 ? static_cast<double>(s.numBases) : r;
  double params = embedded * in + (widths.size() > 1 ? lins : 0), acts = nodes * in * 3;
  for (int64_t l = 0; l < s.layers; ++l) {
    const double a = l == 0 ? in : static_cast<double>(s.hidden);
    const double b = l + 1 == s.layers ? static_cast<double>(s.numClasses) : static_cast<double>(s.hidden);
    params += rw * a * b + a * b + b;
    acts += nodes * (r * a * 2 + b * 3);
  }
  return params * 6 * 4 + acts * 4;
}

// HGT's memory: its weights (the featureless types' embeddings [N_t, hidden] first) with their gradients, Adam's
// moments and the best epoch's copy; the input rows; per layer, each relation keeps its sources' keys and values
// [N_src, hidden] and, per edge, its source, attention and the edges grouped by target (24 bytes at 2 heads; the
// backward's about as much again, counted here too), and each type a few [N_t, hidden] rows (queries, grouped
// messages, their GELU, the output, gradients). Every relation and type is counted in every layer: the last layer
// reads fewer (models/HeteroHGT.h), so this is an upper bound.
double hgtBytes(const HeteroNodeModelSpec& s) {
  std::map<std::string, double> count;
  double nodes = 0, params = 0;
  for (const HeteroRGCNNodeType& t : s.nodeTypes) {
    count[t.name] = static_cast<double>(t.numNodes);
    nodes += static_cast<double>(t.numNodes);
    params += (t.features > 0 ? static_cast<double>(t.features + 1) : static_cast<double>(t.numNodes)) *
              static_cast<double>(s.hidden);
  }
  const double h = static_cast<double>(s.hidden), types = static_cast<double>(s.nodeTypes.size());
  double sources = 0;
  for (const EdgeType& r : s.edgeTypes) sources += count.count(r.src) ? count[r.src] : 0;
  params += static_cast<double>(s.layers) *
            (types * 4 * (h * h + h) + static_cast<double>(s.numRelations) * 2 * h * h / static_cast<double>(s.heads));
  params += h * static_cast<double>(s.numClasses);
  const double perEdge = (16 + 4 * static_cast<double>(s.heads)) * 2;
  const double perLayer = sources * h * 2 * 4 + static_cast<double>(s.numEdges) * perEdge + nodes * h * 6 * 4;
  return params * 6 * 4 + nodes * h * 2 * 4 + static_cast<double>(s.layers) * perLayer;
}

struct HeteroNodeModelEntry {
  std::string name;
  std::function<std::unique_ptr<HeteroNodeModel>(const HeteroNodeModelSpec&, Generator&)> make;
  std::function<double(const HeteroNodeModelSpec&)> bytes;
  std::function<std::string(const HeteroNodeModelSpec&)> what;
};

const std::vector<HeteroNodeModelEntry>& heteroEntries() {
  static const std::vector<HeteroNodeModelEntry> all = {
      {"rgcn", [](const HeteroNodeModelSpec& s, Generator& g) { return std::make_unique<RgcnNodeModel>(s, g); },
       rgcnBytes,
       [](const HeteroNodeModelSpec& s) {
         int64_t nodes = 0;
         for (const HeteroRGCNNodeType& t : s.nodeTypes) nodes += t.numNodes;
         return "R-GCN's weights, embeddings and optimizer state, and its per-relation activations over " +
                std::to_string(nodes) + " nodes and " + std::to_string(s.numRelations) + " relations";
       }},
      {"hgt", [](const HeteroNodeModelSpec& s, Generator& g) { return std::make_unique<HgtNodeModel>(s, g); },
       hgtBytes,
       [](const HeteroNodeModelSpec& s) {
         int64_t nodes = 0;
         for (const HeteroRGCNNodeType& t : s.nodeTypes) nodes += t.numNodes;
         return "HGT's weights, embeddings and optimizer state, its relations' keys and values and its attention "
                "over " + std::to_string(nodes) + " nodes and " + std::to_string(s.numEdges) + " edges of " +
                std::to_string(s.numRelations) + " relations";
       }},
  };
  return all;
}

const HeteroNodeModelEntry& heteroEntry(const std::string& name) {
  for (const HeteroNodeModelEntry& e : heteroEntries())
    if (e.name == name) return e;
  std::string known;
  for (const std::string& n : heteroNodeModelNames()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError("--model '" + name + "': on a heterogeneous graph, one of " + known);
}

}  // namespace

const std::vector<std::string>& heteroNodeModelNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const HeteroNodeModelEntry& e : heteroEntries()) v.push_back(e.name);
    return v;
  }();
  return names;
}

std::unique_ptr<HeteroNodeModel> makeHeteroNodeModel(const HeteroNodeModelSpec& spec, Generator& gen) {
  return heteroEntry(spec.name).make(spec, gen);
}

void requireHeteroNodeModelFits(const HeteroNodeModelSpec& spec, const std::string& sizesFrom) {
  const HeteroNodeModelEntry& e = heteroEntry(spec.name);
  requireFitsInMemory("hidden", static_cast<double>(spec.hidden), e.bytes(spec), sizesFrom, e.what(spec));
}

}  // namespace gnn::app
