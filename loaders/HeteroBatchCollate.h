// HeteroBatchCollate: a typed subgraph (HeteroSampledSubgraph: each type's nodes, each edge type's local edges) made
// into a fixed-size HeteroBatch (loaders/HeteroBatch.h), the one builder of every heterogeneous loader (the
// neighbour loader's sampled neighbourhoods, the cluster loader's induced subgraphs). Per node type the real rows
// (x gathered, or only nodeId for a featureless type), then padding rows; per edge type the real edges, then
// padding edges between the first padding rows of its two types; the target type's y and the seed mask on its
// first numSeeds rows. A subgraph too large for the sizes is first trimmed (trimHeteroSubgraph) or refused.
//
//   HeteroBatchSizes sizes;  sizes.numNodes = {{"author", 301}, {"paper", 513}};  sizes.numEdges = {...};
//   HeteroBatchRows rows = heteroBatchRows(graph, sizes, "MyLoader");   // the sizes in the graph's type order
//   auto [cutNodes, cutEdges] = trimHeteroSubgraph(sub, rows);          // TrimNodesAndEdges
//   HeteroBatch b = collateHeteroBatch(graph, sub, rows, sizes);
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "data/HeteroGraph.h"
#include "loaders/HeteroBatch.h"
#include "loaders/HeteroNeighborSampler.h"
#include "loaders/PaddingReport.h"
#include "loaders/Prefetcher.h"

namespace gnn {

/// Fixed rows of every node type and every edge type, one padding row included in each.
struct HeteroBatchSizes {
  std::map<std::string, int64_t> numNodes;
  std::map<EdgeType, int64_t> numEdges;
  double nodePadValue = 0.0;   // x of padding rows
  double edgePadValue = 0.0;   // edgeAttr of padding edges
  double labelPadValue = 0.0;  // y of the target type's padding rows
  std::string toString() const;
};

/// The sizes in the graph's node and edge type order.
struct HeteroBatchRows {
  std::vector<int64_t> nodes, edges;
};

/// Checks that `sizes` gives every type of the graph at least its padding row and names no other type; throws
/// std::invalid_argument naming the type, with `who` (the loader) in front.
HeteroBatchRows heteroBatchRows(const HeteroGraph& graph, const HeteroBatchSizes& sizes, const std::string& who);

/// Whether some type of `sub` has more rows than its size leaves beside the padding row.
bool heteroSubgraphOverSize(const HeteroSampledSubgraph& sub, const HeteroBatchRows& rows);
/// " 600 nodes of 'paper' (room for 512); ..." for every type over its size: an Error strategy's message.
std::string heteroOverSizeReport(const HeteroSampledSubgraph& sub, const HeteroBatchRows& rows);
/// Cuts `sub` to the sizes: each node type keeps its first rows, each edge type the edges between kept rows in
/// order up to its room; the per-hop counts and numSeeds follow (rows and edges of a hop stay contiguous). Returns
/// the nodes and edges cut.
std::pair<int64_t, int64_t> trimHeteroSubgraph(HeteroSampledSubgraph& sub, const HeteroBatchRows& rows);
/// The batch of a subgraph that fits (inputId left empty for the caller).
HeteroBatch collateHeteroBatch(const HeteroGraph& graph, const HeteroSampledSubgraph& sub, const HeteroBatchRows& rows,
                               const HeteroBatchSizes& sizes);

/// Sizes from `count` batches' subgraphs (subgraphOf(i), built in parallel: the same for any thread count): per
/// node and edge type its largest count x (1 + margin), plus the padding row, at most `bound`'s (the worst case).
/// Both loaders' fromLoader.
HeteroBatchSizes heteroSizesOfBatches(int64_t count, const std::vector<std::string>& nodeTypes,
                                      const std::vector<EdgeType>& edgeTypes,
                                      const std::function<HeteroSampledSubgraph(int64_t)>& subgraphOf,
                                      const HeteroBatchSizes& bound, double margin);
/// A batch as a loader's prefetcher makes it: collated, with the nodes and edges trimmed to fit.
struct CollatedHeteroBatch {
  HeteroBatch batch;
  int64_t trimmedNodes = 0, trimmedEdges = 0;
};

/// Counts a batch handed out in `report`: its nodes and edges summed over the types (one graph a batch) and those cut.
void addToReport(PaddingReport& report, const HeteroBatch& batch, int64_t cutNodes, int64_t cutEdges);

/// A loader's next(): the prefetcher's next batch into `out`, counted in `report`; false at the epoch's end.
inline bool handOutHeteroBatch(Prefetcher<CollatedHeteroBatch>& prefetcher, PaddingReport& report, HeteroBatch& out) {
  CollatedHeteroBatch item;
  if (!prefetcher.next(item)) return false;
  addToReport(report, item.batch, item.trimmedNodes, item.trimmedEdges);
  out = std::move(item.batch);
  return true;
}

}  // namespace gnn
