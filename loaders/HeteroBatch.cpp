#include "loaders/HeteroBatch.h"

#include <string>

#include "gnn/system/Check.h"

namespace gnn {

namespace {

// Whether a uint8 mask of `rows` rows is 1 exactly on its first `real` rows.
bool prefixMask(const Tensor& mask, int64_t rows, int64_t real) {
  if (!mask.defined() || mask.dtype() != DType::U8 || mask.rank() != 1 || mask.dim(0) != rows) return false;
  const uint8_t* m = mask.data<uint8_t>();
  for (int64_t r = 0; r < rows; ++r)
    if (m[r] != (r < real ? 1 : 0)) return false;
  return true;
}

}  // namespace

const HeteroBatch::NodeRows& HeteroBatch::node(const std::string& type) const {
  for (const NodeRows& n : nodes)
    if (n.type == type) return n;
  invalidArgument("HeteroBatch: no node type '", type, "'");
}

const HeteroBatch::EdgeRows& HeteroBatch::edge(const EdgeType& type) const {
  for (const EdgeRows& e : edges)
    if (e.type == type) return e;
  invalidArgument("HeteroBatch: no edge type ", type.str());
}

EdgeIndexDict HeteroBatch::edgeIndexDict() const {
  EdgeIndexDict d;
  for (const EdgeRows& e : edges) d.emplace_back(e.type, e.edgeIndex);
  return d;
}

void HeteroBatch::validate() const {
  for (const NodeRows& n : nodes) {
    const std::string at = "HeteroBatch: node type '" + n.type + "': ";
    GNN_CHECK_ARG(0 <= n.numRealNodes && n.numRealNodes < n.numNodes, at, n.numRealNodes, " real rows of ", n.numNodes,
                  " leave no padding row");
    GNN_CHECK_ARG(!n.x.defined() || (n.x.rank() >= 1 && n.x.dim(0) == n.numNodes), at, "x has the wrong rows");
    GNN_CHECK_ARG(n.nodeId.defined() && n.nodeId.dtype() == DType::I64 && n.nodeId.numel() == n.numNodes, at,
                  "nodeId must be int64 [", n.numNodes, "]");
    GNN_CHECK_ARG(prefixMask(n.nodesMask, n.numNodes, n.numRealNodes), at, "nodesMask does not mark the first ",
                  n.numRealNodes, " rows");
  }
  for (const EdgeRows& e : edges) {
    const std::string at = "HeteroBatch: edge type " + e.type.str() + ": ";
    const NodeRows& s = node(e.type.src);
    const NodeRows& d = node(e.type.dst);
    GNN_CHECK_ARG(0 <= e.numRealEdges && e.numRealEdges < e.numEdges, at, e.numRealEdges, " real edges of ",
                  e.numEdges, " leave no padding edge");
    GNN_CHECK_ARG(e.edgeIndex.defined() && e.edgeIndex.dtype() == DType::I64 && e.edgeIndex.rank() == 2 &&
                      e.edgeIndex.dim(0) == 2 && e.edgeIndex.dim(1) == e.numEdges,
                  at, "edgeIndex must be int64 [2, ", e.numEdges, "]");
    GNN_CHECK_ARG(!e.edgeAttr.defined() || (e.edgeAttr.rank() >= 1 && e.edgeAttr.dim(0) == e.numEdges), at,
                  "edgeAttr has the wrong rows");
    GNN_CHECK_ARG(prefixMask(e.edgesMask, e.numEdges, e.numRealEdges), at, "edgesMask does not mark the first ",
                  e.numRealEdges, " edges");
    GNN_CHECK_ARG(static_cast<int64_t>(e.edgeIds.size()) == e.numRealEdges, at, e.edgeIds.size(), " edge ids for ",
                  e.numRealEdges, " real edges");
    const int64_t* ei = e.edgeIndex.data<int64_t>();
    for (int64_t k = 0; k < e.numEdges; ++k) {
      const int64_t a = ei[k], b = ei[e.numEdges + k];
      if (k < e.numRealEdges)
        GNN_CHECK_ARG(0 <= a && a < s.numRealNodes && 0 <= b && b < d.numRealNodes, at, "real edge ", k, " (", a,
                      " -> ", b, ") leaves the real rows");
      else
        GNN_CHECK_ARG(a == s.numRealNodes && b == d.numRealNodes, at, "padding edge ", k, " (", a, " -> ", b,
                      ") is not between the first padding rows (", s.numRealNodes, " -> ", d.numRealNodes, ")");
    }
  }
  const NodeRows& t = node(targetType);
  GNN_CHECK_ARG(0 <= numSeeds && numSeeds <= t.numRealNodes, "HeteroBatch: ", numSeeds, " seeds but ",
                t.numRealNodes, " real rows of '", targetType, "'");
  GNN_CHECK_ARG(static_cast<int64_t>(inputId.size()) == numSeeds, "HeteroBatch: ", inputId.size(),
                " input ids for ", numSeeds, " seeds");
  GNN_CHECK_ARG(prefixMask(seedMask, t.numNodes, numSeeds), "HeteroBatch: seedMask does not mark the first ", numSeeds,
                " rows");
  GNN_CHECK_ARG(!y.defined() || (y.rank() >= 1 && y.dim(0) == t.numNodes), "HeteroBatch: y has the wrong rows");
}

}  // namespace gnn
