#include "loaders/ClusterData.h"

#include <metis.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <utility>

#include "gnn/system/Parallel.h"
#include "gnn/tensor/TensorSpill.h"
#include "loaders/BatchFields.h"

namespace gnn {

std::vector<int64_t> ClusterData::partition(int64_t numNodes, const Tensor& edgeIndex, int64_t numClusters,
                                            uint64_t seed, int64_t* edgeCut,
                                            const std::vector<Tensor*>& spillWhileMetisRuns, int64_t* spilledBytes) {
  GNN_CHECK_ARG(numClusters >= 1 && numClusters <= std::max<int64_t>(numNodes, 1), "ClusterData: cannot split ",
                numNodes, " nodes into ", numClusters, " clusters: use 1 <= numClusters <= numNodes");
  GNN_CHECK_ARG(numNodes < std::numeric_limits<idx_t>::max(), "ClusterData: ", numNodes,
                " nodes exceed METIS's index type (", sizeof(idx_t) * 8, "-bit idx_t)");
  if (edgeCut) *edgeCut = 0;
  if (spilledBytes) *spilledBytes = 0;
  std::vector<int64_t> part(static_cast<size_t>(numNodes), 0);
  if (numClusters == 1) return part;

  // Symmetrised, self-loop-free, deduplicated CSR: METIS requires an undirected simple graph, and directed
  // input (u->v without v->u), repeated edges or self-loops otherwise make it fail or misjudge the cut.
  const int64_t m = edgeIndex.defined() ? edgeIndex.dim(1) : 0;
  const int64_t* e = m ? edgeIndex.data<int64_t>() : nullptr;
  std::vector<idx_t> xadj(static_cast<size_t>(numNodes) + 1, 0);
  for (int64_t j = 0; j < m; ++j) {
    int64_t u = e[j], v = e[m + j];
    GNN_CHECK_ARG(u >= 0 && u < numNodes && v >= 0 && v < numNodes, "ClusterData: edge ", j, " (", u, " -> ", v,
                  ") is out of range for ", numNodes, " nodes");
    if (u == v) continue;
    ++xadj[u + 1];
    ++xadj[v + 1];
  }
  for (int64_t i = 0; i < numNodes; ++i) xadj[i + 1] += xadj[i];
  GNN_CHECK_ARG(static_cast<int64_t>(xadj[numNodes]) >= 0, "ClusterData: too many edges for METIS's idx_t");
  std::vector<idx_t> adj(static_cast<size_t>(xadj[numNodes]));
  {
    std::vector<idx_t> fill(xadj.begin(), xadj.end() - 1);
    for (int64_t j = 0; j < m; ++j) {
      int64_t u = e[j], v = e[m + j];
      if (u == v) continue;
      adj[fill[u]++] = static_cast<idx_t>(v);
      adj[fill[v]++] = static_cast<idx_t>(u);
    }
  }
  // Sort and deduplicate each row (rows are independent: parallel and still deterministic), then compact.
  std::vector<idx_t> rowLen(static_cast<size_t>(numNodes));
#pragma omp parallel for num_threads(numThreads()) schedule(dynamic, 4096)
  for (int64_t i = 0; i < numNodes; ++i) {
    auto b = adj.begin() + xadj[i], en = adj.begin() + xadj[i + 1];
    std::sort(b, en);
    rowLen[i] = static_cast<idx_t>(std::unique(b, en) - b);
  }
  idx_t out = 0;
  for (int64_t i = 0; i < numNodes; ++i) {
    idx_t begin = xadj[i];
    xadj[i] = out;
    std::copy(adj.begin() + begin, adj.begin() + begin + rowLen[i], adj.begin() + out);
    out += rowLen[i];
  }
  xadj[numNodes] = out;
  // Symmetric input (each undirected edge listed both ways, as OGB's and PyG's graphs are) leaves half the
  // array as duplicates: give it back before METIS allocates its own copies.
  adj.resize(static_cast<size_t>(out));
  adj.shrink_to_fit();

  if (out == 0) {
    // No edges at all: METIS has nothing to cut; contiguous balanced blocks are an optimal partition.
    for (int64_t i = 0; i < numNodes; ++i) part[i] = i * numClusters / numNodes;
    return part;
  }
  idx_t nvtxs = static_cast<idx_t>(numNodes), ncon = 1, nparts = static_cast<idx_t>(numClusters), objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed & 0x7fffffff);
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> p(static_cast<size_t>(numNodes));
  // METIS's own memory is about 40 bytes per directed edge (its graph, edge weights, coarsened levels): at
  // ogbn-products' size (123M directed edges) 5 GB on top of the graph's 3 GB. What the caller can do
  // without meanwhile waits in temporary files (restored by the destructors should METIS fail).
  std::vector<std::unique_ptr<TensorSpill>> spills;
  for (Tensor* t : spillWhileMetisRuns) {
    spills.push_back(std::make_unique<TensorSpill>(*t));
    if (spilledBytes) *spilledBytes += static_cast<int64_t>(spills.back()->bytes());
  }
  int rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adj.data(), nullptr, nullptr, nullptr, &nparts, nullptr,
                               nullptr, options, &objval, p.data());
  GNN_CHECK_ARG(rc == METIS_OK, "ClusterData: METIS_PartGraphKway failed with code ", rc, " (",
                rc == METIS_ERROR_MEMORY ? "out of memory" : rc == METIS_ERROR_INPUT ? "bad input" : "error",
                ") for ", numNodes, " nodes, ", out / 2, " undirected edges, ", numClusters, " parts");
  std::vector<idx_t>().swap(adj);  // before the spilled tensors come back
  std::vector<idx_t>().swap(xadj);
  for (auto& s : spills) s->restore();
  for (int64_t i = 0; i < numNodes; ++i) part[i] = p[i];
  if (edgeCut) *edgeCut = objval;
  return part;
}

