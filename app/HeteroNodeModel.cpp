#include "app/HeteroNodeModel.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "app/MemoryBounds.h"
#include "app/Program.h"
#include "gnn/ops/Ops.h"
#include "models/HeteroHGTBlocks.h"
#include "models/HeteroRGCNBlocks.h"

namespace gnn::app {

namespace {

class RgcnNodeModel final : public HeteroNodeModel {
 public:
  RgcnNodeModel(const HeteroNodeModelSpec& spec, Generator& gen)
      : net_(std::make_unique<HeteroRGCN>(options(spec), gen), wholeGraphLayout(spec)) {}

  BlockModel& module() override { return net_; }
  // Every node's rows go through every layer but the last, which gives the target type's (HeteroRGCN's targetType).
  Variable forward(const std::vector<Tensor>& features, const Tensor& edgeIndex, const Tensor& edgeType) override {
    return net_.model().forward(features, edgeIndex, edgeType);
  }
  Variable forward(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds, const Tensor& edgeIndex,
                   const Tensor& edgeType, int64_t targetRows) override {
    return net_.model().forward(features, nodeIds, edgeIndex, edgeType, targetRows);
  }
  void setBatchLayout(const TypedBatchLayout& layout) override { net_.setLayout(layout); }

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

  HeteroRGCNBlocks net_;  // the blocks a device runs (--device ipu) over the model the CPU calls directly
};

class HgtNodeModel final : public HeteroNodeModel {
 public:
  HgtNodeModel(const HeteroNodeModelSpec& spec, Generator& gen)
      : net_(std::make_unique<HeteroHGT>(options(spec), gen), wholeGraphLayout(spec)) {}

  BlockModel& module() override { return net_; }
  // The typed graph's edges as each relation's own, split again every call (a pass over the edges, small beside
  // the attention over them).
  Variable forward(const std::vector<Tensor>& features, const Tensor& edgeIndex, const Tensor& edgeType) override {
    if (edgeIndex.defined()) return net_.model().forward(features, net_.model().relationEdges(edgeIndex, edgeType));
    GNN_CHECK_ARG(!wholeGraph_.empty(), "hgt: no typed edges and no relations given");
    return net_.model().forward(features, wholeGraph_);
  }
  void setWholeGraphRelations(std::vector<std::pair<EdgeType, Tensor>> relations) override {
    wholeGraph_ = std::move(relations);
  }
  // A batch's typed layout: each type's rows are its features' or its node ids'.
  Variable forward(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds, const Tensor& edgeIndex,
                   const Tensor& edgeType, int64_t targetRows) override {
    std::vector<int64_t> rows;
    for (size_t t = 0; t < features.size() && t < nodeIds.size(); ++t)
      rows.push_back(features[t].defined() ? features[t].dim(0) : nodeIds[t].defined() ? nodeIds[t].dim(0) : 0);
    return net_.model().forward(features, nodeIds, net_.model().relationEdges(edgeIndex, edgeType, rows),
                                targetRows);
  }
  // node_property refuses --model hgt with batches on the simulated IPU before building it (app/HeteroNodeProgram.cpp).
  void setBatchLayout(const TypedBatchLayout&) override {
    throw std::invalid_argument("hgt's blocks run the whole graph on the simulated IPU: its batches train on the CPU");
  }

 private:
  static HeteroHGTOptions options(const HeteroNodeModelSpec& spec) {
    HeteroHGTOptions o;
    o.nodeTypes = spec.nodeTypes;
    o.edgeTypes = spec.edgeTypes;
    o.targetType = spec.nodeTypes.at(static_cast<size_t>(spec.targetType)).name;
    o.hidden = spec.hidden;
    o.outChannels = spec.numClasses;
    o.layers = spec.layers;
    o.heads = spec.heads;
    o.layerNorm = spec.norm == "layer";
    return o;
  }

  HeteroHGTBlocks net_;
  std::vector<std::pair<EdgeType, Tensor>> wholeGraph_;  // the dataset's relations (setWholeGraphRelations)
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

// HGT's memory: its weights (the featureless types' embeddings [N_t, hidden] first) with their gradients, Adam's
// moments and the best epoch's copy; the input rows; per layer, each relation keeps its sources' keys and values
// [N_src, hidden] and, per edge, its source, attention and the edges grouped by target (24 bytes at 2 heads; the
// backward's about as much again, counted here too), and each type a few [N_t, hidden] rows (queries, grouped
// messages, their GELU, the output, gradients; with --norm layer two more: the LayerNorm's output and its
// gradient). Every relation and type is counted in every layer: the last layer reads fewer (models/HeteroHGT.h), so
// this is an upper bound.
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
  const double rowsPerType = s.norm == "layer" ? 8 : 6;
  const double perLayer =
      sources * h * 2 * 4 + static_cast<double>(s.numEdges) * perEdge + nodes * h * rowsPerType * 4;
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

TypedBatchLayout wholeGraphLayout(const HeteroNodeModelSpec& spec) {
  TypedBatchLayout layout;
  for (const HeteroRGCNNodeType& t : spec.nodeTypes) {
    layout.rows.push_back(t.numNodes);
    layout.widths.push_back(std::max<int64_t>(t.features, 0));
  }
  layout.targetType = spec.targetType;
  layout.targetRows = spec.nodeTypes.at(static_cast<size_t>(spec.targetType)).numNodes;
  return layout;
}

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
