// ConvArgs: what the convolution layers' fromPyG() and forward() check alike: channel counts given as ints (PyG's
// (source, target) tuples where a layer has a bipartite form; -1 for lazy initialisation is not offered), the
// aggregation argument, node features of the layer's width; the count adjacency most linear aggregations multiply
// by (square, or sources to targets), and the edges grouped by target for the attention layers.
#pragma once
#include <string>
#include <utility>

#include "gnn/autograd/Variable.h"
#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/aggr/Aggregation.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/tensor/SparseMatrix.h"

namespace gnn {

/// The keyword's value as a positive int; invalid_argument naming the class otherwise.
int64_t intChannels(const PyGArgs& a, const std::string& key);
/// The keyword's value as PyG's Union[int, Tuple[int, int]]: an int n is (n, n), a list [source, target] of two
/// positive ints the bipartite widths; invalid_argument naming the class otherwise.
std::pair<int64_t, int64_t> pairChannels(const PyGArgs& a, const std::string& key);
/// "aggr" as PyG takes it: a name, a list of names (MultiAggregation) or {"class", "args"} (aggregationFromPyG
/// builds it and refuses what is not offered).
nlohmann::json aggregationArg(const PyGArgs& a);
/// x must be [N, in]: invalid_argument naming the layer and both shapes.
void checkNodeFeatures(const char* layer, const Variable& x, int64_t in);
/// Row = target, column = source, each entry the number of edges j -> i (duplicates count, self-loops are
/// ordinary edges); with mean each row divided by its sum (the in-degree; empty rows stay empty).
SparseMatrix countAdjacency(const Tensor& edgeIndex, int64_t numNodes, bool mean, DType dtype);
/// PyG's bipartite count adjacency [numDst, numSrc]: row = target (edgeIndex's row 1, into the numDst targets),
/// column = source (row 0, into the numSrc sources), entries as countAdjacency's; not cached (a relation's own
/// graph). invalid_argument naming the layer and the first edge outside.
SparseMatrix bipartiteCountAdjacency(const char* layer, const Tensor& edgeIndex, int64_t numSrc, int64_t numDst,
                                     bool mean, DType dtype);
/// Checks that every edge runs from one of numSrc sources to one of numDst targets (invalid_argument naming the
/// layer and the first edge outside).
void checkBipartiteEdges(const char* layer, const Tensor& edgeIndex, int64_t numSrc, int64_t numDst);
/// PyG's gcn_norm as a propagation matrix (row = target), cached per graph in `cache`: D^-1/2 (A + I) D^-1/2 with
/// one self-loop per node when normalize and addSelfLoops, without the loops when only normalize, the edges as they
/// are (no loops: PyG adds them in gcn_norm only) without normalize. SGConv, APPNP, TAGConv and GCN2Conv share it.
SparseMatrix gcnNormAdjacency(GCNConv::AdjacencyCache& cache, const Tensor& edgeIndex, int64_t numNodes, bool normalize,
                              bool addSelfLoops, DType dtype);
/// Whether an aggregation is linear in the messages (sum, mean), so one sparse product runs it.
bool isLinearAggregation(const Aggregation& aggregation);
/// The sum or mean of x's rows over each node's incoming edges as one product with the count adjacency (rows
/// divided by the in-degree for mean), the matrix cached per graph in `cache`; undefined for any other
/// aggregation (propagate then gathers the messages and reduces them).
Variable linearAggregate(const Aggregation& aggregation, GCNConv::AdjacencyCache& cache, const Tensor& edgeIndex,
                         const Variable& x, int64_t numNodes);

/// The edges grouped by target (stable: a target's edges keep their order) for the layers that take a softmax over
/// each node's incoming edges: the edge ids in that order, their sources and targets, and each target's group as
/// row pointers [N + 1]. std::invalid_argument for an edge outside the nodes.
struct EdgesByTarget {
  Tensor order, src, dst, ptr;
};
EdgesByTarget edgesByTarget(const char* layer, const Tensor& edgeIndex, int64_t numNodes);
/// An edge index int64 [2, E] from its rows (int64 [E] each): the fused message ops take the edges in the order a
/// layer chose (EdgesByTarget's, so per-edge rows are read one after the other).
Tensor edgeIndexOf(const Tensor& src, const Tensor& dst);

}  // namespace gnn
