// HeteroBatch: one fixed-size batch of a heterogeneous graph, PyG's sampled HeteroData with every node type's and
// edge type's rows padded to a fixed count (loaders/HeteroBatchCollate.h builds them for the neighbour and the cluster
// loader). Per node type the real rows come first, then padding rows; per edge type likewise, and every padding edge
// joins the source type's first padding row to the destination type's first padding row, so no real node receives a
// padded message (the homogeneous batches' padding graph, one per type). Masks are 1 on real rows.
//
//   HeteroBatch b;  loader.next(b);
//   std::map<std::string, Variable> xDict = ...;                 // b.node("paper").x, embeddings of b.node(t).nodeId
//   auto out = model.forward(xDict, b.edgeIndexDict());          // every edge type, the graph's order
//   Variable loss = crossEntropy(out["paper"], b.y, b.seedMask);  // PyG's loss over out[:batch_size]
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gnn/nn/EdgeType.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

struct HeteroBatch {
  struct NodeRows {
    std::string type;
    int64_t numNodes = 0, numRealNodes = 0;  // rows (fixed) and real rows (the first ones)
    Tensor x;          // [numNodes, F] the type's features (pad rows = node pad value); undefined for a type without
    Tensor nodeId;     // int64 [numNodes]: each real row's id within the type (PyG's n_id), 0 on padding rows, so
                       // a featureless type's embedding lookup stays in range (pad rows are masked)
    Tensor nodesMask;  // uint8 [numNodes]
    std::vector<int64_t> nodesPerHop;  // real rows added by the seeds and by each hop (after trimming)
  };
  struct EdgeRows {
    EdgeType type;
    int64_t numEdges = 0, numRealEdges = 0;
    Tensor edgeIndex;  // int64 [2, numEdges]: row 0 into the source type's rows, row 1 into the destination's
    Tensor edgeAttr;   // [numEdges, Fe] gathered (pad rows = edge pad value); undefined when the type has none
    Tensor edgesMask;  // uint8 [numEdges]
    std::vector<int64_t> edgeIds;      // each real edge's column in the graph's edge_index of this type
    std::vector<int64_t> edgesPerHop;  // real edges sampled by each hop (after trimming)
  };

  std::vector<NodeRows> nodes;  // every node type, the graph's order
  std::vector<EdgeRows> edges;  // every edge type, the graph's order
  std::string targetType;       // the seeds' type
  int64_t numSeeds = 0;         // rows 0 .. numSeeds-1 of the target type (PyG's batch_size)
  std::vector<int64_t> inputId; // the seeds' positions in the loader's input nodes (PyG's input_id)
  Tensor y;                     // the target type's labels, [numNodes of the target, ...] (pad rows = label pad
                                // value); undefined when the type has none
  Tensor seedMask;              // uint8 [numNodes of the target]: 1 on the seed rows

  /// A type's rows; throw std::invalid_argument naming an unknown type.
  const NodeRows& node(const std::string& type) const;
  const EdgeRows& edge(const EdgeType& type) const;
  /// PyG's edge_index_dict: every edge type's padded edge_index, the graph's order.
  EdgeIndexDict edgeIndexDict() const;
  /// Checks every invariant (each tensor's rows, masks marking exactly the first real rows, real edges between real
  /// rows, padding edges between the padding rows above, seeds within the target's real rows); throws
  /// std::invalid_argument naming the first broken one. For tests and debug runs.
  void validate() const;
};

}  // namespace gnn
