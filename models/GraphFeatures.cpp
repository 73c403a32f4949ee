#include "models/GraphFeatures.h"

#include "gnn/system/Check.h"

namespace gnn {

Variable graphFeaturesInput(const Batch& b, int64_t width, DType dtype, const char* model) {
  const Tensor& f = b.graphFeatures;
  GNN_CHECK_ARG(f.defined(), model, ": built for ", width,
                " graph-level features per graph (graph_features), but the batch carries none");
  GNN_CHECK_ARG(f.rank() == 2 && f.dim(0) == b.numGraphs && f.dim(1) == width, model, ": graph_features has shape ",
                shapeString(f.shape()), ", expected [", b.numGraphs, ", ", width, "]");
  return Variable(f.dtype() == dtype ? f : f.to(dtype));
}

}  // namespace gnn
