// GraphormerEncodings: the structural inputs Graphormer computes per graph (Ying et al., "Do Transformers
// Really Perform Bad for Graph Representation?", NeurIPS 2021), computed once when a dataset is built.
// Semantics are those of Graphormer's preprocessing (graphormer/data/wrapper.py preprocess_item and
// graphormer/data/algos.pyx), so stored values equal what Graphormer itself would feed its model:
//
//   spatialPos [N, N]        shortest-path hop counts; 0 on the diagonal, 510 when unreachable
//   inDegree   [N]           number of edges leaving each node (= in-degree, the graph is symmetric)
//   edgeInput  [N, N, K, 3]  bond features along one shortest path i -> j, hop h in slot h < K: feature f of
//                            a hop is edge_attr[f] + 2 + 512 f (convert_to_single_emb + 1 in wrapper.py);
//                            -1 where there is no hop (i == j, unreachable, or path shorter than h + 1).
//                            The path is the one Floyd-Warshall's last-improving intermediate node picks
//                            (algos.get_all_edges), so ties between equal-length paths break as in Graphormer.
//                            Graphormer's collator keeps the first multi_hop_max_dist = K hops and adds 1.
//   pathVia    [N, N]        that path's "last improving intermediate" node (algos.floyd_warshall's path
//                            matrix), -1 when there is none: edgeInput for any K follows from it and the edges
//                            (data/EdgeInputGather.h), which is what the compact dataset stores.
//
//   GraphormerEncodings enc(5);   // one per thread: it keeps scratch buffers
//   enc.compute(moleculeGraph);
#pragma once
#include <cstdint>
#include <vector>

#include "data/MoleculeGraph.h"

namespace gnn {

class GraphormerEncodings {
 public:
  static constexpr int64_t kUnreachable = 510;    // algos.pyx floyd_warshall
  static constexpr int64_t kFeatureOffset = 512;  // wrapper.py convert_to_single_emb(offset=512)

  /// capAtLongestPath: a graph of n nodes gets K = min(multiHopMaxDist, max(1, n - 1)) hop slots (g.maxDist
  /// says how many): no shortest path has more than n - 1 hops, so the slots past it would only hold -1, and
  /// a K of 100,000 would otherwise cost n^2 x K per graph. The dataset writer pads graphs back to a common K.
  explicit GraphormerEncodings(int multiHopMaxDist, bool capAtLongestPath = false);
  int multiHopMaxDist() const { return k_; }
  /// The K a graph of n nodes gets (see capAtLongestPath).
  int hopSlots(int64_t n) const;

  /// Fills g.spatialPos, g.inDegree, g.pathVia, g.edgeInput and g.maxDist from g's edges and bond features.
  void compute(MoleculeGraph& g);
  /// The same without g.edgeInput (left empty; g.maxDist still says the K it would have): what a compact
  /// dataset stores, O(N^2) per graph instead of O(N^2 K).
  void computePaths(MoleculeGraph& g);

 private:
  void appendIntermediates(int i, int j);
  int k_;
  bool cap_;
  int n_ = 0;
  std::vector<int32_t> dist_, via_, edgeOf_;
  std::vector<int32_t> hops_;
};

}  // namespace gnn
