// Normalization: a normalisation layer of a node-feature stack (PyG's torch_geometric.nn.norm), as PyG's
// BasicGNN models and MLP call it: forward(x, batch) with the graph each node belongs to, so per-graph norms
// (GraphNorm, InstanceNorm, LayerNorm in graph mode) see each graph of a batch apart, and with the real nodes of
// a fixed-size batch, so padding never enters a statistic. Built by PyG's name (normalization_resolver).
//
//   std::unique_ptr<Normalization> norm = normalizationFromPyG("batch_norm", 64, nullptr, gen);
//   Variable h = norm->forward(x, NormBatch{});                      // one graph, every row real
//   Variable h = norm->forward(x, {b.batch, b.numGraphs, b.nodesMask}); // a fixed-size batch
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

/// Which graph each row belongs to and which rows are real.
struct NormBatch {
  /// int64 [N] graph id of each row, sorted (PyG's `batch`); undefined: every row is in graph 0.
  Tensor batch;
  int64_t numGraphs = 1;
  /// uint8 [N], 1 = a real row; undefined: every row is real. Padding rows are normalised but never counted.
  Tensor nodeMask;
};

class Normalization : public Module {
 public:
  virtual Variable forward(const Variable& x, const NormBatch& b) = 0;
};

/// The graphs of b as segment offsets int64 [numGraphs + 1] over x's `rows` rows (segmentNorm's ptr): one segment
/// of every row when b.batch is undefined. std::invalid_argument when batch is not int64 [rows], sorted, in
/// [0, numGraphs).
Tensor normSegments(const NormBatch& b, int64_t rows);

/// PyG's normalization_resolver: "batch_norm" (BatchNorm: gnn::PyGBatchNorm), "layer_norm" (LayerNorm, mode
/// "graph" by default: gnn::PyGLayerNorm), "graph_norm" (gnn::GraphNorm), "instance_norm" (gnn::InstanceNorm);
/// names compared without case, '-', '_' and ' ', with or without "norm" ("batch"), as PyG does; `kwargs` PyG's keyword arguments for the class (eps, momentum, affine, mode, ...). A null name
/// gives nullptr (no normalisation). std::invalid_argument naming the unknown norm or keyword.
/// Whether `name` (a PyG norm name, or null) resolves to BatchNorm, compared as normalizationFromPyG compares.
bool isPyGBatchNorm(const nlohmann::json& name);
std::unique_ptr<Normalization> normalizationFromPyG(const nlohmann::json& name, int64_t channels,
                                                    const nlohmann::json& kwargs, Generator& gen,
                                                    DType dtype = DType::F32);

}  // namespace gnn