ClusterData::ClusterData(Graph graph, int64_t numClusters, uint64_t seed)
    : graph_(std::move(graph)), numClusters_(numClusters) {
  graph_.validate("ClusterData's graph");
  auto t0 = std::chrono::steady_clock::now();
  clusterOf_ = partition(graph_.numNodes, graph_.edgeIndex, numClusters, seed, &edgeCut_);
  partitionSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  index();
}

ClusterData::ClusterData(Graph graph, std::vector<int64_t> clusterOf, int64_t numClusters, int64_t edgeCut)
    : graph_(std::move(graph)), numClusters_(numClusters), clusterOf_(std::move(clusterOf)), edgeCut_(edgeCut) {
  graph_.validate("ClusterData's graph");
  GNN_CHECK_ARG(numClusters >= 1 && static_cast<int64_t>(clusterOf_.size()) == graph_.numNodes,
                "ClusterData: a partition of ", clusterOf_.size(), " nodes into ", numClusters,
                " clusters for a graph of ", graph_.numNodes, " nodes");
  for (int64_t c : clusterOf_)
    GNN_CHECK_ARG(c >= 0 && c < numClusters, "ClusterData: cluster ", c, " out of range [0, ", numClusters, ")");
  index();
}

std::vector<int64_t> ClusterData::clusterOrder(const std::vector<int64_t>& clusterOf, int64_t numClusters) {
  std::vector<int64_t> start(static_cast<size_t>(numClusters) + 1, 0);
  for (int64_t c : clusterOf) {
    GNN_CHECK_ARG(c >= 0 && c < numClusters, "ClusterData: cluster ", c, " out of range [0, ", numClusters, ")");
    ++start[c + 1];
  }
  for (int64_t c = 0; c < numClusters; ++c) start[c + 1] += start[c];
  std::vector<int64_t> order(clusterOf.size());
  for (size_t v = 0; v < clusterOf.size(); ++v) order[start[clusterOf[v]]++] = static_cast<int64_t>(v);
  return order;
}

