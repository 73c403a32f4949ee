// GcnNormEdges: PyG's gcn_norm as an edge list, for the layers that weigh each edge by more than the normalisation
// (FAConv's attention): the graph's edges without their self-loops, then one self-loop per node (add_remaining_self_
// loops with unit weights) when asked, each with D^-1/2[src] D^-1/2[dst], D the in-degree counting duplicates and
// the added loop. GCNConv::normalizedAdjacency is the same normalisation merged into a matrix.
#pragma once
#include "gnn/tensor/Tensor.h"

namespace gnn {

struct NormalizedEdges {
  Tensor edgeIndex;  ///< int64 [2, E']: the kept edges in their order, then the added loops 0 .. N-1
  Tensor src, dst;   ///< its rows (views)
  Tensor weight;    ///< [E', 1] of the given dtype
};

NormalizedEdges gcnNormEdges(const Tensor& edgeIndex, int64_t numNodes, bool addSelfLoops, DType dtype);

}  // namespace gnn
