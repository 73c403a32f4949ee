#include "data/MoleculeGraph.h"

#include <algorithm>

namespace gnn {

void MoleculeGraph::clear() {
  numNodes = 0;
  smiles.clear();
  x.clear();
  src.clear();
  dst.clear();
  edgeAttr.clear();
  pos.clear();
  z.clear();
  y.clear();
  yMask.clear();
  maxDist = 0;
  spatialPos.clear();
  inDegree.clear();
  edgeInput.clear();
  pathVia.clear();
}

Graph MoleculeGraph::toGraph() const {
  Graph g;
  const int64_t n = numNodes, e = numEdges();
  g.numNodes = n;
  g.x = Tensor::fromVector(x, {n, kAtomFeatures});
  g.edgeIndex = Tensor({2, e}, DType::I64);
  int64_t* ei = g.edgeIndex.data<int64_t>();
  std::copy(src.begin(), src.end(), ei);
  std::copy(dst.begin(), dst.end(), ei + e);
  g.edgeAttr = Tensor::fromVector(edgeAttr, {e, kBondFeatures});
  const int64_t t = static_cast<int64_t>(y.size());
  g.y = Tensor::fromVector(y, {t});
  g.yMask = Tensor::fromVector(yMask, {t});
  if (!pos.empty()) g.pos = Tensor::fromVector(pos, {n, 3});
  if (!z.empty()) g.z = Tensor::fromVector(z, {n});
  if (!inDegree.empty()) {
    g.spatialPos = Tensor::fromVector(spatialPos, {n, n});
    g.inDegree = Tensor::fromVector(inDegree, {n});
    g.edgeInput = Tensor({n, n, maxDist, kBondFeatures}, DType::I64);
    std::copy(edgeInput.begin(), edgeInput.end(), g.edgeInput.data<int64_t>());
  }
  return g;
}

}  // namespace gnn
