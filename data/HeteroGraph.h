// HeteroGraph: one graph with several node types and relations, as PyTorch Geometric's HeteroData holds it: per
// node type a count and optional features, labels, splits and extra node files; per edge type (src, rel, dst) an
// edge_index whose rows index the source and the destination type's nodes, and optional edge features.
//
//   HeteroGraph g;
//   g.addNodeType("paper", 3).x = Tensor::zeros({3, 128});
//   g.addNodeType("author", 2);
//   g.addEdgeType({"author", "writes", "paper"}, Tensor::fromVector<int64_t>({0, 1, 1, 2}, {2, 2}));
//   g.validate();
//   g.toUndirected();   // adds ("paper", "rev_writes", "author"), as PyG's T.ToUndirected()
//   auto [nodeTypes, edgeTypes] = g.metadata();
#pragma once
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gnn/nn/EdgeType.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

/// One node type's tensors (PyG's NodeStorage).
struct NodeStore {
  int64_t numNodes = 0;
  Tensor x;  ///< float32 [N, F]; undefined for a type without features (ogbn-mag: all but paper)
  Tensor y;  ///< int64 [N] (or [N, 1]) class labels; undefined for an unlabelled type
  /// Split node ids within this type; hasSplit tells an empty list from no split at all.
  std::vector<int64_t> trainIdx, validIdx, testIdx;
  bool hasSplit = false;
  /// Extra per-node files by name, int64 [N, w] (OGB's node_year: PyG's data['paper'].node_year).
  std::map<std::string, Tensor> nodeFiles;
};

/// One edge type's tensors (PyG's EdgeStorage).
struct EdgeStore {
  Tensor edgeIndex;    ///< int64 [2, E]: row 0 indexes the source type's nodes, row 1 the destination's
  Tensor edgeAttr;     ///< [E, F] edge features (float32 from OGB); may be undefined
  Tensor edgeReltype;  ///< int64 [E, w] (OGB's edge_reltype); may be undefined

  int64_t numEdges() const { return edgeIndex.defined() ? edgeIndex.dim(1) : 0; }
};

/// How ToUndirected merges the features of duplicate edges of a same-type relation (PyG's `reduce`).
enum class EdgeReduce { Add, Mean, Min, Max, Mul };

class HeteroGraph {
 public:
  /// Types keep insertion order, as PyG's HeteroData (its stores are Python dicts): node_types, edge_types and
  /// metadata() list them in the order they were added, so a reader decides the order once (OgbHeteroDataset:
  /// OGB's sorted order) and every model built from metadata() sees the same one. Stores live in a deque, so a
  /// reference to one stays valid while types are added.

  /// Adds a node type; throws std::invalid_argument if it exists or numNodes < 0.
  NodeStore& addNodeType(const std::string& type, int64_t numNodes);
  /// Adds an edge type with its edge_index; throws std::invalid_argument if it exists.
  EdgeStore& addEdgeType(const EdgeType& type, Tensor edgeIndex);
  bool hasNodeType(const std::string& type) const;
  bool hasEdgeType(const EdgeType& type) const;
  /// The store of a type; throws std::invalid_argument naming an unknown type.
  NodeStore& node(const std::string& type);
  const NodeStore& node(const std::string& type) const;
  EdgeStore& edge(const EdgeType& type);
  const EdgeStore& edge(const EdgeType& type) const;

  int64_t numNodes(const std::string& type) const { return node(type).numNodes; }
  /// All node types' nodes / all edge types' edges.
  int64_t numNodes() const;
  int64_t numEdges() const;
  std::vector<std::string> nodeTypes() const;
  std::vector<EdgeType> edgeTypes() const;
  /// (node types, edge types), PyG's HeteroData.metadata().
  std::pair<std::vector<std::string>, std::vector<EdgeType>> metadata() const;

  /// Throws std::invalid_argument naming the type and tensor when an edge type names an unknown node type, an
  /// edge_index is not int64 [2, E] or points past its source/destination type's count, a node or edge tensor's
  /// rows disagree with its count, or a split id is out of range.
  void validate() const;

  /// PyG 2.3.1's T.ToUndirected(reduce, merge) (torch_geometric/transforms/to_undirected.py), type by type in the
  /// order they were added (new types are appended and not visited):
  /// - a relation whose source and destination type are the same (and merge): utils.to_undirected, i.e. the
  ///   edges concatenated with their flips, then coalesced: sorted by (row, col), duplicates removed, their edge
  ///   features (edgeAttr and edgeReltype alike: every [E, ...] tensor of the store) reduced by `reduce`;
  /// - any other relation (or every one without merge): (dst, "rev_" + rel, src) gets the flipped edge_index and
  ///   the same edge features, in the same order. PyG assigns data[dst, 'rev_' + rel, src], so a reverse type that
  ///   already exists has its edge_index and those features overwritten.
  void toUndirected(EdgeReduce reduce = EdgeReduce::Add, bool merge = true);

 private:
  std::deque<std::pair<std::string, NodeStore>> nodes_;
  std::deque<std::pair<EdgeType, EdgeStore>> edges_;
};

}  // namespace gnn
