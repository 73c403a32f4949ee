// SelfLoopFill: PyG's `fill_value` of add_self_loops (GATConv, GATv2Conv): the edge features of the self-loop
// added at each node, either a reduction of the node's incoming edges' features ("mean", "add", "max", "min",
// over the edges that are not self-loops, 0 for a node with none) or one number for every feature.
//
//   SelfLoopFill fill = SelfLoopFill::fromPyG(args.at("fill_value"), "GATConv");   // "mean" or 0.5
//   Variable loops = fill.loopAttr(edgeAttr, edgeIndex, numNodes);                 // [N, edge_dim]
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "gnn/autograd/Variable.h"

namespace gnn {

struct SelfLoopFill {
  /// "mean", "add", "max" or "min"; empty: every feature is `value`.
  std::string reduce = "mean";
  double value = 0;

  /// From PyG's fill_value (a string or a number); std::invalid_argument naming the class for any other
  /// (PyG's "mul" and tensor values are not offered).
  static SelfLoopFill fromPyG(const nlohmann::json& fillValue, const std::string& className);
  /// The added loops' edge features [numNodes, D] for edge features edgeAttr [E, D] (gradient to edgeAttr for
  /// the reductions; a constant for a number).
  Variable loopAttr(const Variable& edgeAttr, const Tensor& edgeIndex, int64_t numNodes) const;
};

}  // namespace gnn
