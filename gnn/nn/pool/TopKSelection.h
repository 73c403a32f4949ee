// TopKSelection: the node selection PyG 2.3.1's TopKPooling and SAGPooling share (torch_geometric.nn.pool.topk and
// filter_adj): per graph of a sorted batch vector, the k = ceil(ratio n) nodes of highest score (ratio >= 1: the
// min(int(ratio), n) highest), graph by graph, highest first; the kept nodes' rows scaled by their score (times
// the multiplier); the edges between kept nodes, renumbered, in their order. ceil(ratio n) is taken in the scores'
// dtype, as PyG takes it (0.3 x 10 rounds up to 4). With fixedSize the result keeps a static shape for a
// fixed-size batch: ceil(ratio N) + G node rows and E edge rows whatever was kept, the rows past the kept ones
// zeros in the last graph (a fixed-size batch's padding graph) with nodesMask 0, the edges past the kept ones
// self-loops on the last row with edgesMask 0.
#pragma once
#include "gnn/autograd/Variable.h"

namespace gnn {

struct PooledGraph {
  Variable x;          ///< [K, F] the kept rows times their score
  Tensor edgeIndex;    ///< [2, E'] int64
  Variable edgeAttr;   ///< [E', D] the kept edges' features (when given)
  Tensor batch;        ///< [K] int64, each row's graph
  Tensor perm;         ///< [K] int64, each row's node in the input (-1: a fixed-size filler row)
  Variable score;      ///< [K] the kept nodes' scores (0 for filler rows)
  Tensor nodesMask;    ///< [K] uint8, 1 = a kept node (fixedSize only)
  Tensor edgesMask;    ///< [E'] uint8, 1 = a kept edge (fixedSize only)
};

/// score [N] (differentiable), x [N, F], edgeIndex [2, E], batch [N] sorted (undefined: one graph), numGraphs;
/// edgeAttr optional [E, D]; realNodes optional uint8 [N]: nodes with 0 (padding) are never kept.
PooledGraph topKSelect(const Variable& x, const Variable& score, const Tensor& edgeIndex, const Variable& edgeAttr,
                       const Tensor& batch, int64_t numGraphs, double ratio, double multiplier, bool fixedSize,
                       const Tensor& realNodes = Tensor());

}  // namespace gnn
