// HeteroNeighborSampler: PyG 2.3.1 NeighborLoader's sampling of a HeteroData (pyg-lib 0.2's hetero_neighbor_sample,
// pyg_lib/csrc/sampler/cpu/neighbor_kernel.cpp, which torch_geometric/sampler/neighbor_sampler.py calls) over a
// HeteroGraph. The seeds are nodes of one input type. Hop l visits the edge types in the graph's order; for edge
// type (src, rel, dst), every dst node that the previous hop added (the seeds at hop 0) draws up to
// numNeighbors[(src, rel, dst)][l] of its incoming src neighbours (-1: all of them), without replacement unless
// `replace`. A drawn src node not seen before is appended to src's list; nodes added during hop l are expanded by
// hop l + 1 only, whichever edge type found them. The result, per type:
//
//   nodes[t]      PyG's node_dict[t] / n_id: global ids within type t; the input type's list starts with the
//                 seeds in their order, then every type's new nodes in the order they were found (hop by hop, edge
//                 type by edge type, destination node by destination node, draw by draw)
//   src/dst[e]    PyG's row_dict / col_dict: one pair per sampled edge, src[e] a row of nodes[source type], dst[e]
//                 a row of nodes[destination type] (the node that drew it), in the order drawn; edgeIds[e] each
//                 edge's column in the graph's edge_index of that type
//
// Which nodes and edges appear, and in which order, are PyG's; the draw itself is not (our generator, not
// PyTorch's): with a fan-out >= a node's in-degree of an edge type (or -1) it takes every in-edge, in the graph's
// edge order, as PyG does. A node's draws for an edge type come from a stream keyed by (seed, epoch, edge type,
// node), so they depend on nothing else (not the batch, the thread count or the process).
//
// PyG's options: replace (taken), directed (true only: pyg-lib refuses undirected heterogeneous sampling too),
// disjoint and temporal sampling (time_attr) are left out. num_neighbors is PyG's NumNeighbors: one list for
// every edge type, or a list per edge type with an optional default for the types not listed; every list of one
// length (the hop count). PyG ignores a listed edge type the graph lacks; here it is refused, as a typo would
// otherwise sample nothing silently. (torch-sparse's older kernel visits edge types sorted by name; pyg-lib, which
// PyG 2.3.1 prefers, and this sampler visit them in the graph's order.)
//
//   HeteroNeighborSampler s(graph);                      // CSC of every edge type, built once
//   HeteroSampledSubgraph sub = s.sample("paper", seeds, HeteroNumNeighbors({15, 10}), /*seed=*/0, /*epoch=*/3);
//   sub.nodes[sub.nodeTypeIndex("author")];              // the authors sampled
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/HeteroGraph.h"
#include "gnn/nn/EdgeType.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

/// PyG's NumNeighbors: the fan-out of each hop, for every edge type alike or per edge type (-1 = every neighbour).
struct HeteroNumNeighbors {
  /// One list for every edge type (PyG's num_neighbors=[15, 10]).
  HeteroNumNeighbors(std::vector<int64_t> all) : all(std::move(all)), isDict(false) {}  // NOLINT: PyG's list form
  /// {15, 10}: without it a braced list of one number could also be read as a vector of edge types' lists.
  HeteroNumNeighbors(std::initializer_list<int64_t> all) : all(all), isDict(false) {}  // NOLINT: PyG's list form
  /// A list per edge type (PyG's dict), `fallback` for the types not listed (PyG's NumNeighbors(values, default)).
  HeteroNumNeighbors(std::vector<std::pair<EdgeType, std::vector<int64_t>>> perType,
                     std::optional<std::vector<int64_t>> fallback = std::nullopt)
      : perType(std::move(perType)), fallback(std::move(fallback)), isDict(true) {}

  std::vector<int64_t> all;
  std::vector<std::pair<EdgeType, std::vector<int64_t>>> perType;
  std::optional<std::vector<int64_t>> fallback;
  bool isDict = false;
};