void ClusterData::index() {
  const int64_t n = graph_.numNodes, m = graph_.numEdges();
  const int64_t numClusters = numClusters_;
  clusterPtr_.assign(static_cast<size_t>(numClusters) + 1, 0);
  for (int64_t v = 0; v < n; ++v) ++clusterPtr_[clusterOf_[v] + 1];
  for (int64_t c = 0; c < numClusters; ++c) clusterPtr_[c + 1] += clusterPtr_[c];
  clusterNodes_.resize(static_cast<size_t>(n));
  rankInCluster_.resize(static_cast<size_t>(n));
  std::vector<int64_t> fill(clusterPtr_.begin(), clusterPtr_.end() - 1);
  for (int64_t v = 0; v < n; ++v) {
    const int64_t c = clusterOf_[v];
    rankInCluster_[v] = static_cast<int32_t>(fill[c] - clusterPtr_[c]);
    clusterNodes_[fill[c]++] = v;
  }

  // Original edges grouped by source (stable, so edge order within a node is the input order): each one's target
  // (4 bytes an edge, read in order when a subgraph is cut, where the edge list itself would be read at random),
  // and its original id only when an edge-level field (edge_attr) has to follow the edges into subgraphs. An edge
  // list already sorted by source (OgbNodeDataset::permuteNodes leaves it so) is its own CSR: row pointers only.
  const bool nodeLevel = graph_.y.defined() && graph_.y.rank() >= 1 && graph_.y.dim(0) == graph_.numNodes;
  needEdgeIds_ = false;
  for (const BatchField& f : batchFields())
    needEdgeIds_ = needEdgeIds_ ||
                   (!f.nodeIds && f.levelFor(nodeLevel) == FieldLevel::Edge && (graph_.*f.inGraph).defined());
  // Const: reading must not bump the version of a buffer the caller may still hold.
  const int64_t* e = m ? std::as_const(graph_.edgeIndex).data<int64_t>() : nullptr;
  outPtr_.assign(static_cast<size_t>(n) + 1, 0);
  for (int64_t j = 0; j < m; ++j) ++outPtr_[e[j] + 1];
  for (int64_t v = 0; v < n; ++v) outPtr_[v + 1] += outPtr_[v];
  bySource_ = std::is_sorted(e, e + m);
  if (bySource_) {
    outDst_ = std::vector<int32_t>();
    outEdges_ = std::vector<int64_t>();
  } else {
    outDst_.resize(static_cast<size_t>(m));
    if (needEdgeIds_) outEdges_.resize(static_cast<size_t>(m));
    std::vector<int64_t> ofill(outPtr_.begin(), outPtr_.end() - 1);
    for (int64_t j = 0; j < m; ++j) {
      const int64_t k = ofill[e[j]]++;
      outDst_[k] = static_cast<int32_t>(e[m + j]);
      if (needEdgeIds_) outEdges_[k] = j;
    }
  }
  clusterOutEdges_.assign(static_cast<size_t>(numClusters), 0);
  for (int64_t v = 0; v < n; ++v) clusterOutEdges_[clusterOf_[v]] += outPtr_[v + 1] - outPtr_[v];
}

std::vector<int64_t> ClusterData::clusterNodes(int64_t c) const {
  GNN_CHECK_ARG(c >= 0 && c < numClusters_, "ClusterData: cluster ", c, " out of range [0, ", numClusters_, ")");
  return std::vector<int64_t>(clusterNodes_.begin() + clusterPtr_[c], clusterNodes_.begin() + clusterPtr_[c + 1]);
}

