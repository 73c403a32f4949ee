#include "loaders/HeteroBatchCollate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>

#include "gnn/system/Check.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {

// Rows `ids` of `src` (any dtype, any trailing shape) into the first rows of a [rows, ...] tensor filled with pad.
Tensor gatherPadded(const Tensor& src, const std::vector<int64_t>& ids, int64_t rows, double pad) {
  Shape shape = src.shape();
  shape[0] = rows;
  Tensor out = Tensor::full(shape, pad, src.dtype());
  const size_t rowBytes = static_cast<size_t>(src.cols()) * dtypeSize(src.dtype());
  const auto* from = static_cast<const unsigned char*>(src.raw());
  auto* to = static_cast<unsigned char*>(out.raw());
  for (size_t r = 0; r < ids.size(); ++r)
    std::memcpy(to + r * rowBytes, from + static_cast<size_t>(ids[r]) * rowBytes, rowBytes);
  return out;
}

Tensor prefixOnes(int64_t rows, int64_t real) {
  Tensor m = Tensor::zeros({rows}, DType::U8);
  std::fill(m.data<uint8_t>(), m.data<uint8_t>() + real, uint8_t{1});
  return m;
}

int64_t rowsOf(const std::vector<int64_t>& v) { return static_cast<int64_t>(v.size()); }

// Keeps the edges of edge type r between kept rows, in order, up to its room; the per-hop counts follow.
int64_t trimEdgeType(HeteroSampledSubgraph& sub, size_t r, int64_t ks, int64_t kd, int64_t room) {
  std::vector<int64_t>& src = sub.src[r];
  std::vector<int64_t>& dst = sub.dst[r];
  std::vector<int64_t>& ids = sub.edgeIds[r];
  std::vector<int64_t>& perHop = sub.edgesPerHop[r];
  size_t w = 0, hop = 0;
  int64_t hopEnd = perHop.empty() ? 0 : perHop[0];
  std::vector<int64_t> keptPerHop(perHop.size(), 0);
  for (size_t k = 0; k < src.size(); ++k) {
    while (static_cast<int64_t>(k) >= hopEnd && hop + 1 < perHop.size()) hopEnd += perHop[++hop];
    if (src[k] < ks && dst[k] < kd && static_cast<int64_t>(w) < room) {
      src[w] = src[k];
      dst[w] = dst[k];
      ids[w] = ids[k];
      ++w;
      if (!keptPerHop.empty()) ++keptPerHop[hop];
    }
  }
  const int64_t cut = static_cast<int64_t>(src.size() - w);
  src.resize(w);
  dst.resize(w);
  ids.resize(w);
  perHop = keptPerHop;
  return cut;
}

HeteroBatch::EdgeRows collateEdges(const HeteroGraph& graph, const HeteroSampledSubgraph& sub, size_t r,
                                   int64_t rows, double pad) {
  const EdgeStore& store = graph.edge(sub.edgeTypes[r]);
  HeteroBatch::EdgeRows e;
  e.type = sub.edgeTypes[r];
  e.numEdges = rows;
  e.numRealEdges = rowsOf(sub.src[r]);
  // Padding edges join the first padding rows of the source and the destination type.
  const int64_t padSrc = rowsOf(sub.nodes[static_cast<size_t>(sub.nodeTypeIndex(e.type.src))]);
  const int64_t padDst = rowsOf(sub.nodes[static_cast<size_t>(sub.nodeTypeIndex(e.type.dst))]);
  e.edgeIndex = Tensor::empty({2, e.numEdges}, DType::I64);
  int64_t* ei = e.edgeIndex.data<int64_t>();
  std::copy(sub.src[r].begin(), sub.src[r].end(), ei);
  std::fill(ei + e.numRealEdges, ei + e.numEdges, padSrc);
  std::copy(sub.dst[r].begin(), sub.dst[r].end(), ei + e.numEdges);
  std::fill(ei + e.numEdges + e.numRealEdges, ei + 2 * e.numEdges, padDst);
  if (store.edgeAttr.defined()) e.edgeAttr = gatherPadded(store.edgeAttr, sub.edgeIds[r], e.numEdges, pad);
  e.edgesMask = prefixOnes(e.numEdges, e.numRealEdges);
  e.edgeIds = sub.edgeIds[r];
  e.edgesPerHop = sub.edgesPerHop[r];
  return e;
}

}  // namespace

