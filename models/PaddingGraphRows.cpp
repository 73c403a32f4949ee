#include "models/PaddingGraphRows.h"

#include "gnn/nn/pool/GlobalPooling.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Check.h"

namespace gnn {

Variable zeroPaddingGraphRows(const Variable& out, const Batch& batch) {
  if (!batch.graphsMask.defined()) return out;
  GNN_CHECK_ARG(out.value().rank() == 2 && out.dim(0) == batch.graphsMask.numel(),
                "zeroPaddingGraphRows: the batch's graphsMask has ", batch.graphsMask.numel(),
                " entries for an output of shape ", shapeString(out.shape()), " (one row per graph)");
  return mul(out, Variable(maskColumn(batch.graphsMask, out.dtype())));
}

}  // namespace gnn
