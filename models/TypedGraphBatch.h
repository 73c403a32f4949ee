// TypedGraphBatch: a heterogeneous graph laid out as one typed graph (data/HeteroToHomogeneous.h) carried in a
// Batch, the one shape a device takes (device/Device.h), so the simulated IPUs run R-GCN and HGT with the engine
// every homogeneous model uses: the host link streams its fields, micro-batches stack and split by their rows, and
// the plan counts each field's bytes. The per-type parts go where a Batch has room for them:
//
//   | field      | holds                                                                          |
//   |------------|--------------------------------------------------------------------------------|
//   | x          | float [sum_t rows_t * width_t]: each featured type's rows, type after type,    |
//   |            | flattened (the types' widths differ); undefined when no type has features      |
//   | edge_index | int64 [2, E]: the typed graph's edges, every type's rows offset                |
//   | edge_attr  | int64 [E]: each edge's relation (its position in the graph's relations)        |
//   | z          | int64 [numNodes], a sampled batch's only (layout.nodeIds): each row's id within its |
//   |            | type, which a featureless type's embedding is looked up at (0 on featured rows)|
//   | y          | int64 [targetRows]: the target type's labels; train_mask uint8 [targetRows]    |
//   | masks, ptr | one graph of numNodes = sum_t rows_t real rows and E real edges                |
//
// Rows per type and the feature widths are not in the batch: they are the layout's, fixed when the program is
// compiled (a device program runs one set of shapes). The whole graph's featureless types read their embeddings
// whole, in node order; a sampled batch's (loaders/HeteroFixedSizeNeighborLoader.h) at its rows' ids, in z.
//
//   TypedBatchLayout layout{{60, 600}, {0, 16}, /*targetType=*/1, /*targetRows=*/600};
//   Batch b = typedGraphBatch(layout, {Tensor(), paperX}, h.edgeIndex, h.edgeType, y, trainMask);
//   std::vector<Tensor> features = typedFeatures(b, layout);   // {undefined, [600, 16]}: views of b.x
#pragma once
#include <cstdint>
#include <vector>

#include "loaders/Batch.h"

namespace gnn {

struct TypedBatchLayout {
  std::vector<int64_t> rows;    ///< per node type, in the typed graph's order
  std::vector<int64_t> widths;  ///< per node type: its feature width, 0 for a type without features
  int64_t targetType = 0;       ///< the classified type's position
  int64_t targetRows = 0;       ///< its rows the loss reads (all of them, full batch)
  bool nodeIds = false;         ///< featureless rows are embedding rows at z's ids (a sampled batch)
  int64_t numNodes() const;
  /// Rows of the typed graph before type t's.
  int64_t offset(size_t t) const;
};

/// The batch of one typed graph: features per type (undefined without), its edges and relations, the target
/// type's labels and training mask. Shares the tensors' storage where it can (one featured type: x is its
/// features flattened). Throws std::invalid_argument naming the type or field whose shape disagrees with layout.
Batch typedGraphBatch(const TypedBatchLayout& layout, const std::vector<Tensor>& features, const Tensor& edgeIndex,
                      const Tensor& edgeType, const Tensor& y, const Tensor& trainMask);

/// A sampled batch's node ids into z: per type its rows' ids int64 [rows_t] (undefined for a featured type, whose
/// rows read no embedding: zeros there). Sets layout.nodeIds's field; throws naming a type whose ids disagree.
void setTypedNodeIds(Batch& b, const TypedBatchLayout& layout, const std::vector<Tensor>& nodeIds);
/// Each featureless type's ids [rows_t] as views of b.z (undefined for a featured type).
std::vector<Tensor> typedNodeIds(const Batch& b, const TypedBatchLayout& layout);

/// Each type's features [rows_t, width_t] as views of b.x (undefined for a type without).
std::vector<Tensor> typedFeatures(const Batch& b, const TypedBatchLayout& layout);

}  // namespace gnn
