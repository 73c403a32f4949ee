// trimGraph: cuts a graph down to at most maxNodes nodes and maxEdges edges by dropping a seeded random set of
// nodes (with their edges) and/or edges, as OverSizeStrategy asks. Kept nodes and edges keep their order, and
// every field follows them by its level (loaders/BatchFields.h): node-pair fields (spatial_pos, edge_input) keep
// the rows and columns of the kept nodes. Like node features (OGB's include the degree), structural encodings
// keep the values of the whole graph; they are not recomputed for the trimmed one.
#pragma once
#include <cstdint>
#include <vector>

#include "data/Graph.h"
#include "gnn/system/Random.h"
#include "loaders/BatchFields.h"
#include "loaders/OverSizeStrategy.h"

namespace gnn {

/// `what` names the graph in error messages. nodeLevelTargets: y (and yMask) have one row per node and are
/// trimmed with the nodes. Throws std::invalid_argument when the strategy cannot make the graph fit
/// (Error, Skip, or TrimEdges with too many nodes). keptNodes (optional) receives the original id of each node
/// of the result.
Graph trimGraph(const Graph& g, int64_t maxNodes, int64_t maxEdges, OverSizeStrategy strategy, Generator& gen,
                bool nodeLevelTargets = false, const std::string& what = "graph",
                std::vector<int64_t>* keptNodes = nullptr);

namespace detail {
/// The subgraph of g induced by the kept nodes (in the given order) restricted to the kept edges (edges whose
/// ends are both kept; keptEdges empty = all such edges).
Graph inducedSubgraph(const Graph& g, const std::vector<int64_t>& keptNodes, const std::vector<int64_t>* keptEdges,
                      bool nodeLevelTargets);
}  // namespace detail

}  // namespace gnn
