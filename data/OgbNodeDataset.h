// OgbNodeDataset: one graph for node classification, read from OGB's node-property-prediction raw layout
// (as ogb.nodeproppred writes it, every file optionally gzipped, no headers):
//
//   raw/edge.csv.gz           "src,dst" per edge; for OGB's undirected sets each edge once (see AddInverseEdges)
//   raw/node-feat.csv.gz      one row of comma-separated features per node (all rows the same width)
//   raw/node-label.csv.gz     one integer class per node
//   raw/num-node-list.csv.gz  the node count (optional; else the feature rows count)
//   raw/num-edge-list.csv.gz  the edge count, edge.csv's lines, before any inverse edge (optional)
//   raw/node_<name>.csv.gz    OGB's "additional node files" (node_year, node_species): integer rows, one per node
//   split/<name>/{train,valid,test}.csv.gz   node ids, one per line
//
// Every file is streamed, line by line, into chunks and then the graph's tensors (no copy of a file's text, no
// vector doubling): reading peaks at about twice the larger of the feature matrix and the edge list, then holds
// x (4 bytes per feature) and edge_index (16 bytes per edge). Any problem is an InputError naming the file and
// line.
//
//   OgbNodeDataset ds = OgbNodeDataset::load("examples/data/cora", {.normalization = FeatureNormalization::Row});
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/FeatureNormalization.h"
#include "data/Graph.h"
#include "gnn/tensor/SparseMatrix.h"

namespace gnn {

/// Whether every edge (s, d) of edge.csv is also read as (d, s). OGB stores an undirected graph's edges once and
/// its loader (ogb/io/read_graph_raw.py, read_csv_graph_raw) adds the reverse of each right after it:
/// (s0,d0), (d0,s0), (s1,d1), (d1,s1), ...; its master.csv says for which datasets (data/OgbNodeMaster.h).
enum class AddInverseEdges {
  Auto,  ///< OGB's add_inverse_edge for a folder named as an OGB dataset (ogbn-products or ogbn_products), else off
  On,
  Off,
};

/// "auto", "on", "off".
const char* addInverseEdgesName(AddInverseEdges a);
/// The value of a name above; nullopt for any other text.
std::optional<AddInverseEdges> parseAddInverseEdges(std::string_view name);

struct OgbNodeOptions {
  /// Split folder under split/; empty = the only one present.
  std::string split;
  /// Row is Kipf & Welling's preprocessing of bag-of-words features; real-valued ones (negative values among
  /// them) are better standardised, hence Auto.
  FeatureNormalization normalization = FeatureNormalization::Auto;
  /// Read the graph and its features only (inference: no labels, no split needed, and none read).
  bool featuresOnly = false;
  /// Auto follows OGB's master.csv by the folder's name, so a downloaded ogbn-products is undirected as in OGB.
  AddInverseEdges addInverseEdges = AddInverseEdges::Auto;
  /// OGB's "additional node files" to read (each raw/<name>.csv.gz, every name starting with "node_"); nullopt
  /// follows OGB's master.csv by the folder's name (ogbn-arxiv: node_year), as add_inverse_edge does.
  std::optional<std::vector<std::string>> additionalNodeFiles;
};

class OgbNodeDataset {
 public:
  /// Labels at or above this are refused with their line (ogbn-papers100M, the largest OGB node set, has 172).
  static constexpr int64_t kMaxClasses = 100000;

  static OgbNodeDataset load(const std::string& dir, const OgbNodeOptions& options = {});

  std::string name;
  /// x float32 [N, F], edgeIndex [2, E], y int64 [N], trainMask/validMask/testMask uint8 [N].
  Graph graph;
  /// Whether the reverse edges were added (E is then twice edge.csv's lines).
  bool inverseEdgesAdded = false;
  /// The additional node files read, by name: int64 [N, width] (OGB's graph['node_year'], PyG's data.node_year).
  std::map<std::string, Tensor> nodeFiles;
  int64_t numClasses = 0;
  std::vector<int64_t> trainIdx, validIdx, testIdx;
  /// The normalisation applied (Auto resolved to Row or Standard).
  FeatureNormalization normalization = FeatureNormalization::None;
  /// Standard: each feature's training mean and std (the divisor, 1 for a feature constant over the training
  /// nodes); empty otherwise.
  std::vector<double> featureMean, featureStd;

  /// Programs keep the features sparse below this fraction of non-zeros (Cora 1.27%, CiteSeer 0.85%), as a
  /// dense float32 matrix above it (ogbn-arxiv's and ogbn-products' embeddings: 100%). From the cost of X W with
  /// its weight gradient, SpMM against GEMM (bench_node_scale --feature-crossover, Cora's 2708 x 1433 times
  /// 1433 x 16, one thread): sparse takes 0.13 of dense's time at 10%, 0.28 at 20%, 0.39 at 30%, 0.91 at 50%,
  /// 1.74 at 100% (SpMM's 2 FLOPs per non-zero and column run at ~1/2 of GEMM's rate). And its bytes: 8 per
  /// non-zero, 24 with the transpose full-batch training builds, against 4 per entry dense, even at 1/6. At 25%
  /// sparse is ~3x faster and holds at most 1.5x the dense matrix.
  static constexpr double kSparseFeatureDensity = 0.25;
  /// Renumbers the nodes in place: node order[i] becomes node i (features, labels, masks, node files, edge
  /// endpoints and the split lists follow; the edges keep their order). No copy of the features: rows move along the
  /// permutation's cycles. order must be a permutation of 0 .. N-1.
  void permuteNodes(const std::vector<int64_t>& order);
  /// Fraction of the feature matrix that is non-zero.
  double featureDensity() const;
  /// The features as a sparse matrix (bag-of-words features are mostly zeros: Cora 1.3% non-zero).
  SparseMatrix sparseFeatures() const;
};

}  // namespace gnn
