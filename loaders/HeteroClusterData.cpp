#include "loaders/HeteroClusterData.h"

#include <algorithm>
#include <functional>

#include "data/HeteroToHomogeneous.h"
#include "gnn/system/Check.h"
#include "gnn/system/SystemInfo.h"
#include "loaders/ClusterData.h"

namespace gnn {

namespace {

// The sum of the k largest of `v`.
int64_t largestSum(std::vector<int64_t> v, int64_t k) {
  const auto end = v.begin() + std::min<int64_t>(k, static_cast<int64_t>(v.size()));
  std::partial_sort(v.begin(), end, v.end(), std::greater<>());
  int64_t sum = 0;
  for (auto it = v.begin(); it != end; ++it) sum += *it;
  return sum;
}

}  // namespace

HeteroClusterData::HeteroClusterData(const HeteroGraph& graph, int64_t numClusters, uint64_t seed)
    : nodeTypes_(graph.nodeTypes()), edgeTypes_(graph.edgeTypes()), numClusters_(numClusters) {
  graph.validate();
  // The edges alone, every type's shifted by its offset: METIS sees one graph over all nodes, as cluster_gcn.py's
  // to_homogeneous gives it.
  ToHomogeneousOptions ho;
  ho.nodeAttrs = std::vector<std::string>{};
  ho.edgeAttrs = std::vector<std::string>{};
  ho.addNodeType = ho.addEdgeType = false;
  const HomogeneousGraph h = toHomogeneous(graph, ho);
  offset_ = h.nodeSlices;
  Stopwatch sw;
  clusterOf_ = ClusterData::partition(h.numNodes, h.edgeIndex, numClusters, seed, &edgeCut_);
  partitionSeconds_ = sw.ms() / 1000;
  clusterNodes_ = ClusterData::clusterOrder(clusterOf_, numClusters);
  const size_t T = nodeTypes_.size();
  clusterPtr_.assign(static_cast<size_t>(numClusters) + 1, 0);
  counts_.assign(static_cast<size_t>(numClusters), std::vector<int64_t>(T, 0));
  for (size_t t = 0; t < T; ++t)
    for (int64_t v = offset_[t]; v < offset_[t + 1]; ++v) {
      const int64_t c = clusterOf_[static_cast<size_t>(v)];
      ++clusterPtr_[static_cast<size_t>(c) + 1];
      ++counts_[static_cast<size_t>(c)][t];
    }
  for (int64_t c = 0; c < numClusters; ++c) clusterPtr_[c + 1] += clusterPtr_[c];
  indexEdges(graph);
}

// Every edge type's incoming edges grouped by destination (a counting sort that keeps the edge order), and the
// edges into each cluster per type.
void HeteroClusterData::indexEdges(const HeteroGraph& graph) {
  inEdges_.assign(static_cast<size_t>(numClusters_), std::vector<int64_t>(edgeTypes_.size(), 0));
  for (size_t r = 0; r < edgeTypes_.size(); ++r) {
    Csc c;
    c.srcType = nodeTypeIndex(edgeTypes_[r].src);
    c.dstType = nodeTypeIndex(edgeTypes_[r].dst);
    const Tensor& ei = graph.edge(edgeTypes_[r]).edgeIndex;
    const int64_t E = graph.edge(edgeTypes_[r]).numEdges();
    GNN_CHECK_ARG(E < (int64_t{1} << 31), "HeteroClusterData: edge type ", edgeTypes_[r].str(), " has ", E,
                  " edges, more than its 32-bit index holds");
    const int64_t* src = E ? ei.data<int64_t>() : nullptr;
    const int64_t* dst = src ? src + E : nullptr;
    c.inPtr.assign(static_cast<size_t>(numNodes(c.dstType)) + 1, 0);
    for (int64_t e = 0; e < E; ++e) {
      ++c.inPtr[static_cast<size_t>(dst[e]) + 1];
      ++inEdges_[static_cast<size_t>(clusterOf(c.dstType, dst[e]))][r];
    }
    for (size_t v = 1; v < c.inPtr.size(); ++v) c.inPtr[v] += c.inPtr[v - 1];
    c.inSrc.resize(static_cast<size_t>(E));
    c.inEdge.resize(static_cast<size_t>(E));
    std::vector<int64_t> fill(c.inPtr.begin(), c.inPtr.end() - 1);
    for (int64_t e = 0; e < E; ++e) {
      const int64_t at = fill[static_cast<size_t>(dst[e])]++;
      c.inSrc[static_cast<size_t>(at)] = static_cast<int32_t>(src[e]);
      c.inEdge[static_cast<size_t>(at)] = static_cast<int32_t>(e);
    }
    csc_.push_back(std::move(c));
  }
}

int64_t HeteroClusterData::nodeTypeIndex(const std::string& type) const {
  const auto it = std::find(nodeTypes_.begin(), nodeTypes_.end(), type);
  GNN_CHECK_ARG(it != nodeTypes_.end(), "HeteroClusterData: no node type '", type, "'");
  return it - nodeTypes_.begin();
}

std::vector<int64_t> HeteroClusterData::clusterNodes(int64_t c, int64_t t) const {
  GNN_CHECK_ARG(c >= 0 && c < numClusters_, "HeteroClusterData: cluster ", c, " of ", numClusters_);
  std::vector<int64_t> out;
  for (int64_t k = clusterPtr_[static_cast<size_t>(c)]; k < clusterPtr_[static_cast<size_t>(c) + 1]; ++k) {
    const int64_t v = clusterNodes_[static_cast<size_t>(k)];
    if (v >= offset_[static_cast<size_t>(t)] && v < offset_[static_cast<size_t>(t) + 1])
      out.push_back(v - offset_[static_cast<size_t>(t)]);
  }
  return out;
}

HeteroSampledSubgraph HeteroClusterData::subgraph(const std::vector<int64_t>& clusters, int64_t firstType,
                                                  const std::vector<uint8_t>& first) const {
  const size_t T = nodeTypes_.size(), R = edgeTypes_.size();
  GNN_CHECK_ARG(firstType >= 0 && firstType < static_cast<int64_t>(T), "HeteroClusterData: node type ", firstType,
                " of ", T);
  GNN_CHECK_ARG(first.empty() || static_cast<int64_t>(first.size()) == numNodes(firstType),
                "HeteroClusterData: ", first.size(), " marks for ", numNodes(firstType), " nodes of '",
                nodeTypes_[static_cast<size_t>(firstType)], "'");
  HeteroSampledSubgraph s;
  s.nodeTypes = nodeTypes_;
  s.edgeTypes = edgeTypes_;
  s.inputType = firstType;
  s.nodes.resize(T);
  std::vector<int64_t> others;  // firstType's unmarked nodes, after its marked ones
  std::vector<uint8_t> taken(static_cast<size_t>(numClusters_), 0);
  for (int64_t c : clusters) {
    GNN_CHECK_ARG(c >= 0 && c < numClusters_ && !taken[static_cast<size_t>(c)], "HeteroClusterData: cluster ", c,
                  " is out of range [0, ", numClusters_, ") or listed twice");
    taken[static_cast<size_t>(c)] = 1;
    for (int64_t k = clusterPtr_[static_cast<size_t>(c)]; k < clusterPtr_[static_cast<size_t>(c) + 1]; ++k) {
      const int64_t v = clusterNodes_[static_cast<size_t>(k)];
      const int64_t t = std::upper_bound(offset_.begin(), offset_.end(), v) - offset_.begin() - 1;
      const int64_t id = v - offset_[static_cast<size_t>(t)];
      const bool marked = t != firstType || first.empty() || first[static_cast<size_t>(id)];
      (marked ? s.nodes[static_cast<size_t>(t)] : others).push_back(id);
    }
  }
  std::vector<int64_t>& lead = s.nodes[static_cast<size_t>(firstType)];
  s.numSeeds = first.empty() ? 0 : static_cast<int64_t>(lead.size());
  lead.insert(lead.end(), others.begin(), others.end());
  // Each node's row in the subgraph (-1 outside), over the homogeneous numbering.
  std::vector<int32_t> row(static_cast<size_t>(offset_.back()), -1);
  for (size_t t = 0; t < T; ++t)
    for (size_t j = 0; j < s.nodes[t].size(); ++j)
      row[static_cast<size_t>(offset_[t] + s.nodes[t][j])] = static_cast<int32_t>(j);
  s.src.resize(R);
  s.dst.resize(R);
  s.edgeIds.resize(R);
  for (size_t r = 0; r < R; ++r) {
    const Csc& c = csc_[r];
    const std::vector<int64_t>& dstNodes = s.nodes[static_cast<size_t>(c.dstType)];
    const int32_t* srcRow = row.data() + offset_[static_cast<size_t>(c.srcType)];
    for (size_t j = 0; j < dstNodes.size(); ++j) {
      const auto v = static_cast<size_t>(dstNodes[j]);
      for (int64_t k = c.inPtr[v]; k < c.inPtr[v + 1]; ++k) {
        const int32_t u = srcRow[c.inSrc[static_cast<size_t>(k)]];
        if (u < 0) continue;
        s.src[r].push_back(u);
        s.dst[r].push_back(static_cast<int64_t>(j));
        s.edgeIds[r].push_back(c.inEdge[static_cast<size_t>(k)]);
      }
    }
  }
  for (const auto& n : s.nodes) s.nodesPerHop.push_back({static_cast<int64_t>(n.size())});
  for (const auto& e : s.src) s.edgesPerHop.push_back({static_cast<int64_t>(e.size())});
  return s;
}

HeteroBatchSizes HeteroClusterData::worstCase(int64_t clustersPerBatch) const {
  GNN_CHECK_ARG(clustersPerBatch >= 1, "HeteroClusterData: clustersPerBatch = ", clustersPerBatch, " must be >= 1");
  HeteroBatchSizes s;
  std::vector<int64_t> v(static_cast<size_t>(numClusters_));
  for (size_t t = 0; t < nodeTypes_.size(); ++t) {
    for (size_t c = 0; c < v.size(); ++c) v[c] = counts_[c][t];
    s.numNodes[nodeTypes_[t]] = std::min(largestSum(v, clustersPerBatch), numNodes(static_cast<int64_t>(t))) + 1;
  }
  for (size_t r = 0; r < edgeTypes_.size(); ++r) {
    for (size_t c = 0; c < v.size(); ++c) v[c] = inEdges_[c][r];
    const auto total = static_cast<int64_t>(csc_[r].inSrc.size());
    s.numEdges[edgeTypes_[r]] = std::min(largestSum(v, clustersPerBatch), total) + 1;
  }
  return s;
}

int64_t HeteroClusterData::mostMarked(int64_t clustersPerBatch, int64_t t, const std::vector<uint8_t>& marked) const {
  GNN_CHECK_ARG(static_cast<int64_t>(marked.size()) == numNodes(t), "HeteroClusterData: ", marked.size(),
                " marks for ", numNodes(t), " nodes");
  std::vector<int64_t> v(static_cast<size_t>(numClusters_), 0);
  for (int64_t id = 0; id < numNodes(t); ++id)
    if (marked[static_cast<size_t>(id)]) ++v[static_cast<size_t>(clusterOf(t, id))];
  return largestSum(v, clustersPerBatch);
}

}  // namespace gnn
