#include "loaders/HeteroBatchToHomogeneous.h"

#include <algorithm>

#include "gnn/system/Check.h"

namespace gnn {

HomogeneousGraph heteroBatchToHomogeneous(const HeteroBatch& batch, const std::vector<EdgeType>& relations) {
  HomogeneousGraph h;
  h.nodeSlices = {0};
  for (const HeteroBatch::NodeRows& n : batch.nodes) {
    h.nodeTypeNames.push_back(n.type);
    h.nodeSlices.push_back(h.nodeSlices.back() + n.numNodes);
  }
  h.numNodes = h.nodeSlices.back();
  h.nodeType = Tensor::empty({h.numNodes}, DType::I64);
  for (size_t t = 0; t + 1 < h.nodeSlices.size(); ++t)
    std::fill(h.nodeType.data<int64_t>() + h.nodeSlices[t], h.nodeType.data<int64_t>() + h.nodeSlices[t + 1],
              static_cast<int64_t>(t));
  h.edgeTypeNames = relations;
  h.edgeSlices = {0};
  for (const HeteroBatch::EdgeRows& e : batch.edges) h.edgeSlices.push_back(h.edgeSlices.back() + e.numEdges);
  const int64_t E = h.edgeSlices.back();
  h.edgeIndex = Tensor::empty({2, E}, DType::I64);
  h.edgeType = Tensor::empty({E}, DType::I64);
  int64_t *src = h.edgeIndex.data<int64_t>(), *dst = src + E, *rel = h.edgeType.data<int64_t>();
  for (size_t k = 0; k < batch.edges.size(); ++k) {
    const HeteroBatch::EdgeRows& e = batch.edges[k];
    const auto r = std::find(relations.begin(), relations.end(), e.type);
    GNN_CHECK_ARG(r != relations.end(), "heteroBatchToHomogeneous: the batch's edge type ", e.type.str(),
                  " is not one of the layout's ", relations.size(), " relations");
    const int64_t n = e.numEdges, at = h.edgeSlices[k], id = r - relations.begin();
    const int64_t srcOffset = h.nodeOffset(e.type.src), dstOffset = h.nodeOffset(e.type.dst);
    const int64_t* ei = e.edgeIndex.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      src[at + i] = ei[i] + srcOffset;
      dst[at + i] = ei[n + i] + dstOffset;
      rel[at + i] = id;
    }
  }
  return h;
}

}  // namespace gnn
