// PaddingReport: how much of an epoch's fixed-size batches is real data: real/total nodes, edges and graphs,
// plus the graphs skipped or trimmed because they did not fit (OverSizeStrategy).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace gnn {

struct Batch;

struct PaddingReport {
  int64_t batches = 0;
  int64_t realNodes = 0, totalNodes = 0;
  int64_t realEdges = 0, totalEdges = 0;
  int64_t realGraphs = 0, totalGraphs = 0;
  int64_t skipped = 0, trimmed = 0;
  /// Nodes and edges cut from trimmed batches (neighbour batches count them; other loaders trim whole graphs).
  int64_t trimmedNodes = 0, trimmedEdges = 0;
  /// Graphormer's node-pair blocks (batches with spatialPos only): Σ n² over the real graphs, and numGraphs · M²
  /// per batch for the blocks of side M that every graph slot gets.
  int64_t realNodePairs = 0, totalNodePairs = 0;

  /// Adds one batch's rows (real counts from the batch, totals from its fixed sizes).
  void add(const Batch& batch);
  void merge(const PaddingReport& other);
  double nodeEfficiency() const { return ratio(realNodes, totalNodes); }
  double edgeEfficiency() const { return ratio(realEdges, totalEdges); }
  double graphEfficiency() const { return ratio(realGraphs, totalGraphs); }
  double nodePairEfficiency() const { return ratio(realNodePairs, totalNodePairs); }
  /// Mean real graphs per batch.
  double realGraphsPerBatch() const { return batches ? static_cast<double>(realGraphs) / batches : 0.0; }
  /// The node-pair keys only when a batch had node-pair blocks.
  nlohmann::json toJson() const;
  std::string toString() const;

 private:
  static double ratio(int64_t a, int64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }
};

}  // namespace gnn
