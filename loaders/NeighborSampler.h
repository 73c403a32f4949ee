// NeighborSampler: GraphSAGE's neighbourhood sampling (Hamilton et al., NeurIPS 2017) with PyG 2.3.1
// NeighborLoader's semantics (directed, homogeneous): starting from a batch of seed nodes, hop l samples up to
// numNeighbors[l] of the incoming neighbours of every node the previous hop added (-1: all of them), without
// replacement unless `replace`; a sampled neighbour not seen before is appended to the batch's nodes. The result
// is the directed subgraph of the sampled edges, source -> target (messages flow towards the seeds):
//
//   nodes    n_id: the seeds first (their order), then each hop's new nodes in the order they were found
//   edges    one per sampled (neighbour -> node) pair, grouped by target in the order the targets were expanded,
//            in local ids; edgeIds gives each one's id in the whole graph (for edge features)
//
// Every node's draws come from its own stream keyed by (seed, epoch, node id), so a node's sample depends only on
// those (not on the batch it falls in, the order of expansion, the thread count or the process), and the first k
// of a node's draws are the same for any fan-out >= k: a node is expanded at the hop that first reaches it.
// The incoming-edge CSR is built once and shared read-only by every batch (sample() is const and thread-safe).
//
//   NeighborSampler s(graph.edgeIndex, graph.numNodes);
//   SampledSubgraph sub = s.sample(seeds, {15, 10, 5}, /*seed=*/0, /*epoch=*/3);
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "gnn/system/Random.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

struct SampledSubgraph {
  std::vector<int64_t> nodes;               // n_id: the seeds, then each hop's new nodes
  std::vector<int64_t> src, dst;            // local ids of each sampled edge (neighbour -> node)
  std::vector<int64_t> edgeIds;             // each edge's column in the whole graph's edgeIndex
  std::vector<int64_t> nodesPerHop;         // nodes added by the seeds (hop 0) and by each hop
  std::vector<int64_t> edgesPerHop;         // edges sampled by each hop
  int64_t numSeeds = 0;
};

/// The [2, E] int64 edge index of edges src[e] -> dst[e] (a sampled subgraph's, a batch of in-edges').
Tensor edgeIndexOf(const std::vector<int64_t>& src, const std::vector<int64_t>& dst);

class NeighborSampler {
 public:
  /// edgeIndex [2, E] int64 (row 0 sources, row 1 targets) over numNodes nodes; an edge out of range is
  /// refused naming its column.
  NeighborSampler(const Tensor& edgeIndex, int64_t numNodes);

  /// numNeighbors: the fan-out of each hop (-1 = every neighbour). Seeds must be distinct node ids.
  SampledSubgraph sample(const std::vector<int64_t>& seeds, const std::vector<int64_t>& numNeighbors, uint64_t seed,
                         int64_t epoch, bool replace = false) const;

  /// The most nodes and edges sample() can return for batchSize seeds: batch * (1 + f1 + f1 f2 + ...) nodes
  /// (at most numNodes) and batch * (f1 + f1 f2 + ...) edges (at most the graph's), a fan-out of -1 counted as
  /// the largest in-degree.
  std::pair<int64_t, int64_t> worstCase(int64_t batchSize, const std::vector<int64_t>& numNeighbors) const;

  /// Every incoming edge of targets [begin, end), in CSC order: its source (a node id) and its target less begin.
  void incomingEdges(int64_t begin, int64_t end, std::vector<int64_t>& src, std::vector<int64_t>& dstFromBegin) const;

  int64_t numNodes() const { return numNodes_; }
  int64_t numEdges() const { return static_cast<int64_t>(inSrc_.size()); }
  int64_t inDegree(int64_t v) const { return inPtr_[v + 1] - inPtr_[v]; }
  int64_t maxInDegree() const { return maxInDegree_; }

 private:
  int64_t numNodes_ = 0, maxInDegree_ = 0;
  // 32-bit node and edge ids (checked): at ogbn-products' 124M directed edges the index is 1 GB instead of 2.
  std::vector<int64_t> inPtr_;   // incoming edges grouped by target (CSC), edge order within a target
  std::vector<int32_t> inSrc_;   //   each one's source
  std::vector<int32_t> inEdge_;  //   and its column in edgeIndex
};

namespace detail {
/// Appends to `out` k distinct positions of [0, deg) drawn from g: the first k steps of a Fisher-Yates shuffle of
/// 0 .. deg-1, so the first k of any larger k are the same. `moved` is scratch space. The heterogeneous sampler
/// (loaders/HeteroNeighborSampler.h) draws with it too.
void drawDistinct(Generator& g, int64_t deg, int64_t k, std::vector<std::pair<int64_t, int64_t>>& moved,
                  std::vector<int64_t>& out);
}  // namespace detail

}  // namespace gnn
