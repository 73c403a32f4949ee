// SpatialEncoding: Graphormer's spatial encoding (Ying et al. 2021, eq. 6; graphormer_layers.py
// GraphAttnBias, spatial_pos_encoder): a learned bias per attention head for each shortest-path distance
// between two nodes. The table has Graphormer's num_spatial = 512 rows: row 0 is padding (zero, and it never
// gets a gradient: only masked attention entries read it), row d + 1 is distance d (0 .. 509), and row 511 is
// "unreachable" (510 in the stored encodings), as Graphormer's collator adds 1 to every distance and pads
// with 0. N(0, 0.02), padding row zero (init_graphormer_params).
//
//   SpatialEncoding spatial(8, gen);
//   Variable b = spatial.forward(batch.spatialPos);   // [numGraphs, M, M, 8], M = batch.maxNodesPerGraph
#pragma once
#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

class SpatialEncoding : public Module {
 public:
  static constexpr int64_t kDistances = 512;
  SpatialEncoding(int64_t heads, Generator& gen, DType dtype = DType::F32, int64_t distances = kDistances);
  /// spatialPos int64 [G·M, M] (the batch's node-pair blocks: distances, -1 = padding) -> [G, M, M, heads].
  Variable forward(const Tensor& spatialPos) const;
  std::unique_ptr<Module> clone() const override;
  Variable& table() { return *table_; }

 private:
  int64_t heads_, distances_;
  DType dtype_;
  Variable* table_;
};

}  // namespace gnn
