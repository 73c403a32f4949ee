// Global pooling: one row per graph from the node rows of a batch (PyG's global_add_pool, global_mean_pool,
// global_max_pool over a sorted `batch` vector), built on the segment ops of gnn/ops/Ops.h through the batch's
// `ptr`. With graphsMask the rows of padding graphs are zero, so nothing downstream (a head, a loss) sees pad
// values, and real graphs' rows do not depend on how the batch was padded.
//
//   Variable g = globalMeanPool(h, batch.ptr, batch.graphsMask);   // [numGraphs, F]
#pragma once
#include <string>

#include "gnn/autograd/Variable.h"

namespace gnn {

enum class PoolKind { Sum, Mean, Max };

/// "sum" (or "add") | "mean" | "max".
PoolKind parsePoolKind(const std::string& name);
const char* poolKindName(PoolKind kind);

/// x [N, F], ptr [G+1] int64 node offsets of each graph, graphsMask [G] uint8 (optional, 1 = real graph).
Variable globalSumPool(const Variable& x, const Tensor& ptr, const Tensor& graphsMask = Tensor());
/// Mean over each graph's nodes (an empty graph gives 0).
Variable globalMeanPool(const Variable& x, const Tensor& ptr, const Tensor& graphsMask = Tensor());
/// Elementwise max over each graph's nodes (an empty graph gives 0).
Variable globalMaxPool(const Variable& x, const Tensor& ptr, const Tensor& graphsMask = Tensor());
Variable globalPool(PoolKind kind, const Variable& x, const Tensor& ptr, const Tensor& graphsMask = Tensor());

/// graphsMask [G] uint8 -> [G, 1] float column of x's dtype (what the pooled rows are multiplied by).
Tensor maskColumn(const Tensor& mask, DType dtype);

}  // namespace gnn
