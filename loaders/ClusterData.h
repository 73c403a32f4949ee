// ClusterData: one large graph split into k clusters by METIS (Cluster-GCN, Chiang et al., KDD 2019), with
// each cluster's nodes listed and the subgraph of any set of clusters (their nodes and every edge between
// them, including between-cluster edges) available in O(edges of those clusters).
//
//   ClusterData clusters(cora, 32);                           // METIS_PartGraphKway, seeded
//   Graph g = clusters.subgraph({3, 17, 5}, &originalIds);
//
// METIS needs an undirected graph without self-loops in CSR form; the input may be directed, have duplicate
// edges, self-loops or isolated nodes: the partition is computed on the symmetrised, deduplicated,
// self-loop-free pattern, while subgraphs keep the original edges (with their attributes) as they are.
#pragma once
#include <cstdint>
#include <vector>

#include "data/Graph.h"
#include "loaders/FixedSizeOptions.h"

namespace gnn {

class ClusterData {
 public:
  /// seed: METIS's own random seed (METIS_OPTION_SEED), so the partition is reproducible.
  ClusterData(Graph graph, int64_t numClusters, uint64_t seed = 0);
  /// With a partition computed before (partition(), e.g. on the graph before its nodes were renumbered by
  /// cluster: see clusterOrder): clusterOf[v] in [0, numClusters) for every node.
  ClusterData(Graph graph, std::vector<int64_t> clusterOf, int64_t numClusters, int64_t edgeCut = 0);

  /// Cluster of each node from METIS_PartGraphKway on the symmetrised, self-loop-free pattern of edgeIndex.
  /// numClusters == 1 puts everything in cluster 0 (METIS is not called). edgeCut receives METIS's cut.
  /// spillWhileMetisRuns: tensors the caller does without while METIS runs (a large graph's features and
  /// edge list, edgeIndex itself among them: it is read before METIS starts), parked in temporary files
  /// meanwhile (TensorSpill) and restored before the return; spilledBytes receives how many bytes were.
  static std::vector<int64_t> partition(int64_t numNodes, const Tensor& edgeIndex, int64_t numClusters,
                                        uint64_t seed = 0, int64_t* edgeCut = nullptr,
                                        const std::vector<Tensor*>& spillWhileMetisRuns = {},
                                        int64_t* spilledBytes = nullptr);

  /// The nodes cluster by cluster (ascending id within each): order[newId] = id. Renumbering a graph this way
  /// (OgbNodeDataset::permuteNodes) makes every cluster a contiguous block of node ids, so products over the
  /// whole graph (its evaluation) read their neighbours' rows from a block that stays in cache, and the batches
  /// of the renumbered graph hold the same rows in the same order as before.
  static std::vector<int64_t> clusterOrder(const std::vector<int64_t>& clusterOf, int64_t numClusters);

  int64_t numClusters() const { return numClusters_; }
  const Graph& graph() const { return graph_; }
  const std::vector<int64_t>& clusterOf() const { return clusterOf_; }
  /// Nodes of cluster c, ascending.
  std::vector<int64_t> clusterNodes(int64_t c) const;
  int64_t clusterSize(int64_t c) const { return clusterPtr_[c + 1] - clusterPtr_[c]; }
  /// Edges whose source lies in cluster c (an upper bound on what c adds to any subgraph).
  int64_t clusterOutEdges(int64_t c) const { return clusterOutEdges_[c]; }
  int64_t edgeCut() const { return edgeCut_; }
  double partitionSeconds() const { return partitionSeconds_; }

  /// The subgraph induced by the union of `clusters`: nodes cluster by cluster (ascending id within each), every
  /// original edge with both ends inside, every field carried along by its level (loaders/BatchFields.h; y is
  /// node-level when it has one row per node). nodeIds (optional) receives the original id of each subgraph node.
  Graph subgraph(const std::vector<int64_t>& clusters, std::vector<int64_t>* nodeIds = nullptr) const;

  /// Fixed sizes that hold any clustersPerBatch clusters without trimming: the largest clusters' nodes and
  /// out-edges, plus one node and one edge for the padding graph (FixedSizeOptions::rowsNeeded); numGraphs = 2.
  FixedSizeOptions worstCaseOptions(int64_t clustersPerBatch) const;

 private:
  void index();

  Graph graph_;
  int64_t numClusters_;
  std::vector<int64_t> clusterOf_;
  std::vector<int64_t> clusterPtr_, clusterNodes_;  // nodes grouped by cluster
  std::vector<int32_t> rankInCluster_;               // a node's place in its cluster's (ascending) list
  std::vector<int64_t> outPtr_;                      // edges grouped by source node (CSR): each node's row
  std::vector<int32_t> outDst_;                      //   each edge's target
  std::vector<int64_t> outEdges_;                    //   its original id, when edge-level fields need it
  bool needEdgeIds_ = false;
  bool bySource_ = false;  // edge_index sorted by source: it is the CSR (outDst_, outEdges_ left empty)
  std::vector<int64_t> clusterOutEdges_;
  int64_t edgeCut_ = 0;
  double partitionSeconds_ = 0;
};

}  // namespace gnn
