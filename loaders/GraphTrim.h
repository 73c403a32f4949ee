// trimGraph: cuts a graph down to at most maxNodes nodes and maxEdges edges by dropping a seeded random set of
// nodes (with their edges) and/or edges, as OverSizeStrategy asks. Kept nodes and edges keep their order.
#pragma once
#include <cstdint>

#include "data/Graph.h"
#include "gnn/Random.h"
#include "loaders/OverSizeStrategy.h"

namespace gnn {

/// `what` names the graph in error messages. nodeLevelTargets: y (and yMask) have one row per node and are
/// trimmed with the nodes. Throws std::invalid_argument when the strategy cannot make the graph fit
/// (Error, Skip, or TrimEdges with too many nodes).
Graph trimGraph(const Graph& g, int64_t maxNodes, int64_t maxEdges, OverSizeStrategy strategy, Generator& gen,
                bool nodeLevelTargets = false, const std::string& what = "graph");

namespace detail {
/// Rows `rows` of t (any dtype, rank >= 1), copied.
Tensor takeRows(const Tensor& t, const std::vector<int64_t>& rows);
/// The subgraph of g induced by the kept nodes (in the given order) restricted to the kept edges (edges whose
/// ends are both kept; keptEdges empty = all such edges).
Graph inducedSubgraph(const Graph& g, const std::vector<int64_t>& keptNodes, const std::vector<int64_t>* keptEdges,
                      bool nodeLevelTargets);
}  // namespace detail

}  // namespace gnn
