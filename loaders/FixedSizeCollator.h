// FixedSizeCollator: turns a list of graphs into one Batch of exactly numNodes/numEdges/numGraphs rows
// (PopTorch Geometric's FixedSizeCollator). Real graphs first, then numGraphs − (real graphs) padding graphs
// sharing the leftover nodes and edges evenly; pad edges are self-loops on their pad graph's first node, so no
// real node ever receives a padded message and GCN's degree normalisation of real nodes is unchanged. Every
// field is placed by its level from the table in loaders/BatchFields.h (node-pair fields as per-graph blocks,
// see Batch.h); a field some graphs carry and others do not, or one with the wrong shape, is an error naming the
// field and the graph, never dropped.
//
//   FixedSizeCollator collate(opts);
//   Batch b = collate.collate({&g0, &g1, &g2});   // b.numNodes == opts.numNodes, ...
#pragma once
#include <vector>

#include "data/Graph.h"
#include "loaders/Batch.h"
#include "loaders/FixedSizeOptions.h"

namespace gnn {

class FixedSizeCollator {
 public:
  /// nodeLevelTargets: y has one row per node (node classification) rather than one per graph.
  explicit FixedSizeCollator(FixedSizeOptions options, bool nodeLevelTargets = false);

  /// `indices` (optional) are the graphs' dataset indices, kept in Batch::graphIndex and used in errors.
  /// Throws std::invalid_argument when the graphs do not fit (FixedSizeOptions::fits and fitsGraph), naming
  /// their sizes and the option to raise, or when their fields disagree.
  Batch collate(const std::vector<const Graph*>& graphs, const std::vector<int64_t>& indices = {}) const;
  Batch collate(const std::vector<Graph>& graphs, const std::vector<int64_t>& indices = {}) const;

  /// Concatenation without padding (variable-size batches of DataLoader): masks are all ones; node-pair blocks
  /// are as large as the batch's largest graph (Graphormer's collator pads to its batch's max_node too).
  static Batch concatenate(const std::vector<const Graph*>& graphs, const std::vector<int64_t>& indices = {},
                           bool nodeLevelTargets = false);

  /// Whether graphs totalling (nodes, edges, count) fit a batch: FixedSizeOptions::fits, the one capacity rule
  /// (one node and one edge left for each padding graph).
  bool fits(int64_t nodes, int64_t edges, int64_t count) const;
  const FixedSizeOptions& options() const { return options_; }

 private:
  FixedSizeOptions options_;
  bool nodeLevelTargets_;
};

}  // namespace gnn
