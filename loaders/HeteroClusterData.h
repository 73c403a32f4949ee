// HeteroClusterData: a heterogeneous graph split into k clusters across its node types, as OGB's ogbn-mag
// Cluster-GCN example does it (ogb examples/nodeproppred/mag/cluster_gcn.py): the typed graph made homogeneous
// (data/HeteroToHomogeneous.h, PyG's to_homogeneous), METIS over all nodes of all types (ClusterData::partition),
// and the subgraph of any set of clusters induced with node and edge types kept: each type's nodes of those
// clusters and every edge of every edge type with both ends among them.
//
//   HeteroClusterData clusters(graph, 64, /*seed=*/0);                // METIS_PartGraphKway, seeded
//   HeteroSampledSubgraph sub = clusters.subgraph({3, 17}, paper, isTrain);   // training papers first
//   sub.nodes[paper];  sub.src[writes];  sub.edgeIds[writes];
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/HeteroGraph.h"
#include "loaders/HeteroBatchCollate.h"
#include "loaders/HeteroNeighborSampler.h"

namespace gnn {

class HeteroClusterData {
 public:
  /// Partitions every node of `graph` into numClusters clusters (1 <= numClusters <= its nodes). The graph is not
  /// kept: its incoming edges per edge type are indexed here.
  HeteroClusterData(const HeteroGraph& graph, int64_t numClusters, uint64_t seed = 0);

  int64_t numClusters() const { return numClusters_; }
  const std::vector<std::string>& nodeTypes() const { return nodeTypes_; }
  const std::vector<EdgeType>& edgeTypes() const { return edgeTypes_; }
  /// The position of a node type; throws std::invalid_argument naming an unknown one.
  int64_t nodeTypeIndex(const std::string& type) const;
  int64_t numNodes(int64_t t) const { return offset_[static_cast<size_t>(t) + 1] - offset_[static_cast<size_t>(t)]; }
  /// The cluster of node `id` of type t.
  int64_t clusterOf(int64_t t, int64_t id) const {
    return clusterOf_[static_cast<size_t>(offset_[static_cast<size_t>(t)] + id)];
  }
  /// Nodes of type t in cluster c, ascending.
  std::vector<int64_t> clusterNodes(int64_t c, int64_t t) const;
  int64_t clusterSize(int64_t c, int64_t t) const { return counts_[static_cast<size_t>(c)][static_cast<size_t>(t)]; }
  /// Edges of edge type r whose destination lies in cluster c: what c adds to any subgraph at most.
  int64_t clusterInEdges(int64_t c, int64_t r) const { return inEdges_[static_cast<size_t>(c)][static_cast<size_t>(r)]; }
  int64_t edgeCut() const { return edgeCut_; }
  double partitionSeconds() const { return partitionSeconds_; }

  /// The subgraph induced by the union of `clusters` (distinct, each in range): per node type its nodes cluster by
  /// cluster in the order given (ascending within each), except that the nodes of firstType marked in `first`
  /// ([numNodes(firstType)] or empty) come ahead of that type's others, in the same order; they are the subgraph's
  /// numSeeds and firstType its inputType. Per edge type every edge with both ends inside, destination row by
  /// destination row, each one's in-edges in the graph's edge order. nodesPerHop / edgesPerHop hold one count.
  HeteroSampledSubgraph subgraph(const std::vector<int64_t>& clusters, int64_t firstType,
                                 const std::vector<uint8_t>& first) const;

  /// Per type, the sum of its clustersPerBatch largest clusters' counts (nodes of the type; edges of the edge type
  /// into the cluster), capped by the type's total, plus the padding row: room for any batch of that many clusters.
  HeteroBatchSizes worstCase(int64_t clustersPerBatch) const;
  /// The sum of the clustersPerBatch largest counts of nodes of type t marked in `marked`: the most a batch holds.
  int64_t mostMarked(int64_t clustersPerBatch, int64_t t, const std::vector<uint8_t>& marked) const;

 private:
  void indexEdges(const HeteroGraph& graph);

  struct Csc {
    int64_t srcType = 0, dstType = 0;
    std::vector<int64_t> inPtr;   // incoming edges grouped by destination, edge order kept within one
    std::vector<int32_t> inSrc;   //   each one's source (a node of srcType)
    std::vector<int32_t> inEdge;  //   and its column in the edge type's edge_index
  };
  std::vector<std::string> nodeTypes_;
  std::vector<EdgeType> edgeTypes_;
  int64_t numClusters_ = 1;
  std::vector<int64_t> offset_;                    // type t's nodes are [offset_[t], offset_[t + 1]) homogeneously
  std::vector<int64_t> clusterOf_;                 // per homogeneous node
  std::vector<int64_t> clusterPtr_, clusterNodes_;  // homogeneous ids by cluster (ClusterData::clusterOrder)
  std::vector<std::vector<int64_t>> counts_, inEdges_;  // [cluster][node type], [cluster][edge type]
  std::vector<Csc> csc_;
  int64_t edgeCut_ = 0;
  double partitionSeconds_ = 0;
};

}  // namespace gnn
