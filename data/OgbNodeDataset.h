// OgbNodeDataset: one graph for node classification, read from OGB's node-property-prediction raw layout
// (as ogb.nodeproppred writes it, every file optionally gzipped, no headers):
//
//   raw/edge.csv.gz           "src,dst" per directed edge
//   raw/node-feat.csv.gz      one row of comma-separated features per node (all rows the same width)
//   raw/node-label.csv.gz     one integer class per node
//   raw/num-node-list.csv.gz  the node count (optional; else the feature rows count)
//   split/<name>/{train,valid,test}.csv.gz   node ids, one per line
//
// Every file is streamed; any problem is an InputError naming the file and line.
//
//   OgbNodeDataset ds = OgbNodeDataset::load("examples/data/cora", {.normalizeFeatures = true});
#pragma once
#include <string>
#include <vector>

#include "data/Graph.h"
#include "gnn/SparseMatrix.h"

namespace gnn {

struct OgbNodeOptions {
  /// Split folder under split/; empty = the only one present.
  std::string split;
  /// Rows scaled to sum to 1 (PyG's NormalizeFeatures), as in Kipf & Welling's preprocessing.
  bool normalizeFeatures = true;
};

class OgbNodeDataset {
 public:
  /// Labels at or above this are refused with their line (ogbn-papers100M, the largest OGB node set, has 172).
  static constexpr int64_t kMaxClasses = 100000;

  static OgbNodeDataset load(const std::string& dir, const OgbNodeOptions& options = {});

  std::string name;
  /// x float32 [N, F], edgeIndex [2, E], y int64 [N], trainMask/validMask/testMask uint8 [N].
  Graph graph;
  int64_t numClasses = 0;
  std::vector<int64_t> trainIdx, validIdx, testIdx;

  /// The features as a sparse matrix (bag-of-words features are mostly zeros: Cora 1.3% non-zero).
  SparseMatrix sparseFeatures() const;
};

}  // namespace gnn
