// HeteroToHomogeneous: a HeteroGraph as one typed graph, PyG 2.3.1's HeteroData.to_homogeneous()
// (torch_geometric/data/hetero_data.py: to_homogeneous, to_homogeneous_edge_index, get_node_slices,
// offset_edge_index). Node types are laid out one after another in the graph's order, type t's nodes at rows
// [nodeSlices[t], nodeSlices[t + 1]); every edge type's edge_index is shifted by its source and destination
// types' offsets and the edge types are concatenated in order; node_type [N] and edge_type [E] hold each row's
// type as its position in nodeTypeNames / edgeTypeNames. A feature is combined across types as PyG does:
//   - with dummyValues (PyG's default), when every type that has it gives it the same trailing shape (x of 128
//     columns): the types without it get rows of NaN (floats) or -1 (integers), then all are concatenated;
//   - without, only when every type has it, with one trailing shape;
//   - otherwise (x of 128 columns for papers and 64 for authors) it is left out, as PyG leaves it out.
// Node features: x, y and each node file (node_year); edge features: edgeAttr, edgeReltype. Split lists are not
// features here (PyG's masks would be): a type's split ids plus its offset are its rows.
//
//   HomogeneousGraph h = toHomogeneous(g);          // g: author (2 nodes), paper (3 nodes); writes
//   h.nodeSlices;                                   // {0, 2, 5}
//   h.nodeType;                                     // [0, 0, 1, 1, 1]
//   int64_t firstPaper = h.nodeOffset("paper");     // 2
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "data/HeteroGraph.h"

namespace gnn {

struct ToHomogeneousOptions {
  /// PyG's node_attrs / edge_attrs: the features to combine (names: x, y, a node file's name; edge_attr,
  /// edge_reltype), each then required of every type (after the dummy values); nullopt (PyG's None) = every
  /// feature that can be combined, as above. An empty list combines none: a model that reads each type's features
  /// on its own (models/HeteroRGCN.h) needs no [N, F] copy with NaN rows.
  std::optional<std::vector<std::string>> nodeAttrs, edgeAttrs;
  bool addNodeType = true;  ///< PyG's add_node_type
  bool addEdgeType = true;  ///< PyG's add_edge_type
  bool dummyValues = true;  ///< PyG's dummy_values
};

/// PyG's Data that to_homogeneous returns, with the slices PyG computes on the way kept.
struct HomogeneousGraph {
  int64_t numNodes = 0;
  /// int64 [2, E]; undefined when no edge type has an edge_index (PyG: no edge_index attribute).
  Tensor edgeIndex;
  /// int64 [N] and [E] (when asked for; edgeType only where there are edges).
  Tensor nodeType, edgeType;
  /// PyG's _node_type_names (every node type) and _edge_type_names (the edge types with an edge_index).
  std::vector<std::string> nodeTypeNames;
  std::vector<EdgeType> edgeTypeNames;
  /// Type t's rows are [nodeSlices[t], nodeSlices[t + 1]) (PyG's node_slices as one list); likewise its edges.
  std::vector<int64_t> nodeSlices, edgeSlices;
  /// The combined features; undefined where PyG leaves them out.
  Tensor x, y, edgeAttr, edgeReltype;
  std::map<std::string, Tensor> nodeFiles;

  /// The position of a node type in nodeTypeNames; throws std::invalid_argument naming an unknown type.
  int64_t nodeTypeIndex(const std::string& type) const;
  /// The first row of a node type's nodes.
  int64_t nodeOffset(const std::string& type) const { return nodeSlices[static_cast<size_t>(nodeTypeIndex(type))]; }
};

/// The conversion above; throws std::invalid_argument for a feature whose types hold it in different dtypes
/// (PyG's torch.cat would promote them) or a dtype it cannot fill with a dummy value, and for a feature named in
/// nodeAttrs / edgeAttrs that some type lacks or holds in another shape (PyG: a KeyError or torch.cat's error).
HomogeneousGraph toHomogeneous(const HeteroGraph& g, const ToHomogeneousOptions& options = {});

}  // namespace gnn
