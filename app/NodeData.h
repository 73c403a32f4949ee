// NodeData: a node program's graph as it trains on it: the dataset read in OGB's node-property raw layout with
// its normalised features and split, kept sparse or dense, and for Cluster-GCN its METIS clusters, the nodes
// renumbered cluster by cluster. Recorded in the run's configuration, so a checkpoint continues only on the data
// and features it was trained on.
//
//   app::NodeData data = app::readNodeData(settings);
//   app::recordNodeData(data, settings.data, config, checkpoint, checkpointPath);
//   app::printNodeData(data, settings);
//   app::buildClusters(data, settings);
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/NodeFlags.h"
#include "app/RunConfig.h"
#include "data/OgbNodeDataset.h"
#include "gnn/io/Checkpoint.h"
#include "gnn/tensor/SparseMatrix.h"
#include "loaders/ClusterData.h"
#include "loaders/NeighborSampler.h"

namespace gnn::app {

struct NodeData {
  OgbNodeDataset dataset;
  double loadMs = 0;
  /// The features as training and evaluation read them: sparse (bag-of-words) or the dense matrix.
  double density = 0;
  bool sparse = false;
  std::optional<SparseMatrix> sparseFeatures;
  /// --loader cluster: node i of the graph as trained is node order[i] of the dataset (empty otherwise), in
  /// cluster partition[i]; METIS's edge cut, time and the bytes it spilled to temporary files.
  std::vector<int64_t> partition, order;
  int64_t edgeCut = 0, metisSpilledBytes = 0;
  double partitionMs = 0;
  /// --loader cluster, once buildClusters() ran (it takes partition).
  std::shared_ptr<const ClusterData> clusters;
  /// --loader neighbor, once buildNeighborSampler() ran: the graph's incoming-edge CSR, shared by every run, and
  /// the dataset's graph as the loaders hold it (no copy: it points into `dataset`).
  std::shared_ptr<const NeighborSampler> sampler;
  std::shared_ptr<const Graph> graph;
  double samplerMs = 0;
  /// The graph's directed edges as read; with --loader neighbor and layer-wise evaluation the whole graph's edge
  /// list is released once the sampler indexed it (edgesReleased; the in-degree histogram PNA needs kept first).
  int64_t numEdges = 0;
  bool edgesReleased = false;
  std::vector<int64_t> inDegreeHistogram;

  const SparseMatrix* sparseFeaturesOrNull() const { return sparseFeatures ? &*sparseFeatures : nullptr; }
};

/// Reads --data (set) with --normalize-features; for --loader cluster partitions it (checking --clusters against
/// its nodes) and renumbers its nodes by cluster, with the heap set for Cluster-GCN's memory; chooses the
/// features' layout (--feature-layout).
NodeData readNodeData(const NodeSettings& s);
/// Records the dataset and its features' normalisation in `config`; a run continued from `checkpoint` (null for a
/// new run; read from `checkpointPath`) on another dataset or otherwise normalised features is refused
/// (UsageError naming --data `dataFlag`).
void recordNodeData(const NodeData& data, const std::string& dataFlag, RunConfig& config,
                    const Checkpoint* checkpoint, const std::string& checkpointPath);
/// The dataset's line on stderr (unless --quiet): sizes, features, split, load time, threads.
void printNodeData(const NodeData& data, const NodeSettings& s);
/// --loader cluster: the clusters of data.partition, and their line on stderr (unless --quiet).
void buildClusters(NodeData& data, const NodeSettings& s);
/// --loader neighbor: the sampler over the graph, and its line on stderr (unless --quiet). `data` must stay put
/// while the runs use it (data.graph points into it). With releaseEdges (the runs evaluate layer-wise, so nothing
/// reads the whole graph's edge list again) the edge list is released: 16 bytes an edge.
void buildNeighborSampler(NodeData& data, const NodeSettings& s, bool releaseEdges);

}  // namespace gnn::app
