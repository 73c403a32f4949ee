// HeteroBatchToHomogeneous: a fixed-size heterogeneous batch (loaders/HeteroBatch.h) as one typed graph, as
// data/HeteroToHomogeneous.h lays out the whole graph (PyG's to_homogeneous of the sampled HeteroData): every node
// type's fixed rows one after another in the batch's order (real rows, then padding rows), every edge type's
// fixed edges shifted by its types' offsets and concatenated, and edge_type numbered by the relations of the whole
// graph's layout, so that a model trained on batches and evaluated on the whole graph reads the same weights for
// the same relation. Padding edges stay between padding rows, so no real row receives a padded message.
//
//   HomogeneousGraph whole = toHomogeneous(graph, ho);                 // relations 0 .. R-1
//   HomogeneousGraph typed = heteroBatchToHomogeneous(batch, whole.edgeTypeNames);
//   typed.nodeOffset("paper");                                         // the target type's first (seed) row
#pragma once
#include <vector>

#include "data/HeteroToHomogeneous.h"
#include "loaders/HeteroBatch.h"

namespace gnn {

/// The layout above: numNodes, edgeIndex, nodeType, edgeType, nodeTypeNames, edgeTypeNames (= relations) and
/// the slices; no features (each type's are the batch's own). Throws std::invalid_argument for a batch edge type
/// that is not among `relations`.
HomogeneousGraph heteroBatchToHomogeneous(const HeteroBatch& batch, const std::vector<EdgeType>& relations);

}  // namespace gnn
