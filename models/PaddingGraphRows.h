// zeroPaddingGraphRows: a graph-level output whose padding graphs' rows are exactly 0, the rule every graph
// model's head ends with (its bias, or a readout over padding atoms, would make them non-zero again), so no
// loss, metric or prediction sees values made up for graphs that are not there.
//
//   Variable out = zeroPaddingGraphRows(head_.forward(pooled), batch);   // [numGraphs, tasks]
#pragma once
#include "gnn/autograd/Variable.h"
#include "loaders/Batch.h"

namespace gnn {

/// out [numGraphs, F] times batch.graphsMask as a 0/1 column: padding graphs' rows become 0 and get no gradient,
/// real rows keep their bits (x·1 = x) and their gradient. Without a graphsMask, `out` itself.
Variable zeroPaddingGraphRows(const Variable& out, const Batch& batch);

}  // namespace gnn