std::string HeteroBatchSizes::toString() const {
  std::ostringstream os;
  const char* sep = "";
  os << "nodes {";
  for (const auto& [t, n] : numNodes) os << std::exchange(sep, ", ") << t << ": " << n;
  sep = "";
  os << "}, edges {";
  for (const auto& [t, n] : numEdges) os << std::exchange(sep, ", ") << t.str() << ": " << n;
  os << "}";
  return os.str();
}

HeteroBatchRows heteroBatchRows(const HeteroGraph& graph, const HeteroBatchSizes& sizes, const std::string& who) {
  HeteroBatchRows rows;
  for (const std::string& t : graph.nodeTypes()) {
    const auto it = sizes.numNodes.find(t);
    GNN_CHECK_ARG(it != sizes.numNodes.end() && it->second >= 1, who, ": node type '", t,
                  "' needs a size of at least 1 (its padding row): set sizes.numNodes[\"", t, "\"]");
    rows.nodes.push_back(it->second);
  }
  for (const EdgeType& e : graph.edgeTypes()) {
    const auto it = sizes.numEdges.find(e);
    GNN_CHECK_ARG(it != sizes.numEdges.end() && it->second >= 1, who, ": edge type ", e.str(),
                  " needs a size of at least 1 (its padding edge)");
    rows.edges.push_back(it->second);
  }
  for (const auto& [t, n] : sizes.numNodes)
    GNN_CHECK_ARG(graph.hasNodeType(t), who, ": sizes name node type '", t, "', which the graph does not have");
  for (const auto& [e, n] : sizes.numEdges)
    GNN_CHECK_ARG(graph.hasEdgeType(e), who, ": sizes name edge type ", e.str(), ", which the graph does not have");
  return rows;
}

bool heteroSubgraphOverSize(const HeteroSampledSubgraph& sub, const HeteroBatchRows& rows) {
  for (size_t t = 0; t < sub.nodes.size(); ++t)
    if (rowsOf(sub.nodes[t]) > rows.nodes[t] - 1) return true;
  for (size_t r = 0; r < sub.src.size(); ++r)
    if (rowsOf(sub.src[r]) > rows.edges[r] - 1) return true;
  return false;
}

std::string heteroOverSizeReport(const HeteroSampledSubgraph& sub, const HeteroBatchRows& rows) {
  std::ostringstream why;
  for (size_t t = 0; t < sub.nodes.size(); ++t)
    if (rowsOf(sub.nodes[t]) > rows.nodes[t] - 1)
      why << " " << sub.nodes[t].size() << " nodes of '" << sub.nodeTypes[t] << "' (room for " << rows.nodes[t] - 1
          << ");";
  for (size_t r = 0; r < sub.src.size(); ++r)
    if (rowsOf(sub.src[r]) > rows.edges[r] - 1)
      why << " " << sub.src[r].size() << " edges of " << sub.edgeTypes[r].str() << " (room for " << rows.edges[r] - 1
          << ");";
  return why.str();
}

std::pair<int64_t, int64_t> trimHeteroSubgraph(HeteroSampledSubgraph& sub, const HeteroBatchRows& rows) {
  if (!heteroSubgraphOverSize(sub, rows)) return {0, 0};
  int64_t cutNodes = 0, cutEdges = 0;
  std::vector<int64_t> keep(sub.nodes.size());
  for (size_t t = 0; t < sub.nodes.size(); ++t) {
    keep[t] = std::min(rowsOf(sub.nodes[t]), rows.nodes[t] - 1);
    cutNodes += rowsOf(sub.nodes[t]) - keep[t];
    sub.nodes[t].resize(static_cast<size_t>(keep[t]));
    int64_t left = keep[t];
    for (int64_t& c : sub.nodesPerHop[t]) {
      c = std::min(c, left);
      left -= c;
    }
  }
  sub.numSeeds = std::min(sub.numSeeds, keep[static_cast<size_t>(sub.inputType)]);
  for (size_t r = 0; r < sub.src.size(); ++r) {
    const int64_t ks = keep[static_cast<size_t>(sub.nodeTypeIndex(sub.edgeTypes[r].src))];
    const int64_t kd = keep[static_cast<size_t>(sub.nodeTypeIndex(sub.edgeTypes[r].dst))];
    cutEdges += trimEdgeType(sub, r, ks, kd, rows.edges[r] - 1);
  }
  return {cutNodes, cutEdges};
}

