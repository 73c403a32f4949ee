// FixedSizeOptions: the fixed shape of every batch (nodes, edges, graphs incl. padding) and the pad values,
// as PopTorch Geometric's FixedSizeOptions. numGraphs >= 2 because one graph slot is always a padding graph.
// It also holds the one capacity rule of a fixed-size batch (fits, fitsGraph, rowsNeeded): the collator, the
// planner (every packing strategy), the cluster loader and the sizing helpers below all ask it.
//
//   auto opts = FixedSizeOptions::fromDataset(ds, 129);   // 128 real graphs + 1 padding graph, worst case
//   auto p = FixedSizeOptions::fromPercentile(ds, 129, 99.0);
//   std::cout << p.summary;                                 // states how many graphs it would skip or trim
//   bool ok = opts.fits(nodes, edges, graphs);              // would these real graphs fit one batch?
#pragma once
#include <cstdint>
#include <string>

#include "data/Dataset.h"

namespace gnn {

struct FixedSizeOptions {
  int64_t numNodes = 0;
  int64_t numEdges = 0;
  int64_t numGraphs = 2;
  double nodePadValue = 0.0;   // node fields of padding nodes: x, pos, z, in_degree
  double edgePadValue = 0.0;   // edge_attr of padding edges
  double graphPadValue = 0.0;  // y of padding graphs (and of padding nodes for node-level targets)
  /// Node-pair fields (spatial_pos, edge_input) outside a graph's N x N corner of its block, and every entry of
  /// a padding graph's block. -1 because our stored values are those of Graphormer's preprocessing
  /// (graphormer/data/wrapper.py), before its collator (graphormer/data/collator.py) adds 1 to every entry and
  /// pads with 0: with -1, batch + 1 is exactly Graphormer's batch, and -1 is no real value (distances are
  /// >= 0, edge_input already uses -1 for "no hop").
  double pairPadValue = -1.0;
  /// Largest real graph (in nodes) a batch takes, and the side of every graph's node-pair block (see Batch.h).
  /// 0 = no limit beyond the batch itself (numNodes - (numGraphs - 1)); the sizing helpers below set it to
  /// the dataset's largest graph, which keeps node-pair blocks small.
  int64_t maxNodesPerGraph = 0;

  /// Throws std::invalid_argument unless numGraphs >= 2, numNodes, numEdges >= numGraphs (room for a real graph
  /// of one node and one edge beside the padding graphs) and maxNodesPerGraph >= 0.
  void validate() const;

  // ---- The capacity rule, written once. Every padding graph needs one node and one edge (its self-loop), and
  // at least one graph slot is a padding graph. So `graphs` real graphs with `nodes` nodes and `edges` edges in
  // total fit a batch exactly when
  //     graphs <= numGraphs - 1,
  //     nodes + (numGraphs - graphs) <= numNodes,   edges + (numGraphs - graphs) <= numEdges,
  // and each graph on its own has at most maxGraphNodes() nodes (maxNodesPerGraph, when set).

  /// Rows (of nodes or of edges) a batch needs for `realRows` real rows in `realGraphs` real graphs plus one row
  /// for each of its numGraphs - realGraphs padding graphs.
  int64_t rowsNeeded(int64_t realRows, int64_t realGraphs) const { return realRows + (numGraphs - realGraphs); }
  /// Whether real graphs totalling (nodes, edges, graphs) fit one batch (the totals half of the rule).
  bool fits(int64_t nodes, int64_t edges, int64_t graphs) const {
    return graphs <= numGraphs - 1 && rowsNeeded(nodes, graphs) <= numNodes && rowsNeeded(edges, graphs) <= numEdges;
  }
  /// Real nodes (edges) a batch of `graphs` real graphs can hold in total.
  int64_t nodeBudget(int64_t graphs) const { return numNodes - rowsNeeded(0, graphs); }
  int64_t edgeBudget(int64_t graphs) const { return numEdges - rowsNeeded(0, graphs); }
  /// Largest real graph a batch can hold: alone, beside numGraphs - 1 padding graphs, and within
  /// maxNodesPerGraph. Also the side of a graph's node-pair block.
  int64_t maxGraphNodes() const;
  int64_t maxGraphEdges() const { return edgeBudget(1); }
  /// Whether one graph of (nodes, edges) fits a batch on its own (the per-graph half of the rule); graphs that
  /// do not are over-size (OverSizeStrategy).
  bool fitsGraph(int64_t nodes, int64_t edges) const { return nodes <= maxGraphNodes() && edges <= maxGraphEdges(); }
  /// Why (nodes, edges, graphs) do not fit, with the option to change and the value it needs ("raise numEdges to
  /// at least 62 or batch fewer graphs"); empty when they fit.
  std::string misfit(int64_t nodes, int64_t edges, int64_t graphs) const;
  /// "at most N nodes and E edges for one graph (...why...)": the per-graph limits, for error messages.
  std::string graphLimits() const;

  std::string toString() const;

  /// PopTorch Geometric's worst case: batchSize − 1 real graphs of the largest size, plus one node and one edge
  /// for the padding graph: numNodes = maxNodes·(batchSize−1)+1, numEdges = maxEdges·(batchSize−1)+1,
  /// numGraphs = batchSize, maxNodesPerGraph = maxNodes. Nothing of this dataset is ever skipped or trimmed.
  static FixedSizeOptions fromDataset(const Dataset& dataset, int64_t batchSize);

  /// Sizes for packing (StreamPack, PlannedPack) about realGraphs graphs of mean size per batch: numGraphs =
  /// realGraphs + 1, numNodes = ceil(meanNodes·realGraphs·(1+headroom)) + 1, likewise edges, never below what
  /// the largest graph needs alone; maxNodesPerGraph = the largest graph. With a small headroom the node budget
  /// and the graph cap run out together, which is what lets packing waste little.
  static FixedSizeOptions forPacking(const Dataset& dataset, int64_t realGraphs, double headroom = 0.01);

  struct PercentileSizing;
  /// Sizes slots for the given percentile of node and edge counts instead of the maximum:
  /// numNodes = p_nodes·(batchSize−1)+1, likewise edges. The result states how many graphs exceed a slot
  /// (PadToMax may then close a batch early) and how many exceed even a whole batch (skipped or trimmed).
  static PercentileSizing fromPercentile(const Dataset& dataset, int64_t batchSize, double percentile);
};

struct FixedSizeOptions::PercentileSizing {
  FixedSizeOptions options;
  int64_t aboveSlot = 0;   // graphs with more nodes or edges than one slot (p-th percentile)
  int64_t overSize = 0;    // graphs that cannot fit a batch alone: skipped or trimmed by OverSizeStrategy
  std::string summary;     // one human-readable line
};

}  // namespace gnn
