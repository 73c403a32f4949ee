#include "app/HeteroNodeModel.h"

#include <algorithm>
#include <functional>
#include <set>

#include "app/MemoryBounds.h"
#include "app/Program.h"

namespace gnn::app {

namespace {

class RgcnNodeModel final : public HeteroNodeModel {
 public:
  RgcnNodeModel(const HeteroNodeModelSpec& spec, Generator& gen) : net_(options(spec), gen) {}

  Module& module() override { return net_; }
  Variable forward(const std::vector<Tensor>& features, const Tensor& edgeIndex, const Tensor& edgeType) override {
    return net_.forward(features, edgeIndex, edgeType);
  }
  Variable forward(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds, const Tensor& edgeIndex,
                   const Tensor& edgeType, int64_t targetRows) override {
    return net_.forward(features, nodeIds, edgeIndex, edgeType, targetRows);
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
    o.targetType = spec.targetType;
    return o;
  }

  HeteroRGCN net_;
};

// R-GCN's memory: its weights (the embeddings of the featureless types first: ogbn-mag's 1.1M authors x 128)
// with their gradients, Adam's moments and the best epoch's copy; the input rows stacked with their gradient; per
// layer what RGCNConv keeps (gnn/nn/conv/RGCNConv.h): a narrowing layer only [N, out] products and sums, a
// widening one every target's per-relation aggregates and its own rows [M, (R + 1) in], others each pair's
// aggregates [pairs, in] (a pair per relation a node receives, at most one per edge); the last layer over the
// target type only, with the loss's copy of its logits. Checked against a 100k-paper ogbn-mag-shaped graph: 1.73
// GB estimated, 1.66 GB peak measured.
double rgcnBytes(const HeteroNodeModelSpec& s) {
  double nodes = 0, embedded = 0, lins = 0;
  std::set<int64_t> widths;  // HeteroRGCN's input width: the one feature width, else --hidden
  for (const HeteroRGCNNodeType& t : s.nodeTypes) {
    nodes += static_cast<double>(t.numNodes);
    if (t.features <= 0) embedded += static_cast<double>(t.numNodes);
    if (t.features > 0) widths.insert(t.features);
    lins += static_cast<double>(std::max<int64_t>(t.features, 0)) * static_cast<double>(s.hidden);
  }
  const double targets = static_cast<double>(s.nodeTypes.at(static_cast<size_t>(s.targetType)).numNodes);
  const double in = static_cast<double>(widths.size() == 1 ? *widths.begin() : s.hidden);
  const double r = static_cast<double>(s.numRelations), rw = s.numBases > 0 ? static_cast<double>(s.numBases) : r;
  const double pairs = std::min(nodes * r, static_cast<double>(s.numEdges));
  double params = embedded * in + (widths.size() > 1 ? lins : 0), acts = nodes * in * 3;
  for (int64_t l = 0; l < s.layers; ++l) {
    const bool last = l + 1 == s.layers;
    const double a = l == 0 ? in : static_cast<double>(s.hidden);
    const double b = last ? static_cast<double>(s.numClasses) : static_cast<double>(s.hidden);
    const double rows = last ? targets : nodes;
    params += rw * a * b + a * b + b;
    if (a > b) acts += nodes * b * 3;
    else if (a < b) acts += rows * (r + 1) * a + rows * b * 3;
    else acts += pairs * a * 2 + rows * b * 3;
  }
  return params * 6 * 4 + acts * 4;
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
