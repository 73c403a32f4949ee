// Graph: one graph's tensors in PyTorch Geometric's layout. Node-level datasets (Cora) hold one Graph with
// float features; molecular datasets hold many Graphs with categorical int64 features (OGB's smiles2graph).
//
//   x          [N, F]  float32 features, or int64 categorical features (molecules: 9 OGB atom features)
//   edgeIndex  [2, E]  int64, row 0 = source, row 1 = destination
//   edgeAttr   [E, Fe] int64 categorical (molecules: 3 OGB bond features) or float; may be undefined
//   y          graph-level [T] or node-level [N] targets (float32 regression, int64 classes)
//   yMask      same shape as y, uint8, 1 = label present (MoleculeNet CSVs have missing labels)
//   pos        [N, 3] float32 coordinates in Angstrom (SDF, XYZ or generated conformers); may be undefined
//   z          [N] int64 atomic numbers (for geometric models); may be undefined
//   spatialPos [N, N] int64 shortest-path distances (Graphormer; unreachable = 510); may be undefined
//   inDegree   [N] int64 degrees (Graphormer centrality encoding); may be undefined
//   edgeInput  [N, N, K, Fe] int64 edge features along one shortest path (Graphormer); may be undefined
//   trainMask/validMask/testMask [N] uint8 node masks (node-level tasks)
//   graphFeatures [F] float32 graph-level features (molecules: descriptors, app/MoleculeFeatures.h); may be undefined
//   nodeFeatures [N, F] float32 node-level features (molecules: the user's atom descriptors, app/AtomFeatures.h);
//              may be undefined
#pragma once
#include <string>

#include "gnn/tensor/Tensor.h"

namespace gnn {

struct Graph {
  int64_t numNodes = 0;
  Tensor x;
  Tensor edgeIndex;
  Tensor edgeAttr;
  Tensor y;
  Tensor yMask;
  Tensor pos;
  Tensor z;
  Tensor spatialPos;
  Tensor inDegree;
  Tensor edgeInput;
  Tensor trainMask, validMask, testMask;
  Tensor graphFeatures;
  Tensor nodeFeatures;

  int64_t numEdges() const { return edgeIndex.defined() ? edgeIndex.dim(1) : 0; }
  /// Throws std::invalid_argument naming `what` (e.g. "graph 17") when shapes disagree or an edge index is
  /// out of range.
  void validate(const std::string& what = "graph") const;
};

}  // namespace gnn
