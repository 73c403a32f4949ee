// OgbHeteroDataset: one heterogeneous graph for node classification, read from OGB's heterogeneous raw layout
// (ogbn-mag) as ogb/io/read_graph_raw.py reads it (read_csv_heterograph_raw, read_node_label_hetero,
// read_nodesplitidx_split_hetero), every file optionally gzipped, no header unless said:
//
//   raw/num-node-dict.csv.gz       header: the node types; one row: their node counts
//   raw/triplet-type-list.csv.gz   "src,rel,dst" per edge type
//   raw/relations/<src>___<rel>___<dst>/edge.csv.gz        "src,dst" per edge (src's and dst's own node ids)
//   raw/relations/<src>___<rel>___<dst>/num-edge-list.csv.gz  edge.csv's line count
//   raw/relations/<src>___<rel>___<dst>/edge-feat.csv.gz      optional: one row of features per edge
//   raw/relations/<src>___<rel>___<dst>/edge_reltype.csv.gz   OGB's additional edge file (ogbn-mag), integers
//   raw/node-feat/<type>/node-feat.csv.gz   optional per type: one row of features per node
//   raw/node-feat/<type>/node_year.csv.gz   OGB's additional node file (ogbn-mag: papers only), integers
//   raw/nodetype-has-label.csv.gz  header: node types; one row: True/False
//   raw/node-label/<type>/node-label.csv.gz  one integer class per node, for each type with True
//   split/<name>/nodetype-has-split.csv.gz   header: node types; one row: True/False
//   split/<name>/<type>/{train,valid,test}.csv.gz   node ids of that type, one per line
//
// Told from the homogeneous layout (OgbNodeDataset) by raw/triplet-type-list.csv.gz: isOgbHeteroLayout(). Types
// come in OGB's order: read_csv_heterograph_raw sorts the node types and the triplets (Python's sorted(), i.e. by
// bytes), whatever order the files list them in. Files are streamed as OgbNodeDataset streams them; any problem is
// an InputError naming the file and line.
//
//   OgbHeteroDataset mag = OgbHeteroDataset::load("data/ogbn_mag");
//   const Tensor& x = mag.graph.node("paper").x;                 // [736389, 128]
//   mag.graph.edge({"author", "writes", "paper"}).edgeIndex;     // [2, 7145660]
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "data/FeatureNormalization.h"
#include "data/HeteroGraph.h"
#include "data/OgbNodeDataset.h"

namespace gnn {

/// Whether dir holds OGB's heterogeneous raw layout (raw/triplet-type-list.csv or .csv.gz).
bool isOgbHeteroLayout(const std::string& dir);

struct OgbHeteroOptions {
  /// Split folder under split/; empty = the only one present.
  std::string split;
  /// Applied to each node type with features on its own (Auto resolved per type); Standard takes the type's
  /// training nodes, so it needs a split for that type.
  FeatureNormalization normalization = FeatureNormalization::Auto;
  /// Read the graph and its features only (no labels, no split).
  bool featuresOnly = false;
  /// OGB's add_inverse_edge for every relation: each line (s, d) becomes (s, d), (d, s) within the same relation,
  /// features repeated. Auto follows OGB's master.csv by the folder's name: ogbn-mag says False. On is refused for
  /// a folder with a relation between two types (the reverse would index the wrong types); toUndirected is the
  /// way to add reverse relations there.
  AddInverseEdges addInverseEdges = AddInverseEdges::Auto;
  /// OGB's additional node files, read per type as raw/node-feat/<type>/<name>.csv.gz where present (names start
  /// with "node_"); nullopt = master.csv's list for a folder named as the dataset (ogbn-mag: node_year), else none.
  std::optional<std::vector<std::string>> additionalNodeFiles;
  /// OGB's additional edge files, read per relation where present; only "edge_reltype" (master.csv's one, for
  /// ogbn-mag) has a place in the graph. nullopt as above (ogbn-mag: edge_reltype).
  std::optional<std::vector<std::string>> additionalEdgeFiles;
  /// Apply HeteroGraph::toUndirected() (PyG's T.ToUndirected(), reduce "add") after reading; OGB does not.
  bool toUndirected = false;
};

class OgbHeteroDataset {
 public:
  static OgbHeteroDataset load(const std::string& dir, const OgbHeteroOptions& options = {});

  std::string name;
  /// Node types: counts, x float32 [N, F] where node-feat exists, y int64 [N] for the labelled types, the split
  /// lists, node files; edge types: edgeIndex [2, E], edgeAttr float32 [E, F] where edge-feat exists, edgeReltype.
  HeteroGraph graph;
  bool inverseEdgesAdded = false;
  /// Per labelled type: its largest label + 1.
  std::map<std::string, int64_t> numClasses;
  /// Per type with features: the normalisation applied (Auto resolved), and under Standard each feature's training
  /// mean and divisor.
  std::map<std::string, FeatureNormalization> normalization;
  std::map<std::string, std::vector<double>> featureMean, featureStd;
};

}  // namespace gnn
