// FixedSizeOptions: the fixed shape of every batch (nodes, edges, graphs incl. padding) and the pad values,
// as PopTorch Geometric's FixedSizeOptions. numGraphs >= 2 because one graph slot is always a padding graph.
//
//   auto opts = FixedSizeOptions::fromDataset(ds, 129);   // 128 real graphs + 1 padding graph, worst case
//   auto p = FixedSizeOptions::fromPercentile(ds, 129, 99.0);
//   std::cout << p.summary;                                 // states how many graphs it would skip or trim
#pragma once
#include <cstdint>
#include <string>

#include "data/Dataset.h"

namespace gnn {

struct FixedSizeOptions {
  int64_t numNodes = 0;
  int64_t numEdges = 0;
  int64_t numGraphs = 2;
  double nodePadValue = 0.0;   // x (and pos, z) of padding nodes
  double edgePadValue = 0.0;   // edge_attr of padding edges
  double graphPadValue = 0.0;  // y of padding graphs

  /// Throws std::invalid_argument unless numGraphs >= 2 and numNodes, numEdges >= numGraphs - 1 + 1.
  void validate() const;
  /// Largest real graph a batch can hold on its own: every other graph slot is a padding graph that needs one
  /// node and one edge (its self-loop).
  int64_t maxGraphNodes() const { return numNodes - (numGraphs - 1); }
  int64_t maxGraphEdges() const { return numEdges - (numGraphs - 1); }
  std::string toString() const;

  /// PopTorch Geometric's worst case: batchSize − 1 real graphs of the largest size, plus one node and one edge
  /// for the padding graph: numNodes = maxNodes·(batchSize−1)+1, numEdges = maxEdges·(batchSize−1)+1,
  /// numGraphs = batchSize. Nothing is ever skipped or trimmed.
  static FixedSizeOptions fromDataset(const Dataset& dataset, int64_t batchSize);

  /// Sizes for packing (StreamPack, PlannedPack) about realGraphs graphs of mean size per batch: numGraphs =
  /// realGraphs + 1, numNodes = ceil(meanNodes·realGraphs·(1+headroom)) + 1, likewise edges. With a small
  /// headroom the node budget and the graph cap run out together, which is what lets packing waste little.
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
