// EdgeEncoding: Graphormer's multi-hop edge encoding (Ying et al. 2021, eq. 7; graphormer_layers.py
// GraphAttnBias with edge_type "multi_hop"): for a node pair, the bond features along one shortest path; each
// hop's features are embedded per head and averaged, hop k's vector is multiplied by a learned [heads, heads]
// matrix (edge_dis_encoder), and the hops are summed and divided by the path length clamped to
// multi_hop_max_dist (5 for PCQM4M). The multiHopEdgeBias op does all of it in one pass per pair.
// The edge table has Graphormer's num_edges = 512·3 rows, indexed by the stored feature values (bond feature
// f with value v is row v + 2 + 512 f, data/GraphormerEncodings.h); -1 = no hop reads nothing, where
// Graphormer reads its zero padding row 0. N(0, 0.02) for both tables (init_graphormer_params); Graphormer
// sizes edge_dis_encoder for 128 hops and reads the first multi_hop_max_dist, which is all that is kept here.
//
//   EdgeEncoding edges(8, 5, gen);
//   Variable b = edges.forward(batch.edgeInput, batch.spatialPos);   // [numGraphs, M, M, 8]
#pragma once
#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

class EdgeEncoding : public Module {
 public:
  static constexpr int64_t kEdgeRows = 512 * 3;
  EdgeEncoding(int64_t heads, int64_t multiHopMaxDist, Generator& gen, DType dtype = DType::F32,
               int64_t edgeRows = kEdgeRows);
  /// edgeInput int64 [G·M, M, K, Fe] with K >= multiHopMaxDist, spatialPos int64 [G·M, M] -> [G, M, M,
  /// heads].
  Variable forward(const Tensor& edgeInput, const Tensor& spatialPos) const;
  std::unique_ptr<Module> clone() const override;
  int64_t multiHopMaxDist() const { return maxDist_; }

 private:
  int64_t heads_, maxDist_, edgeRows_;
  DType dtype_;
  Variable* table_;
  Variable* hopWeights_;
};

}  // namespace gnn
