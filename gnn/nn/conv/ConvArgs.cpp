#include "gnn/nn/conv/ConvArgs.h"

#include <algorithm>

#include <numeric>
#include <vector>

#include "gnn/nn/conv/GCNConv.h"

namespace gnn {

int64_t intChannels(const PyGArgs& a, const std::string& key) {
  const nlohmann::json& v = a.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 1)
    throw a.invalidValue(key, v, "only a positive int is supported (a tuple for bipartite graphs is not; nor -1, lazy)");
  return v.get<int64_t>();
}

std::pair<int64_t, int64_t> pairChannels(const PyGArgs& a, const std::string& key) {
  const nlohmann::json& v = a.at(key);
  const auto positive = [](const nlohmann::json& n) { return n.is_number_integer() && n.get<int64_t>() > 0; };
  if (positive(v)) return {v.get<int64_t>(), v.get<int64_t>()};
  if (v.is_array() && v.size() == 2 && positive(v[0]) && positive(v[1]))
    return {v[0].get<int64_t>(), v[1].get<int64_t>()};
  throw a.invalidValue(key, v, "a positive int, or [source, target] widths for bipartite graphs (not -1, lazy)");
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

void checkBipartiteEdges(const char* layer, const Tensor& edgeIndex, int64_t numSrc, int64_t numDst) {
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  const int64_t* s = src.data<int64_t>();
  const int64_t* d = dst.data<int64_t>();
  for (int64_t e = 0; e < edgeIndex.dim(1); ++e)
    GNN_CHECK_ARG(s[e] >= 0 && s[e] < numSrc && d[e] >= 0 && d[e] < numDst, layer, ": edge ", e, " (", s[e], " -> ",
                  d[e], ") is not from one of the ", numSrc, " sources to one of the ", numDst, " targets");
}

SparseMatrix bipartiteCountAdjacency(const char* layer, const Tensor& edgeIndex, int64_t numSrc, int64_t numDst,
                                     bool mean, DType dtype) {
  checkBipartiteEdges(layer, edgeIndex, numSrc, numDst);
  const int64_t E = edgeIndex.dim(1);
  const int64_t* ei = edgeIndex.data<int64_t>();
  const std::vector<int64_t> rows(ei + E, ei + 2 * E), cols(ei, ei + E);
  SparseMatrix a = SparseMatrix::fromCoo(numDst, numSrc, rows, cols, std::vector<double>(static_cast<size_t>(E), 1.0),
                                         dtype);
  return mean ? a.rowNormalized() : a;
}

SparseMatrix gcnNormAdjacency(GCNConv::AdjacencyCache& cache, const Tensor& edgeIndex, int64_t numNodes, bool normalize,
                              bool addSelfLoops, DType dtype) {
  bool built = false;
  return cache.get(edgeIndex, numNodes, [&] {
    return GCNConv::normalizedAdjacency(edgeIndex, numNodes, normalize && addSelfLoops, normalize, dtype);
  }, &built);
}

bool isLinearAggregation(const Aggregation& aggregation) {
  const std::string name = aggregation.name();
  return name == "sum" || name == "mean";
}

Variable linearAggregate(const Aggregation& aggregation, GCNConv::AdjacencyCache& cache, const Tensor& edgeIndex,
                         const Variable& x, int64_t numNodes) {
  if (!isLinearAggregation(aggregation)) return {};
  bool built = false;
  const SparseMatrix a = cache.get(edgeIndex, numNodes, [&] {
    return countAdjacency(edgeIndex, numNodes, std::string(aggregation.name()) == "mean", x.dtype());
  }, &built);
  return spmm(a, x);
}

Tensor edgeIndexOf(const Tensor& src, const Tensor& dst) {
  const int64_t E = src.numel();
  GNN_CHECK_ARG(dst.numel() == E, "edgeIndexOf: ", E, " sources and ", dst.numel(), " targets");
  Tensor ei = Tensor::empty({2, E}, DType::I64);
  std::copy(src.data<int64_t>(), src.data<int64_t>() + E, ei.data<int64_t>());
  std::copy(dst.data<int64_t>(), dst.data<int64_t>() + E, ei.data<int64_t>() + E);
  return ei;
}

EdgesByTarget edgesByTarget(const char* layer, const Tensor& edgeIndex, int64_t n) {
  const Tensor srcT = edgeRow(edgeIndex, 0), dstT = edgeRow(edgeIndex, 1);
  const int64_t* s = srcT.data<int64_t>();
  const int64_t* d = dstT.data<int64_t>();
  const int64_t E = edgeIndex.dim(1);
  std::vector<int64_t> ptr(static_cast<size_t>(n) + 1, 0);
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(s[e] >= 0 && s[e] < n && d[e] >= 0 && d[e] < n, layer, ": edge ", e, " (", s[e], " -> ", d[e],
                  ") points outside the ", n, " nodes");
    ++ptr[static_cast<size_t>(d[e]) + 1];
  }
  std::partial_sum(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<int64_t> next(ptr.begin(), ptr.end() - 1), order(static_cast<size_t>(E)), src(order.size()),
      dst(order.size());
  for (int64_t e = 0; e < E; ++e) {
    const int64_t at = next[static_cast<size_t>(d[e])]++;
    order[static_cast<size_t>(at)] = e;
    src[static_cast<size_t>(at)] = s[e];
    dst[static_cast<size_t>(at)] = d[e];
  }
  auto tensorOf = [](const std::vector<int64_t>& v) {
    return v.empty() ? Tensor::zeros({0}, DType::I64) : Tensor::fromVector(v);
  };
  return {tensorOf(order), tensorOf(src), tensorOf(dst), Tensor::fromVector(ptr)};
}

}  // namespace gnn