HeteroBatch collateHeteroBatch(const HeteroGraph& graph, const HeteroSampledSubgraph& sub, const HeteroBatchRows& rows,
                               const HeteroBatchSizes& sizes) {
  GNN_CHECK_ARG(!heteroSubgraphOverSize(sub, rows), "collateHeteroBatch: the subgraph does not fit:",
                heteroOverSizeReport(sub, rows));
  HeteroBatch b;
  b.targetType = sub.nodeTypes[static_cast<size_t>(sub.inputType)];
  b.numSeeds = sub.numSeeds;
  for (size_t t = 0; t < sub.nodes.size(); ++t) {
    const NodeStore& store = graph.node(sub.nodeTypes[t]);
    HeteroBatch::NodeRows n;
    n.type = sub.nodeTypes[t];
    n.numNodes = rows.nodes[t];
    n.numRealNodes = rowsOf(sub.nodes[t]);
    if (store.x.defined()) n.x = gatherPadded(store.x, sub.nodes[t], n.numNodes, sizes.nodePadValue);
    n.nodeId = Tensor::zeros({n.numNodes}, DType::I64);
    std::copy(sub.nodes[t].begin(), sub.nodes[t].end(), n.nodeId.data<int64_t>());
    n.nodesMask = prefixOnes(n.numNodes, n.numRealNodes);
    n.nodesPerHop = sub.nodesPerHop[t];
    if (static_cast<int64_t>(t) == sub.inputType) {
      if (store.y.defined()) b.y = gatherPadded(store.y, sub.nodes[t], n.numNodes, sizes.labelPadValue);
      b.seedMask = prefixOnes(n.numNodes, sub.numSeeds);
    }
    b.nodes.push_back(std::move(n));
  }
  for (size_t r = 0; r < sub.src.size(); ++r)
    b.edges.push_back(collateEdges(graph, sub, r, rows.edges[r], sizes.edgePadValue));
  return b;
}

void addToReport(PaddingReport& report, const HeteroBatch& batch, int64_t cutNodes, int64_t cutEdges) {
  ++report.batches;
  for (const HeteroBatch::NodeRows& n : batch.nodes) {
    report.realNodes += n.numRealNodes;
    report.totalNodes += n.numNodes;
  }
  for (const HeteroBatch::EdgeRows& e : batch.edges) {
    report.realEdges += e.numRealEdges;
    report.totalEdges += e.numEdges;
  }
  report.realGraphs += 1;
  report.totalGraphs += 1;
  report.trimmed += (cutNodes > 0 || cutEdges > 0) ? 1 : 0;
  report.trimmedNodes += cutNodes;
  report.trimmedEdges += cutEdges;
}

HeteroBatchSizes heteroSizesOfBatches(int64_t count, const std::vector<std::string>& nodeTypes,
                                      const std::vector<EdgeType>& edgeTypes,
                                      const std::function<HeteroSampledSubgraph(int64_t)>& subgraphOf,
                                      const HeteroBatchSizes& bound, double margin) {
  const size_t T = nodeTypes.size(), R = edgeTypes.size();
  std::vector<std::vector<int64_t>> counts(static_cast<size_t>(count), std::vector<int64_t>(T + R, 0));
  parallelFor(count, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const HeteroSampledSubgraph s = subgraphOf(i);
      auto& c = counts[static_cast<size_t>(i)];
      for (size_t t = 0; t < T; ++t) c[t] = static_cast<int64_t>(s.nodes[t].size());
      for (size_t r = 0; r < R; ++r) c[T + r] = static_cast<int64_t>(s.src[r].size());
    }
  });
  auto sized = [&](size_t k, int64_t limit) {
    int64_t most = 0;
    for (const auto& c : counts) most = std::max(most, c[k]);
    return std::min(limit, static_cast<int64_t>(std::ceil(static_cast<double>(most) * (1 + margin))) + 1);
  };
  HeteroBatchSizes s;
  for (size_t t = 0; t < T; ++t) s.numNodes[nodeTypes[t]] = sized(t, bound.numNodes.at(nodeTypes[t]));
  for (size_t r = 0; r < R; ++r) s.numEdges[edgeTypes[r]] = sized(T + r, bound.numEdges.at(edgeTypes[r]));
  return s;
}

}  // namespace gnn
