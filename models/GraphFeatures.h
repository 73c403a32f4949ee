// graphFeaturesInput: a batch's graph-level features (Batch::graphFeatures, [numGraphs, F]; molecules: the
// descriptors of app/MoleculeFeatures.h) as the input a model's readout concatenates to its pooled vector before
// the head (Chemprop's X_d, concatenated after the aggregation). Padding graphs' rows are 0 in the batch and the
// head's output rows of padding graphs are zeroed anyway, so real graphs' outputs do not depend on padding.
//
//   Variable pooled = globalPool(pool, h, b.ptr, b.graphsMask);
//   if (width > 0) pooled = concatCols({pooled, graphFeaturesInput(b, width, dtype, "GIN")});
#pragma once
#include <cstdint>

#include "gnn/autograd/Variable.h"
#include "loaders/Batch.h"

namespace gnn {

/// b.graphFeatures as a constant of `dtype`; std::invalid_argument naming `model` when the batch carries none
/// or its shape is not [numGraphs, width].
Variable graphFeaturesInput(const Batch& b, int64_t width, DType dtype, const char* model);

}  // namespace gnn
