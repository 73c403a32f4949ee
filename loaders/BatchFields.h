// BatchFields: the one table of the per-graph fields a Graph carries into a Batch, with each field's level
// (node, edge, graph or node pair) and its pad value (PopTorch Geometric's collate.py pads per field from one
// table, so a new field is padded the same way everywhere). The collator, trimming, cluster subgraphs,
// micro-batch stacking and Batch::validate all walk this table instead of listing fields themselves; a
// static_assert in BatchFields.cpp stops the build when Graph or Batch gains a tensor the table lacks.
//
//   | field               | level     | in a graph      | in a batch                      | padding               |
//   |---------------------|-----------|-----------------|---------------------------------|-----------------------|
//   | x, pos, z, in_degree| node      | [N, ...]        | [numNodes, ...]                 | nodePadValue          |
//   | train/valid/test_mask| node     | [N]             | [numNodes]                      | 0                     |
//   | edge_index          | edge      | [2, E]          | [2, numEdges], + node offsets   | self-loops (see Batch)|
//   | edge_attr           | edge      | [E, ...]        | [numEdges, ...]                 | edgePadValue          |
//   | y                   | graph*    | [T], [1, T], [] | [numGraphs, T]                  | graphPadValue         |
//   | y_mask              | graph*    | like y          | like y; 1 if a graph has no mask| 0                     |
//   | graph_features      | graph     | [F]             | [numGraphs, F]                  | 0                     |
//   | node_features       | node      | [N, F]          | [numNodes, F]                   | 0                     |
//   | spatial_pos         | node pair | [N, N]          | [numGraphs·M, M]                | pairPadValue          |
//   | edge_input          | node pair | [N, N, K, Fe]   | [numGraphs·M, M, K, Fe]         | pairPadValue          |
//
//   * node level (one row per node) when a loader's nodeLevelTargets is set. M = maxNodesPerGraph.
//   spatial_pos's 510 (unreachable) and edge_input's 512 per bond feature column are declared here too
//   (wireSentinel, columnOffset): 8-bit host I/O keeps them on the device.
//
//   std::vector<std::string> carried;
//   for (const BatchField& f : batchFields())
//     if ((g.*f.inGraph).defined()) carried.push_back(std::string(fieldLevelName(f.level)) + " " + f.name);
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/Graph.h"
#include "loaders/Batch.h"
#include "loaders/FixedSizeOptions.h"

namespace gnn {

/// Which rows a field has, in a graph and in a batch.
enum class FieldLevel {
  Node,      // [N, ...] -> [numNodes, ...]
  Edge,      // [E, ...] -> [numEdges, ...]
  Graph,     // one row of T values per graph -> [numGraphs, T]
  NodePair,  // [N, N, ...] -> [numGraphs·M, M, ...]: graph g's block is rows [g·M, (g+1)·M), its corner N x N
};
const char* fieldLevelName(FieldLevel level);

/// Which value fills a field's padding rows (and the unused part of node-pair blocks).
enum class FieldPad {
  NodeValue,   // FixedSizeOptions::nodePadValue
  EdgeValue,   // FixedSizeOptions::edgePadValue
  GraphValue,  // FixedSizeOptions::graphPadValue
  PairValue,   // FixedSizeOptions::pairPadValue
  Zero,        // masks: padding is never part of a split or a label
  SelfLoop,    // edge_index: a padding edge is a self-loop on its padding graph's first node
};

struct BatchField {
  const char* name;  // PyTorch Geometric's (and Graphormer's) name, used in every error: "edge_index"
  FieldLevel level;
  Tensor Graph::*inGraph;
  Tensor Batch::*inBatch;
  FieldPad pad;
  /// y and y_mask: graph-level, or node-level when a loader's nodeLevelTargets is set.
  bool target = false;
  /// edge_index: values are node ids, stored [2, E]: concatenation adds node offsets, trimming renumbers them,
  /// micro-batches are stacked along columns. Always present in a batch (padding edges need it).
  bool nodeIds = false;
  /// y_mask: a graph with targets but no mask has every label present (1).
  bool labelMask = false;
  /// Integer features stored with an offset per column of the last dimension, value + columnOffset x column
  /// (edge_input: Graphormer's convert_to_single_emb, 512 per bond feature); negative values (no hop) carry
  /// none. 8-bit host I/O sends the value without the offset and the device adds it back.
  int64_t columnOffset = 0;
  /// A value 8-bit host I/O sends as 255 and widens back (spatial_pos: 510, unreachable); kNoSentinel: none.
  static constexpr int64_t kNoSentinel = INT64_MIN;
  int64_t wireSentinel = kNoSentinel;

  FieldLevel levelFor(bool nodeLevelTargets) const {
    return target && nodeLevelTargets ? FieldLevel::Node : level;
  }
  double padValue(const FixedSizeOptions& options) const;
};

/// Every tensor a Graph carries into a Batch, each exactly once, in Graph's order.
const std::vector<BatchField>& batchFields();

/// The tensors only a Batch has, built by the collator from the graphs' sizes: batch, ptr, edgePtr and the
/// three masks (rows along dimension 0). Micro-batch stacking walks these after batchFields().
struct CollatorField {
  const char* name;
  Tensor Batch::*inBatch;
};
const std::vector<CollatorField>& collatorFields();

/// Rows a field of level `level` spans in one graph with n nodes and m edges (node pairs: n, the block side).
inline int64_t levelRows(FieldLevel level, int64_t n, int64_t m) {
  return level == FieldLevel::Edge ? m : level == FieldLevel::Graph ? 1 : n;
}

/// Throws std::invalid_argument naming the field and `what` (e.g. "graph 17") unless g's tensor for f has its
/// level's shape: node fields [N, ...], edge fields [E, ...] (edge_index [2, E] int64), node-pair fields
/// [N, N, ...], y_mask shaped like y. An undefined tensor passes.
void checkFieldShape(const BatchField& f, const Graph& g, bool nodeLevelTargets, const std::string& what);
/// The same test without the message (cheap enough for every graph of every batch).
bool hasFieldShape(const BatchField& f, const Graph& g, bool nodeLevelTargets);

/// The graph made of g's nodes `nodes` (in this order) and edges `edges`, whose edge_index the caller has already
/// renumbered: every field follows its level (node rows, edge rows, node-pair rows and columns; graph-level
/// fields are kept). Node and node-pair fields keep the values computed on the whole graph (OGB's atom features
/// include the degree, Graphormer's spatial_pos the distance in the whole graph): nothing is recomputed.
Graph selectSubgraph(const Graph& g, const std::vector<int64_t>& nodes, const std::vector<int64_t>& edges,
                     Tensor edgeIndex, bool nodeLevelTargets);

namespace detail {
/// Rows `rows` of t (any dtype, rank >= 1), copied.
Tensor takeRows(const Tensor& t, const std::vector<int64_t>& rows);
/// Entries (rows[i], rows[j]) of a node-pair tensor [N, N, ...], copied: [R, R, ...].
Tensor takePairs(const Tensor& t, const std::vector<int64_t>& rows);
/// Sets rows [begin, end) of t (any dtype) to v; throws, naming `field`, when v is not a value of t's dtype.
void fillRows(Tensor& t, int64_t begin, int64_t end, double v, const char* field);
}  // namespace detail

}  // namespace gnn
