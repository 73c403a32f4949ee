#include "models/NodeFeatures.h"

#include <cstring>

#include "gnn/system/Check.h"

namespace gnn {

namespace {
const Tensor& checked(const Batch& b, int64_t width, const char* model) {
  const Tensor& f = b.nodeFeatures;
  GNN_CHECK_ARG(f.defined(), model, ": built for ", width,
                " node-level features per atom (node_features), but the batch carries none");
  GNN_CHECK_ARG(f.rank() == 2 && f.dim(0) == b.numNodes && f.dim(1) == width, model, ": node_features has shape ",
                shapeString(f.shape()), ", expected [", b.numNodes, ", ", width, "]");
  return f;
}
}  // namespace

Variable nodeFeaturesInput(const Batch& b, int64_t width, DType dtype, const char* model) {
  const Tensor& f = checked(b, width, model);
  return Variable(f.dtype() == dtype ? f : f.to(dtype));
}

Variable nodeFeaturesOfSources(const Batch& b, int64_t width, DType dtype, const char* model) {
  const Tensor& given = checked(b, width, model);
  const Tensor f = given.dtype() == dtype ? given : given.to(dtype);
  const int64_t E = b.edgeIndex.dim(1);
  Tensor out({E, width}, dtype);
  const size_t rowBytes = b.numNodes > 0 ? f.nbytes() / static_cast<size_t>(b.numNodes) : 0;
  const int64_t* src = b.edgeIndex.data<int64_t>();
  const auto* in = static_cast<const unsigned char*>(f.raw());
  auto* o = static_cast<unsigned char*>(out.raw());
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(src[e] >= 0 && src[e] < b.numNodes, model, ": edge ", e, " leaves node ", src[e], " of ", b.numNodes);
    std::memcpy(o + static_cast<size_t>(e) * rowBytes, in + static_cast<size_t>(src[e]) * rowBytes, rowBytes);
  }
  return Variable(out);
}

}  // namespace gnn
