#include "loaders/GraphTrim.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "loaders/EpochSampler.h"

namespace gnn {
namespace detail {

Graph inducedSubgraph(const Graph& g, const std::vector<int64_t>& keptNodes, const std::vector<int64_t>* keptEdges,
                      bool nodeLevelTargets) {
  std::vector<int64_t> local(static_cast<size_t>(g.numNodes), -1);
  for (size_t i = 0; i < keptNodes.size(); ++i) local[keptNodes[i]] = static_cast<int64_t>(i);
  int64_t m = g.numEdges();
  const int64_t* e = m ? g.edgeIndex.data<int64_t>() : nullptr;
  std::vector<int64_t> edges;
  auto consider = [&](int64_t j) {
    if (local[e[j]] >= 0 && local[e[m + j]] >= 0) edges.push_back(j);
  };
  if (keptEdges)
    for (int64_t j : *keptEdges) consider(j);
  else
    for (int64_t j = 0; j < m; ++j) consider(j);

  int64_t k = static_cast<int64_t>(edges.size());
  Tensor ei({2, k}, DType::I64);
  int64_t* d = ei.data<int64_t>();
  for (int64_t i = 0; i < k; ++i) {
    d[i] = local[e[edges[i]]];
    d[k + i] = local[e[m + edges[i]]];
  }
  return selectSubgraph(g, keptNodes, edges, std::move(ei), nodeLevelTargets);
}

}  // namespace detail

Graph trimGraph(const Graph& g, int64_t maxNodes, int64_t maxEdges, OverSizeStrategy strategy, Generator& gen,
                bool nodeLevelTargets, const std::string& what, std::vector<int64_t>* keptNodesOut) {
  int64_t n = g.numNodes, m = g.numEdges();
  if (n <= maxNodes && m <= maxEdges) {
    if (keptNodesOut) {
      keptNodesOut->resize(static_cast<size_t>(n));
      std::iota(keptNodesOut->begin(), keptNodesOut->end(), int64_t{0});
    }
    return g;
  }
  bool trimNodes = strategy == OverSizeStrategy::TrimNodes || strategy == OverSizeStrategy::TrimNodesAndEdges;
  bool trimEdges = strategy == OverSizeStrategy::TrimEdges || strategy == OverSizeStrategy::TrimNodesAndEdges;
  GNN_CHECK_ARG(trimNodes || trimEdges, what, " has ", n, " nodes and ", m, " edges but a batch holds at most ",
                maxNodes, " nodes and ", maxEdges, " edges for one graph: raise numNodes/numEdges or choose a "
                "Skip or Trim over-size strategy");
  GNN_CHECK_ARG(trimNodes || n <= maxNodes, what, " has ", n, " nodes but a batch holds at most ", maxNodes,
                "; TrimEdges cannot drop nodes: use TrimNodes or TrimNodesAndEdges");
  const int64_t* e = m ? g.edgeIndex.data<int64_t>() : nullptr;

  std::vector<uint8_t> alive(static_cast<size_t>(n), 1);
  if (trimNodes) {
    // Drop nodes in a seeded random order: first down to the node limit, then (TrimNodes only, which may not
    // touch edges directly) further until the edges among the survivors fit too.
    std::vector<int64_t> dropOrder(static_cast<size_t>(n));
    std::iota(dropOrder.begin(), dropOrder.end(), int64_t{0});
    shuffleInPlace(dropOrder, gen);
    std::vector<std::vector<int64_t>> incident(static_cast<size_t>(n));
    for (int64_t j = 0; j < m; ++j) {
      incident[e[j]].push_back(j);
      if (e[m + j] != e[j]) incident[e[m + j]].push_back(j);
    }
    std::vector<uint8_t> edgeAlive(static_cast<size_t>(m), 1);
    int64_t nodes = n, edges = m;
    for (int64_t v : dropOrder) {
      bool needMore = nodes > maxNodes || (!trimEdges && edges > maxEdges);
      if (!needMore) break;
      alive[v] = 0;
      --nodes;
      for (int64_t j : incident[v])
        if (edgeAlive[j]) {
          edgeAlive[j] = 0;
          --edges;
        }
    }
  }
  std::vector<int64_t> keptNodes;
  for (int64_t v = 0; v < n; ++v)
    if (alive[v]) keptNodes.push_back(v);
  std::vector<int64_t> keptEdges;
  for (int64_t j = 0; j < m; ++j)
    if (alive[e[j]] && alive[e[m + j]]) keptEdges.push_back(j);
  if (trimEdges && static_cast<int64_t>(keptEdges.size()) > maxEdges) {
    shuffleInPlace(keptEdges, gen);
    keptEdges.resize(static_cast<size_t>(maxEdges));
    std::sort(keptEdges.begin(), keptEdges.end());
  }
  Graph out = detail::inducedSubgraph(g, keptNodes, &keptEdges, nodeLevelTargets);
  if (keptNodesOut) *keptNodesOut = std::move(keptNodes);
  return out;
}

}  // namespace gnn
