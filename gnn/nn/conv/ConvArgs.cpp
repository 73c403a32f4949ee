#include "gnn/nn/conv/ConvArgs.h"

#include "gnn/nn/conv/GCNConv.h"

namespace gnn {

int64_t intChannels(const PyGArgs& a, const std::string& key) {
  const nlohmann::json& v = a.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 1)
    throw a.invalidValue(key, v, "only a positive int is supported (a tuple for bipartite graphs is not; nor -1, lazy)");
  return v.get<int64_t>();
}

std::string aggregationName(const PyGArgs& a) {
  if (!a.at("aggr").is_string())
    throw a.invalidValue("aggr", a.at("aggr"), "only one aggregation by name (sum, add, mean, max, ...)");
  return a.get<std::string>("aggr");
}

void checkNodeFeatures(const char* layer, const Variable& x, int64_t in) {
  GNN_CHECK_ARG(x.defined() && x.value().rank() == 2 && x.dim(1) == in, layer, ": input has shape ",
                x.defined() ? shapeString(x.shape()) : std::string("none"), ", expected [N, ", in, "]");
}

SparseMatrix countAdjacency(const Tensor& edgeIndex, int64_t numNodes, bool mean, DType dtype) {
  SparseMatrix a = GCNConv::normalizedAdjacency(edgeIndex, numNodes, /*addSelfLoops=*/false, /*normalize=*/false,
                                                dtype);
  return mean ? a.rowNormalized() : a;
}

}  // namespace gnn
