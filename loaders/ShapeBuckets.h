// ShapeBuckets: a few fixed batch shapes for inference, chosen from the sizes of the graphs to predict, in
// place of one shape every graph fits. One shape sized by the largest graph makes every batch pay for it:
// Graphormer's node-pair blocks have the largest molecule's side in every slot (51 atoms where nearly all
// have at most 30 in the shipped PCQM4Mv2-style set: (51/31)^2 = 2.7x the attention work). Each graph goes to
// the smallest shape that holds it; each shape is static, so it is set up (its buffers allocated) once
// however many batches use it.
//
// A bucket covers a range of node counts (t_{k-1}, t_k]. Its shape is the base shape (the single shape every
// graph fits) with the node-pair side set to t_k, and the node and edge rows cut to what G_k − 1 graphs of
// the bucket's largest sizes need (never above the base's, never below one such graph beside the padding
// graphs):
//     maxNodesPerGraph = t_k,
//     numNodes = max(t_k + G_k − 1, min(base.numNodes, t_k·(G_k−1) + 1)),   likewise numEdges with e_k,
// where e_k is the most edges of a graph in the bucket and G_k its graph slots: base.numGraphs, or fewer when
// that lowers the bucket's cost (c_k graphs in b_k batches need only ⌈c_k / b_k⌉ real graphs per batch: a
// small bucket is not padded to a full batch of slots).
//
// The objective is the padded work W = Σ_batches cost(shape of the batch), cost per batch (ShapeCost):
//     NodePairs: G_k · t_k²           (Graphormer: attention scores and pair biases, per graph slot)
//     Rows:      numNodes + numEdges  (message passing, SchNet's filters, pooling: work per row)
// with the batches as evaluation makes them: each shape's graphs packed greedily in input order. Choosing:
//  1. A dynamic programme over the distinct node counts (at most 64 groups of them) finds, for each number of
//     buckets k = 1..maxBuckets, the thresholds of least estimated W, in O(maxBuckets · D²). The estimate
//     counts b_k = max(⌈c_k / (G_k−1)⌉, ⌈N_k / (numNodes − 1 − r_n)⌉, ⌈E_k / (numEdges − 1 − r_e)⌉) batches
//     for the c_k graphs of N_k nodes and E_k edges in a bucket, r_n = E[n²] / (2 E[n]) being the rows greedy
//     packing leaves unused on average when a batch closes (exact where the graph cap binds, as in every
//     bucket of a Graphormer run).
//  2. Those maxBuckets candidates and the base shape alone are packed exactly (O(N) each); the least W
//     wins, the fewer shapes on a tie. So the buckets never pad more than the single shape, and a set whose molecules
//     pack by budget anyway keeps fewer buckets.
// Deterministic: the shapes depend only on the sizes in their order, never on threads.
//
// Predictions do not change: a real graph's outputs do not depend on the padding around it or on the shape of
// its batch (the project's padding invariance), so bucketed inference gives the bits one shape gives
// (tests/examples/BucketedInference_test.cpp; docs/programs.md notes the layer widths this needs).
//
//   ShapeBuckets b = ShapeBuckets::choose(graphSizes(*dataset, positions), evalFixed, 4, ShapeCost::NodePairs);
//   int64_t k = b.bucketOf(dataset->numNodes(i), dataset->numEdges(i));  // its shape; -1: none holds it
//   PaddingReport r = plannedPadding(dataset, positions, b, /*nodePairs=*/true);
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/Dataset.h"
#include "loaders/FixedSizeOptions.h"
#include "loaders/PaddingReport.h"

namespace gnn {

/// What one batch of a shape costs to run: the quantity ShapeBuckets minimises.
enum class ShapeCost {
  Rows,       // numNodes + numEdges
  NodePairs,  // numGraphs · maxNodesPerGraph²
};

struct GraphSize {
  int64_t nodes = 0, edges = 0;
};

/// The sizes of the graphs at `positions` of `dataset`, in that order.
std::vector<GraphSize> graphSizes(const Dataset& dataset, const std::vector<int64_t>& positions);

class ShapeBuckets {
 public:
  /// At most `maxBuckets` (>= 1) shapes for the graphs of `sizes` that fit `base` (the others are left out of
  /// the sizing: no bucket holds them either). One bucket is `base` itself, as is every result for
  /// maxBuckets 1 or no graph that fits.
  static ShapeBuckets choose(const std::vector<GraphSize>& sizes, const FixedSizeOptions& base,
                             int64_t maxBuckets, ShapeCost cost);
  /// The single shape (no bucketing).
  static ShapeBuckets single(const FixedSizeOptions& base);

  /// Ascending in maxNodesPerGraph; together they hold every graph of the sizes they were chosen for that
  /// fits the base.
  const std::vector<FixedSizeOptions>& shapes() const { return shapes_; }
  int64_t size() const { return static_cast<int64_t>(shapes_.size()); }
  /// The smallest shape that holds one graph of (nodes, edges); -1 when none does.
  int64_t bucketOf(int64_t nodes, int64_t edges) const;

  /// One batch of `shape` under `cost`.
  static double batchCost(const FixedSizeOptions& shape, ShapeCost cost);
  /// The objective W of these shapes for `sizes`, packed as evaluation packs them (graphs no shape holds are
  /// left out).
  double packedWork(const std::vector<GraphSize>& sizes, ShapeCost cost) const;
  /// "3 shapes: side 12 (1000 graphs), ..." style one-liner.
  std::string toString() const;

 private:
  std::vector<FixedSizeOptions> shapes_;
};

/// The bucket shape with `graphs` graph slots (2..base.numGraphs) for graphs of at most `nodes` nodes and
/// `edges` edges, derived from `base` (see above); they must fit the base.
FixedSizeOptions bucketShape(const FixedSizeOptions& base, int64_t nodes, int64_t edges, int64_t graphs);

/// The padding that inference in `buckets` gives the graphs at `positions` (each in the smallest shape that
/// holds it, each shape's graphs packed greedily in input order, as evaluation batches them), from the plan
/// alone: no batch is collated. With `nodePairs`, the node-pair counts too (as PaddingReport::add counts them
/// for batches with node-pair blocks). Graphs no shape holds count as skipped.
PaddingReport plannedPadding(const std::shared_ptr<const Dataset>& dataset,
                             const std::vector<int64_t>& positions, const ShapeBuckets& buckets,
                             bool nodePairs);

}  // namespace gnn