struct HeteroSampledSubgraph {
  std::vector<std::string> nodeTypes;  // the graph's node types, in its order
  std::vector<EdgeType> edgeTypes;     // and edge types
  /// Per node type: global ids within the type (seeds first in the input type's list).
  std::vector<std::vector<int64_t>> nodes;
  /// Per edge type: each sampled edge's row in nodes[source type], row in nodes[destination type], and column in
  /// the graph's edge_index of that type.
  std::vector<std::vector<int64_t>> src, dst, edgeIds;
  /// Per node type: nodes added by the seeds (entry 0) and by each hop (pyg-lib's num_sampled_nodes);
  /// per edge type: edges sampled by each hop (num_sampled_edges).
  std::vector<std::vector<int64_t>> nodesPerHop, edgesPerHop;
  int64_t inputType = 0;  // position of the seeds' type in nodeTypes
  int64_t numSeeds = 0;   // PyG's batch_size: the first numSeeds of nodes[inputType]

  /// Positions in nodeTypes / edgeTypes; throw std::invalid_argument naming an unknown type.
  int64_t nodeTypeIndex(const std::string& type) const;
  int64_t edgeTypeIndex(const EdgeType& type) const;
  /// Edge type e's [2, E] int64 local edge_index (row 0 src, row 1 dst), PyG's edge_index of the sampled HeteroData.
  Tensor edgeIndex(int64_t e) const;
};

class HeteroNeighborSampler {
 public:
  /// Indexes every edge type's incoming edges (CSC); throws std::invalid_argument when the graph fails validate().
  /// The graph is not kept: the sampler holds its own index, shared read-only by every batch (sample() is const and
  /// thread-safe).
  explicit HeteroNeighborSampler(const HeteroGraph& graph);

  /// Seeds: distinct ids of nodes of inputType. Throws std::invalid_argument for an unknown input type, a seed out
  /// of range or repeated, and fan-outs that name an unknown edge type, miss one (without fallback), differ in
  /// length or hold a value below -1.
  HeteroSampledSubgraph sample(const std::string& inputType, const std::vector<int64_t>& seeds,
                               const HeteroNumNeighbors& numNeighbors, uint64_t seed, int64_t epoch,
                               bool replace = false) const;

  /// The fan-outs of every edge type, in the graph's order (PyG's get_mapped_values), checked as sample() checks.
  std::vector<std::vector<int64_t>> fanouts(const HeteroNumNeighbors& numNeighbors) const;

  /// The most nodes of each type and edges of each edge type that sample() can return for batchSize seeds of
  /// inputType: each hop, edge type (src, rel, dst) samples at most frontier[dst] * fan-out edges (a fan-out of -1
  /// counted as the type's largest in-degree), which add as many src nodes to the next frontier; every count is
  /// capped by the type's size.
  std::pair<std::vector<int64_t>, std::vector<int64_t>> worstCase(const std::string& inputType, int64_t batchSize,
                                                                  const HeteroNumNeighbors& numNeighbors) const;

  const std::vector<std::string>& nodeTypes() const { return nodeTypes_; }
  const std::vector<EdgeType>& edgeTypes() const { return edgeTypes_; }
  int64_t nodeTypeIndex(const std::string& type) const;
  int64_t numNodes(int64_t t) const { return numNodes_[static_cast<size_t>(t)]; }
  int64_t numEdges(int64_t e) const { return static_cast<int64_t>(csc_[static_cast<size_t>(e)].inSrc.size()); }
  int64_t maxInDegree(int64_t e) const { return csc_[static_cast<size_t>(e)].maxInDegree; }

 private:
  struct Csc {
    int64_t srcType = 0, dstType = 0, maxInDegree = 0;
    std::vector<int64_t> inPtr;   // incoming edges grouped by destination, edge order kept within one
    std::vector<int32_t> inSrc;   //   each one's source (a node of srcType)
    std::vector<int32_t> inEdge;  //   and its column in the edge type's edge_index
  };
  // Hop `hop` over every edge type: the nodes of rows [begin[t], end[t]) of each type draw their neighbours.
  void sampleHop(size_t hop, const std::vector<std::vector<int64_t>>& fan, const std::vector<int64_t>& begin,
                 const std::vector<int64_t>& end, uint64_t seed, int64_t epoch, bool replace,
                 std::vector<int64_t>& local, HeteroSampledSubgraph& out) const;

  std::vector<std::string> nodeTypes_;
  std::vector<EdgeType> edgeTypes_;
  std::vector<int64_t> numNodes_, nodeOffset_;  // a type's rows in the flat local-id array: [offset, offset + N)
  std::vector<Csc> csc_;
};

}  // namespace gnn
