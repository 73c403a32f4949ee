// Batch: several graphs concatenated into one disconnected graph, in PyTorch Geometric's layout, plus the
// masks of PopTorch Geometric's fixed-size batches (1 = real row, 0 = padding). Which fields exist, their
// levels and pad values: the table in loaders/BatchFields.h.
//
//   Batch b = collator.collate(graphs);
//   Variable h = conv(Variable(b.x), b.edgeIndex);        // node offsets already applied to edgeIndex
//   Variable g = globalMeanPool(h, b);                     // [numGraphs, F]; padding graphs' rows are 0
//   Variable loss = l1Loss(head(g), b.y, b.yMask);         // yMask is 0 on padding graphs
//
// Node-pair fields (Graphormer's spatial_pos [N, N] and edge_input [N, N, K, Fe]) cannot be concatenated like
// rows: each graph gets a dense block of side M = maxNodesPerGraph, as Graphormer's collator pads every graph
// to max_node and stacks them. Tensors are at most rank 4, so the graph and row dimensions share dimension 0:
//
//   spatialPos [numGraphs·M, M]         graph g's block is rows [g·M, (g+1)·M); its top-left N_g x N_g corner
//   edgeInput  [numGraphs·M, M, K, Fe]  holds the graph's values, everything else (and every padding graph's
//                                       block) is pairPadValue (-1: Graphormer's batch is ours + 1)
//
//   Tensor sp = b.spatialPos.reshape({b.numGraphs, b.maxNodesPerGraph, b.maxNodesPerGraph});  // static shape
//
// Node i of real graph g (row ptr[g] + i of x) is row/column i of g's block. Padding graphs may hold more than
// M nodes; their blocks are all padding.
#pragma once
#include <cstdint>
#include <vector>

#include "gnn/tensor/Tensor.h"

namespace gnn {

struct Batch {
  /// Rows of each kind, padding included (the fixed sizes for fixed-size batches).
  int64_t numNodes = 0, numEdges = 0, numGraphs = 0;
  /// Real rows; real graphs come first, then the padding graph(s).
  int64_t numRealNodes = 0, numRealEdges = 0, numRealGraphs = 0;
  /// Side M of each graph's node-pair block (FixedSizeOptions::maxGraphNodes(); for DataLoader batches, the
  /// largest graph of the batch). No real graph has more nodes.
  int64_t maxNodesPerGraph = 0;

  Tensor x;           // [numNodes, F] node features (float or int64), pad rows = node pad value
  Tensor edgeIndex;   // [2, numEdges] int64, node offsets applied; pad edges are self-loops on pad nodes
  Tensor edgeAttr;    // [numEdges, Fe] or undefined; pad rows = edge pad value
  Tensor y;           // graph-level [numGraphs, T] (or node-level [numNodes]); pad rows = graph pad value
  Tensor yMask;       // uint8, shaped like y: 1 = a real label (0 on padding and on missing labels)
  Tensor pos;         // [numNodes, 3] or undefined; pad rows = node pad value
  Tensor z;           // [numNodes] int64 or undefined; pad rows = node pad value
  Tensor spatialPos;  // [numGraphs·M, M] int64 or undefined (see above); padding = pair pad value
  Tensor inDegree;    // [numNodes] int64 or undefined; pad rows = node pad value
  Tensor edgeInput;   // [numGraphs·M, M, K, Fe] int64 or undefined (see above); padding = pair pad value
  Tensor trainMask, validMask, testMask;  // [numNodes] uint8 node split masks (node-level data), 0 on pads
  Tensor graphFeatures;  // [numGraphs, F] float32 graph-level features or undefined; padding graphs' rows are 0
  Tensor nodeFeatures;   // [numNodes, F] float32 node-level features or undefined; padding nodes' rows are 0

  Tensor batch;    // [numNodes] int64 graph id of each node (sorted)
  Tensor ptr;      // [numGraphs + 1] int64 node offsets of each graph (PyG's `ptr`); same as nodePtr
  Tensor edgePtr;  // [numGraphs + 1] int64 edge offsets of each graph
  Tensor graphsMask, nodesMask, edgesMask;  // uint8 [numGraphs], [numNodes], [numEdges]; 1 = real

  /// Dataset index of each real graph (the order of the rows); for cluster batches, the cluster ids.
  std::vector<int64_t> graphIndex;
  /// For cluster and neighbour batches: the original node id of each real node (PyG's n_id).
  std::vector<int64_t> nodeIndex;
  /// For neighbour batches (loaders/FixedSizeNeighborLoader.h): rows 0 .. numSeeds-1 are the seeds (PyG's
  /// batch_size), inputId their positions in the loader's input nodes (PyG's input_id). Stacked micro-batches
  /// add their counts and concatenate their ids.
  int64_t numSeeds = 0;
  std::vector<int64_t> inputId;
  /// For neighbour batches: the real nodes by hop (hop 0: the seeds) and the real edges sampled by each hop, in
  /// the order of the rows and columns (what is left of them after trimming); empty for stacked micro-batches.
  std::vector<int64_t> nodesPerHop, edgesPerHop;

  const Tensor& nodePtr() const { return ptr; }
  /// Checks every invariant of a batch (sizes, every field's rows for its level, sorted `batch`, masks match
  /// the real counts, edges stay within their graph, real graphs fit their node-pair blocks); throws
  /// std::invalid_argument naming the first broken one. Used by tests and debug runs.
  void validate() const;
};

/// PopTorch's combined batching: K micro-batches stacked along dimension 0 (K·numNodes rows, ...), every
/// micro-batch keeping its own local indices (edgeIndex, batch, ptr are not offset). edgeIndex is [2, K·E]
/// (micro-batch k owns columns [k·E, (k+1)·E)); node-pair fields are [K·numGraphs·M, M, ...]. One host request
/// of a device is microBatch × deviceIterations × replicas × gradientAccumulation such micro-batches.
Batch stackMicroBatches(const std::vector<Batch>& parts);
/// Micro-batch k of a stack made by stackMicroBatches with `count` parts (tensors share storage).
Batch microBatch(const Batch& stacked, int64_t k, int64_t count);

}  // namespace gnn
