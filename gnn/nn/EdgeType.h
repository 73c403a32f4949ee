// EdgeType: a relation of a heterogeneous graph, (source node type, relation, destination node type): PyG's
// EdgeType tuple (torch_geometric/typing.py). The key of a HeteroGraph's edge stores (data/HeteroGraph.h) and of a
// heterogeneous layer's parameters per relation (gnn/nn/conv/HGTConv.h), so it sits with the layers, below data/.
//
//   EdgeType writes{"author", "writes", "paper"};
//   writes.str();                                   // "author__writes__paper", PyG's key of its parameters
#pragma once
#include <string>
#include <tuple>

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

}  // namespace gnn
