// layerwiseInference: every node's outputs of a BasicGNN computed a layer at a time, each layer over batches of
// target nodes with all their incoming neighbours (PyG 2.3.1 BasicGNN.inference over a NeighborLoader with
// num_neighbors=[-1]): memory is the layer's input and output for every node plus one batch's subgraph, rather
// than every layer's intermediates over the whole graph, so evaluation of a graph of millions of nodes fits the
// memory its neighbour-sampled training takes. Runs without gradients, in evaluation mode.
//
// A layer's output for a target depends only on its incoming edges and its neighbours' rows for the classes
// whose normalisation is the target's own (GraphSAGE, GIN, GAT, GATv2, PNA, EdgeCNN); GCN's symmetric
// normalisation also reads each neighbour's degree, and a graph-wise norm (graph, instance, layer in graph mode)
// the whole graph's statistics: those are refused (layerwiseInferenceSupported), as are edge features.
//
//   NeighborSampler csc(graph.edgeIndex, graph.numNodes);
//   Tensor logits = layerwiseInference(model, graph.x, csc, /*batchSize=*/4096);   // [N, out]
#pragma once
#include <cstdint>
#include <string>

#include "gnn/nn/models/BasicGNN.h"
#include "loaders/NeighborSampler.h"

namespace gnn {

/// Empty when `model` can run layer-wise, else why not (one line).
std::string layerwiseInferenceRefusal(const BasicGNN& model);
/// The same for the model PyG's class `className` with `options` would be, before it is built.
std::string layerwiseInferenceRefusal(const std::string& className, const BasicGNNOptions& options);

/// The model's outputs [N, out] for every node of the sampler's graph from its features x [N, in] (float),
/// batchSize targets at a time. std::invalid_argument when layerwiseInferenceRefusal() is not empty.
Tensor layerwiseInference(BasicGNN& model, const Tensor& x, const NeighborSampler& sampler, int64_t batchSize = 4096);

}  // namespace gnn