Graph ClusterData::subgraph(const std::vector<int64_t>& clusters, std::vector<int64_t>* nodeIds) const {
  std::vector<int64_t> nodes;
  for (int64_t c : clusters) {
    GNN_CHECK_ARG(c >= 0 && c < numClusters_, "ClusterData: cluster ", c, " out of range [0, ", numClusters_, ")");
    nodes.insert(nodes.end(), clusterNodes_.begin() + clusterPtr_[c], clusterNodes_.begin() + clusterPtr_[c + 1]);
  }
  // Membership through the clusters, so no per-call array over all nodes is needed.
  std::vector<uint8_t> chosen(static_cast<size_t>(numClusters_), 0);
  for (int64_t c : clusters) {
    GNN_CHECK_ARG(!chosen[c], "ClusterData: cluster ", c, " listed twice");
    chosen[c] = 1;
  }
  // Local id of a node: position of its cluster's block in `nodes` + rank within the block.
  std::vector<int64_t> blockStart(static_cast<size_t>(numClusters_), -1);
  int64_t off = 0;
  for (int64_t c : clusters) {
    if (blockStart[c] < 0) blockStart[c] = off;
    off += clusterSize(c);
  }
  // Two passes over the chosen nodes' out-edges: count the kept ones, then write them straight into the
  // [2, k] tensor (no intermediate lists of the batch's size).
  const int64_t m = graph_.numEdges();
  const int64_t* targets = bySource_ && m ? std::as_const(graph_.edgeIndex).data<int64_t>() + m : nullptr;
  auto target = [&](int64_t j) -> int64_t { return bySource_ ? targets[j] : outDst_[j]; };
  auto edgeId = [&](int64_t j) -> int64_t { return bySource_ ? j : outEdges_[j]; };
  auto kept = [&](int64_t j) { return chosen[clusterOf_[target(j)]] != 0; };
  int64_t k = 0;
  for (int64_t v : nodes)
    for (int64_t j = outPtr_[v]; j < outPtr_[v + 1]; ++j) k += kept(j);
  Tensor ei = Tensor::empty({2, k}, DType::I64);
  int64_t* src = ei.data<int64_t>();
  int64_t* dst = src + k;
  std::vector<int64_t> edges;
  if (needEdgeIds_) edges.reserve(static_cast<size_t>(k));
  int64_t next = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int64_t v = nodes[i];
    for (int64_t j = outPtr_[v]; j < outPtr_[v + 1]; ++j) {
      if (!kept(j)) continue;
      const int64_t w = target(j);
      if (needEdgeIds_) edges.push_back(edgeId(j));
      src[next] = static_cast<int64_t>(i);
      dst[next] = blockStart[clusterOf_[w]] + rankInCluster_[w];  // local id: its cluster's block, then its rank
      ++next;
    }
  }
  // Targets with one row per node are node-level (Cora's labels); anything else describes the whole graph.
  const bool nodeLevel = graph_.y.defined() && graph_.y.rank() >= 1 && graph_.y.dim(0) == graph_.numNodes;
  Graph out = selectSubgraph(graph_, nodes, edges, std::move(ei), nodeLevel);
  if (nodeIds) *nodeIds = std::move(nodes);
  return out;
}

FixedSizeOptions ClusterData::worstCaseOptions(int64_t clustersPerBatch) const {
  GNN_CHECK_ARG(clustersPerBatch >= 1 && clustersPerBatch <= numClusters_, "ClusterData: clustersPerBatch = ",
                clustersPerBatch, " must be in [1, ", numClusters_, "]");
  std::vector<int64_t> sizes(static_cast<size_t>(numClusters_)), edges(clusterOutEdges_);
  for (int64_t c = 0; c < numClusters_; ++c) sizes[c] = clusterSize(c);
  std::sort(sizes.rbegin(), sizes.rend());
  std::sort(edges.rbegin(), edges.rend());
  FixedSizeOptions o;
  o.numGraphs = 2;
  o.numNodes = o.rowsNeeded(std::accumulate(sizes.begin(), sizes.begin() + clustersPerBatch, int64_t{0}), 1);
  o.numEdges = o.rowsNeeded(std::accumulate(edges.begin(), edges.begin() + clustersPerBatch, int64_t{0}), 1);
  return o;
}

}  // namespace gnn
