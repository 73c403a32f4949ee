// EdgeType: a relation of a heterogeneous graph, (source node type, relation, destination node type): PyG's
// EdgeType tuple (torch_geometric/typing.py), with PyG's Metadata and an edge_index_dict. The key of a HeteroGraph's
// edge stores (data/HeteroGraph.h) and of the heterogeneous layers' modules and parameters per relation
// (HeteroConv, to_hetero's models, HGTConv), so it sits with the layers, below data/.
//
//   EdgeType writes{"author", "writes", "paper"};
//   writes.str();                                   // "author__writes__paper", PyG's key of its parameters
#pragma once
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gnn/tensor/Tensor.h"

namespace gnn {

struct EdgeType {
  std::string src, rel, dst;

  /// "src__rel__dst": the key PyG gives a relation's module or parameter (to_hetero and HGTConv join the tuple
  /// with "__").
  std::string str() const { return src + "__" + rel + "__" + dst; }
  /// Lexicographic on (src, rel, dst), as Python orders tuples of strings (OGB sorts its triplets so).
  bool operator<(const EdgeType& o) const { return std::tie(src, rel, dst) < std::tie(o.src, o.rel, o.dst); }
  bool operator==(const EdgeType& o) const { return src == o.src && rel == o.rel && dst == o.dst; }
  bool operator!=(const EdgeType& o) const { return !(*this == o); }
};

/// (node types, edge types): PyG's Metadata, HeteroData.metadata(), in the graph's order.
using HeteroMetadata = std::pair<std::vector<std::string>, std::vector<EdgeType>>;

/// PyG's edge_index_dict with its order kept: int64 [2, E] per edge type, row 0 into the source type's nodes, row 1
/// into the destination's.
using EdgeIndexDict = std::vector<std::pair<EdgeType, Tensor>>;

}  // namespace gnn
