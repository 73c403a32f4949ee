// NeighbourMeanFeatures: input features for a heterogeneous graph's featureless node types, each node's the mean of
// its featured neighbours' features, as the HGT authors prepare ogbn-mag (acbull/pyHGT,
// ogbn-mag/preprocess_ogbn_mag.py: an author's and a field of study's features are the row-normalised mean of their
// papers' features, an institution's the mean of its authors' features so made). It gives a type without features
// rows that say where its nodes sit before any training, where an embedding is learnt from the labels' gradients;
// node_property offers it as --featureless mean (embeddings remain its default: they learnt faster on the
// ogbn-mag-shaped graphs here). pyHGT also appends each node's log10 degree; that column is not added here.
//
//   HeteroGraph g = ...;  g.toUndirected();           // so authors receive their papers' edges
//   std::vector<std::string> filled = fillFeaturelessByNeighbourMean(g);   // {"author", "field_of_study", ...}
#pragma once
#include <string>
#include <vector>

#include "data/HeteroGraph.h"

namespace gnn {

/// Gives every featureless node type that receives edges from featured types float32 features [N_t, F]: node i's
/// row the mean, over all its incoming edges (of every relation) from the types featured at the start of the
/// round, of the source rows (zeros for a node no such edge reaches). Rounds repeat until no type is left or none
/// more is reached, so a type two hops from the features (ogbn-mag's institutions) takes its neighbours' means.
/// The sources of one type's round must agree on the width F: sources of another width than the first featured
/// source type's (in the graph's edge-type order) are left out. The sums run in edge order in double precision:
/// the same bits on every thread count. Returns the types filled, in the order filled.
std::vector<std::string> fillFeaturelessByNeighbourMean(HeteroGraph& g);

}  // namespace gnn
