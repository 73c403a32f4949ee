// nodeFeaturesInput: a batch's node-level float features (Batch::nodeFeatures, [numNodes, F]; molecules: the
// user's atom descriptors of app/AtomFeatures.h) as a model's constant input. GIN and GCN add Linear(F, hidden) of
// them to the atom encoder's output; D-MPNN reads them beside each atom's categories in W_i and W_o, as Chemprop
// v2 appends its extra atom features V_f to the atom features. Padding nodes' rows are 0 and reach no real node.
//
//   Variable h = atoms.forward(b.x);
//   if (width > 0) h = add(h, extra.forward(nodeFeaturesInput(b, width, dtype, "GIN")));
#pragma once
#include <cstdint>

#include "gnn/autograd/Variable.h"
#include "loaders/Batch.h"

namespace gnn {

/// b.nodeFeatures as a constant of `dtype`; std::invalid_argument naming `model` when the batch carries none or
/// its shape is not [numNodes, width].
Variable nodeFeaturesInput(const Batch& b, int64_t width, DType dtype, const char* model);

/// The rows of b.nodeFeatures at each edge's source node, [numEdges, width] of `dtype` (a directed bond u -> v
/// reads u's features, as Chemprop's W_i reads [x_u || e_uv]); the same errors.
Variable nodeFeaturesOfSources(const Batch& b, int64_t width, DType dtype, const char* model);

}  // namespace gnn
