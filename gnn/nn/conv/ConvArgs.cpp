#include "gnn/nn/conv/ConvArgs.h"

#include "gnn/nn/conv/GCNConv.h"

namespace gnn {

int64_t intChannels(const PyGArgs& a, const std::string& key) {
  const nlohmann::json& v = a.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 1)
    throw a.invalidValue(key, v, "only a positive int is supported (a tuple for bipartite graphs is not; nor -1, lazy)");
  return v.get<int64_t>();
}

nlohmann::json aggregationArg(const PyGArgs& a) {
  const nlohmann::json& v = a.at("aggr");
  if (!v.is_string() && !v.is_array() && !v.is_object())
    throw a.invalidValue("aggr", v, "a name, a list of names, or {\"class\": ..., \"args\": {...}}");
  return v;
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
