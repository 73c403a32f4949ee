// EdgeInputGather: Graphormer's edge_input [N, N, K, 3] of one graph, gathered for any K from its edges, bond
// features, shortest-path lengths and path matrix (GraphormerEncodings' pathVia: Floyd-Warshall's last
// improving intermediate node of each pair, -1 for none). Graphormer walks the path i -> j recursively
// (algos.get_all_edges: the path of (i, via), via, the path of (via, j)), so the hops of (i, j) are the hops of
// (i, via) followed by those of (via, j); here pairs are filled in order of distance, each from its two
// shorter halves already filled, which gives the same hops without a walk per pair. Hop h carries the
// features of its edge (of duplicate edges the last, as Graphormer's attn_edge_type keeps it) as
// edge_attr[f] + 2 + 512 f; -1 marks slots without a hop. The compact dataset format stores the path matrix
// (N^2 items) instead of edge_input (N^2 K 3) and gathers it here when a graph is read.
//
//   EdgeInputGather gather;   // keeps scratch buffers: one per thread
//   gather.run(n, src, dst, numEdges, edgeAttr, spatialPos, via, k, out);   // out: int64 [n, n, k, 3]
#pragma once
#include <cstdint>
#include <vector>

namespace gnn {

class EdgeInputGather {
 public:
  /// `spatialPos` [n, n] (510: unreachable) and `via` [n, n] must describe paths made of the graph's edges, as
  /// NpzDataset checks when it opens a file: a reachable pair without a via is one edge at distance 1, and a
  /// via's halves are pairs whose distances add up to the pair's.
  void run(int64_t n, const int64_t* src, const int64_t* dst, int64_t numEdges, const int64_t* edgeAttr,
           const int64_t* spatialPos, const int32_t* via, int k, int64_t* out);

 private:
  std::vector<int32_t> edgeOf_;
  std::vector<int64_t> start_, order_;
};

}  // namespace gnn
