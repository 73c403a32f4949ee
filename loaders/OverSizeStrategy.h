// OverSizeStrategy: what a fixed-size loader does with a graph that cannot fit a batch even on its own.
#pragma once
#include <string>

#include "gnn/system/Check.h"

namespace gnn {

enum class OverSizeStrategy {
  /// Throw std::invalid_argument naming the graph index, its size and the limit (default).
  Error,
  /// Leave the graph out; counted in the PaddingReport.
  Skip,
  /// Drop a seeded random set of nodes (and their edges) until the graph fits.
  TrimNodes,
  /// Drop a seeded random set of edges; a graph with too many nodes is still an error.
  TrimEdges,
  /// Drop nodes down to the node limit, then edges down to the edge limit.
  TrimNodesAndEdges,
};

inline const char* overSizeStrategyName(OverSizeStrategy s) {
  switch (s) {
    case OverSizeStrategy::Error: return "error";
    case OverSizeStrategy::Skip: return "skip";
    case OverSizeStrategy::TrimNodes: return "trim_nodes";
    case OverSizeStrategy::TrimEdges: return "trim_edges";
    case OverSizeStrategy::TrimNodesAndEdges: return "trim_nodes_and_edges";
  }
  return "?";
}

inline OverSizeStrategy parseOverSizeStrategy(const std::string& s) {
  if (s == "error") return OverSizeStrategy::Error;
  if (s == "skip") return OverSizeStrategy::Skip;
  if (s == "trim_nodes") return OverSizeStrategy::TrimNodes;
  if (s == "trim_edges") return OverSizeStrategy::TrimEdges;
  if (s == "trim_nodes_and_edges" || s == "trim") return OverSizeStrategy::TrimNodesAndEdges;
  invalidArgument("unknown over-size strategy '", s, "': use error, skip, trim_nodes, trim_edges or trim");
}

}  // namespace gnn
