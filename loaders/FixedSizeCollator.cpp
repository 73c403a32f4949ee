#include "loaders/FixedSizeCollator.h"

#include <algorithm>
#include <cstring>

#include "loaders/BatchFields.h"

namespace gnn {
namespace {

// Where each graph's rows go: real graphs first, then the padding graphs.
struct Layout {
  int64_t numNodes = 0, numEdges = 0, numGraphs = 0, real = 0, realNodes = 0, realEdges = 0;
  int64_t pairSide = 0;                    // M: side of each graph's node-pair block
  std::vector<int64_t> nodeOff, edgeOff;  // [numGraphs + 1]
};

std::string graphName(const std::vector<int64_t>& indices, size_t i) {
  return "graph " + std::to_string(indices.empty() ? static_cast<int64_t>(i) : indices[i]);
}

// The tensor all graphs that carry field f agree with (dtype, rank, sizes beyond the level's own dimensions),
// or nullptr when no graph carries it. Throws, naming the field and the graph, when a graph carries it with a
// wrong shape, with another type or layout than the others, or not at all while having rows of its level.
const Tensor* agreeingTemplate(const BatchField& f, FieldLevel level, const std::vector<const Graph*>& gs,
                               const std::vector<int64_t>& indices, bool nodeLevel) {
  const Tensor* tmpl = nullptr;
  size_t tmplAt = 0;
  for (size_t i = 0; i < gs.size(); ++i) {
    const Tensor& t = gs[i]->*f.inGraph;
    if (!t.defined()) continue;
    if (!hasFieldShape(f, *gs[i], nodeLevel)) checkFieldShape(f, *gs[i], nodeLevel, "collate: " + graphName(indices, i));
    if (!tmpl || (tmpl->numel() == 0 && t.numel() > 0)) tmpl = &t, tmplAt = i;
  }
  if (!tmpl) return nullptr;
  const int lead = level == FieldLevel::NodePair ? 2 : 1;  // dimensions that count nodes, edges or pairs
  for (size_t i = 0; i < gs.size(); ++i) {
    const Graph& g = *gs[i];
    const Tensor& t = g.*f.inGraph;
    if (!t.defined()) {
      // A graph may leave out a field it has no rows of (an empty molecule has no x); y_mask defaults to ones.
      GNN_CHECK_ARG(f.labelMask || levelRows(level, g.numNodes, g.numEdges()) == 0, "collate: ", graphName(indices, i),
                    " has no ", f.name, " but ", graphName(indices, tmplAt), " of the same batch has one (",
                    shapeString(tmpl->shape()), "): every graph of a batch must carry the same fields");
      continue;
    }
    bool same = t.dtype() == tmpl->dtype();
    if (level == FieldLevel::Graph) {
      same = same && t.numel() == tmpl->numel();
    } else if (!f.nodeIds && t.numel() > 0) {
      const Shape &a = t.shape(), &b = tmpl->shape();
      same = same && a.size() == b.size() && std::equal(a.begin() + lead, a.end(), b.begin() + lead);
    }
    GNN_CHECK_ARG(same, "collate: ", graphName(indices, i), "'s ", f.name, " (", dtypeName(t.dtype()), " ",
                  shapeString(t.shape()), ") does not match ", graphName(indices, tmplAt), "'s (",
                  dtypeName(tmpl->dtype()), " ", shapeString(tmpl->shape()), ") beyond its ", fieldLevelName(level),
                  " dimension(s)");
  }
  return tmpl;
}

// Copies `in` (rows of the same width) into rows starting at rowOffset.
void copyRows(Tensor& out, int64_t rowOffset, const Tensor& in) {
  if (!in.defined() || in.numel() == 0) return;
  const int64_t rows = out.shape()[0];
  size_t rowBytes = rows ? out.nbytes() / static_cast<size_t>(rows) : 0;
  std::memcpy(static_cast<unsigned char*>(out.raw()) + rowOffset * rowBytes, in.raw(), in.nbytes());
}

// edge_index: real edges with their graph's node offset added, then padding edges as self-loops on their padding
// graph's first node, so no real node ever receives a padded message.
Tensor collateEdgeIndex(const std::vector<const Graph*>& gs, const Layout& l) {
  Tensor ei({2, l.numEdges}, DType::I64);
  int64_t* src = ei.data<int64_t>();
  int64_t* dst = src + l.numEdges;
  for (int64_t gi = 0; gi < l.numGraphs; ++gi) {
    const int64_t node = l.nodeOff[gi], edge = l.edgeOff[gi], m = l.edgeOff[gi + 1] - edge;
    if (gi >= l.real) {
      std::fill(src + edge, src + edge + m, node);
      std::fill(dst + edge, dst + edge + m, node);
      continue;
    }
    if (m == 0) continue;
    const int64_t* e = gs[gi]->edgeIndex.data<int64_t>();
    for (int64_t j = 0; j < m; ++j) {
      src[edge + j] = e[j] + node;
      dst[edge + j] = e[m + j] + node;
    }
  }
  return ei;
}

// One field of the batch, by its level: real rows from the graphs, padding from the field's pad value.
Tensor collateField(const BatchField& f, const std::vector<const Graph*>& gs, const std::vector<int64_t>& indices,
                    const Layout& l, const FixedSizeOptions& padValues, bool nodeLevel, const Tensor& batchY) {
  const FieldLevel level = f.levelFor(nodeLevel);
  if (f.nodeIds) {
    agreeingTemplate(f, level, gs, indices, nodeLevel);
    return collateEdgeIndex(gs, l);
  }
  const Tensor* tmpl = agreeingTemplate(f, level, gs, indices, nodeLevel);
  if (f.labelMask && batchY.defined()) {
    // y_mask is shaped like the batch's y whether or not any graph has one; missing masks mean all labels.
    Tensor out(batchY.shape(), tmpl ? tmpl->dtype() : DType::U8);
    for (int64_t gi = 0; gi < l.real; ++gi) {
      const Graph& g = *gs[gi];
      const int64_t row = level == FieldLevel::Node ? l.nodeOff[gi] : gi;
      const int64_t rows = level == FieldLevel::Node ? g.numNodes : 1;
      if ((g.*f.inGraph).defined())
        copyRows(out, row, g.*f.inGraph);  // a graph-level mask of any shape is one row's bytes
      else
        detail::fillRows(out, row, row + rows, 1, f.name);
    }
    return out;  // padding rows stay 0
  }
  if (!tmpl) return Tensor();
  const double pad = f.padValue(padValues);
  Shape shape = tmpl->shape();
  switch (level) {
    case FieldLevel::Node:
    case FieldLevel::Edge: {
      const bool node = level == FieldLevel::Node;
      shape[0] = node ? l.numNodes : l.numEdges;
      Tensor out = Tensor::empty(shape, tmpl->dtype());
      for (int64_t gi = 0; gi < l.real; ++gi) copyRows(out, node ? l.nodeOff[gi] : l.edgeOff[gi], gs[gi]->*f.inGraph);
      detail::fillRows(out, node ? l.realNodes : l.realEdges, shape[0], pad, f.name);
      return out;
    }
    case FieldLevel::Graph: {
      // Each graph's values (shape [T], [1, T] or []) become one row of [numGraphs, T].
      const int64_t t = tmpl->numel();
      Tensor out = Tensor::empty({l.numGraphs, t}, tmpl->dtype());
      for (int64_t gi = 0; gi < l.real; ++gi) copyRows(out, gi, gs[gi]->*f.inGraph);  // its bytes are one row
      detail::fillRows(out, l.real, l.numGraphs, pad, f.name);
      return out;
    }
    case FieldLevel::NodePair: {
      // Graph g's block: rows [g·M, (g+1)·M) of [numGraphs·M, M, ...]; its N x N corner holds the graph's values.
      const int64_t m = l.pairSide;
      shape[0] = l.numGraphs * m;
      shape[1] = m;
      Tensor out = Tensor::empty(shape, tmpl->dtype());
      detail::fillRows(out, 0, shape[0], pad, f.name);
      const size_t entry = static_cast<size_t>(out.cols() / m) * dtypeSize(out.dtype());  // bytes of one (i, j)
      auto* dst = static_cast<unsigned char*>(out.raw());
      for (int64_t gi = 0; gi < l.real; ++gi) {
        const Tensor& t = gs[gi]->*f.inGraph;
        const int64_t n = gs[gi]->numNodes;
        if (!t.defined() || n == 0) continue;
        GNN_ASSERT(n <= m, "a graph larger than its node-pair block passed the capacity check");
        const auto* src = static_cast<const unsigned char*>(t.raw());
        for (int64_t i = 0; i < n; ++i)
          std::memcpy(dst + static_cast<size_t>((gi * m + i) * m) * entry, src + static_cast<size_t>(i * n) * entry,
                      static_cast<size_t>(n) * entry);
      }
      return out;
    }
  }
  return Tensor();
}

// The one collation routine: real graphs, then (numGraphs − real) padding graphs. When pad is null the sizes
// are the real totals, there is no padding graph, and node-pair blocks are as large as the largest graph (as
// Graphormer's own collator pads to the batch's max_node).
Batch collateImpl(const std::vector<const Graph*>& gs, const std::vector<int64_t>& indices, int64_t numNodes,
                  int64_t numEdges, int64_t numGraphs, const FixedSizeOptions* pad, bool nodeLevel) {
  GNN_CHECK_ARG(!gs.empty(), "collate: no graphs");
  GNN_CHECK_ARG(indices.empty() || indices.size() == gs.size(), "collate: ", indices.size(), " indices for ",
                gs.size(), " graphs");
  Layout l;
  l.numNodes = numNodes;
  l.numEdges = numEdges;
  l.numGraphs = numGraphs;
  l.real = static_cast<int64_t>(gs.size());
  int64_t largest = 0;
  for (size_t i = 0; i < gs.size(); ++i) {
    const Graph& g = *gs[i];
    if (pad)
      GNN_CHECK_ARG(pad->fitsGraph(g.numNodes, g.numEdges()), "FixedSizeCollator: ", graphName(indices, i), " has ",
                    g.numNodes, " nodes and ", g.numEdges(), " edges but a batch holds ", pad->graphLimits(),
                    ": raise the sizes or choose an OverSizeStrategy that skips or trims it");
    l.realNodes += g.numNodes;
    l.realEdges += g.numEdges();
    largest = std::max(largest, g.numNodes);
  }
  if (pad) {
    std::string why = pad->misfit(l.realNodes, l.realEdges, l.real);
    GNN_CHECK_ARG(why.empty(), "FixedSizeCollator: ", l.real, " graphs with ", l.realNodes, " nodes and ",
                  l.realEdges, " edges do not fit: ", why);
  }
  l.pairSide = pad ? pad->maxGraphNodes() : std::max<int64_t>(largest, 1);

  // Leftover rows split evenly over the padding graphs: the first (leftover % padGraphs) take one more.
  const int64_t padGraphs = numGraphs - l.real;
  l.nodeOff.assign(static_cast<size_t>(numGraphs) + 1, 0);
  l.edgeOff.assign(static_cast<size_t>(numGraphs) + 1, 0);
  for (int64_t gi = 0; gi < numGraphs; ++gi) {
    int64_t n, m;
    if (gi < l.real) {
      n = gs[gi]->numNodes;
      m = gs[gi]->numEdges();
    } else {
      const int64_t k = gi - l.real, leftNodes = numNodes - l.realNodes, leftEdges = numEdges - l.realEdges;
      n = leftNodes / padGraphs + (k < leftNodes % padGraphs ? 1 : 0);
      m = leftEdges / padGraphs + (k < leftEdges % padGraphs ? 1 : 0);
    }
    l.nodeOff[gi + 1] = l.nodeOff[gi] + n;
    l.edgeOff[gi + 1] = l.edgeOff[gi] + m;
  }
  GNN_ASSERT(l.nodeOff.back() == numNodes && l.edgeOff.back() == numEdges, "padding rows miscounted");

  Batch b;
  b.numNodes = numNodes;
  b.numEdges = numEdges;
  b.numGraphs = numGraphs;
  b.numRealNodes = l.realNodes;
  b.numRealEdges = l.realEdges;
  b.numRealGraphs = l.real;
  b.maxNodesPerGraph = l.pairSide;
  b.graphIndex = indices;
  const FixedSizeOptions defaults;  // pad values of DataLoader batches (only node-pair blocks have padding)
  for (const BatchField& f : batchFields())
    b.*f.inBatch = collateField(f, gs, indices, l, pad ? *pad : defaults, nodeLevel, b.y);

  Tensor batchVec({numNodes}, DType::I64);
  Tensor ptr = Tensor::fromVector(l.nodeOff), edgePtr = Tensor::fromVector(l.edgeOff);
  Tensor gm({numGraphs}, DType::U8), nm({numNodes}, DType::U8), em({numEdges}, DType::U8);
  int64_t* bv = batchVec.data<int64_t>();
  for (int64_t gi = 0; gi < numGraphs; ++gi) std::fill(bv + l.nodeOff[gi], bv + l.nodeOff[gi + 1], gi);
  std::fill(gm.data<uint8_t>(), gm.data<uint8_t>() + l.real, uint8_t{1});
  std::fill(nm.data<uint8_t>(), nm.data<uint8_t>() + l.realNodes, uint8_t{1});
  std::fill(em.data<uint8_t>(), em.data<uint8_t>() + l.realEdges, uint8_t{1});
  b.batch = batchVec;
  b.ptr = ptr;
  b.edgePtr = edgePtr;
  b.graphsMask = gm;
  b.nodesMask = nm;
  b.edgesMask = em;
  return b;
}

}  // namespace

FixedSizeCollator::FixedSizeCollator(FixedSizeOptions options, bool nodeLevelTargets)
    : options_(options), nodeLevelTargets_(nodeLevelTargets) {
  options_.validate();
}

bool FixedSizeCollator::fits(int64_t nodes, int64_t edges, int64_t count) const {
  return options_.fits(nodes, edges, count);
}

Batch FixedSizeCollator::collate(const std::vector<const Graph*>& graphs, const std::vector<int64_t>& indices) const {
  return collateImpl(graphs, indices, options_.numNodes, options_.numEdges, options_.numGraphs, &options_,
                     nodeLevelTargets_);
}

Batch FixedSizeCollator::collate(const std::vector<Graph>& graphs, const std::vector<int64_t>& indices) const {
  std::vector<const Graph*> ptrs;
  ptrs.reserve(graphs.size());
  for (const Graph& g : graphs) ptrs.push_back(&g);
  return collate(ptrs, indices);
}

Batch FixedSizeCollator::concatenate(const std::vector<const Graph*>& graphs, const std::vector<int64_t>& indices,
                                     bool nodeLevelTargets) {
  int64_t n = 0, m = 0;
  for (const Graph* g : graphs) {
    n += g->numNodes;
    m += g->numEdges();
  }
  return collateImpl(graphs, indices, n, m, static_cast<int64_t>(graphs.size()), nullptr, nodeLevelTargets);
}

}  // namespace gnn
