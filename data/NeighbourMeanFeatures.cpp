#include "data/NeighbourMeanFeatures.h"

#include <cstdint>
#include <set>

namespace gnn {

namespace {

// One featureless type's rows from the relations into it whose sources are in `featured` (and of the first such
// source's width); undefined when none reaches it.
Tensor neighbourMean(const HeteroGraph& g, const std::string& type, const std::set<std::string>& featured) {
  const int64_t n = g.numNodes(type);
  int64_t width = -1;
  std::vector<double> sum;
  std::vector<int64_t> count(static_cast<size_t>(n), 0);
  for (const EdgeType& r : g.edgeTypes()) {
    if (r.dst != type || !featured.count(r.src)) continue;
    const Tensor& x = g.node(r.src).x;
    if (width < 0) {
      width = x.dim(1);
      sum.assign(static_cast<size_t>(n * width), 0.0);
    }
    if (x.dim(1) != width) continue;
    const Tensor& ei = g.edge(r).edgeIndex;
    const int64_t E = ei.dim(1);
    const int64_t *src = ei.data<int64_t>(), *dst = src + E;
    const float* xs = x.data<float>();
    for (int64_t e = 0; e < E; ++e) {
      double* row = sum.data() + dst[e] * width;
      const float* from = xs + src[e] * width;
      for (int64_t f = 0; f < width; ++f) row[f] += from[f];
      ++count[static_cast<size_t>(dst[e])];
    }
  }
  if (width < 0) return Tensor();
  Tensor out = Tensor::zeros({n, width});
  float* o = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = count[static_cast<size_t>(i)];
    if (c == 0) continue;
    for (int64_t f = 0; f < width; ++f)
      o[i * width + f] = static_cast<float>(sum[static_cast<size_t>(i * width + f)] / static_cast<double>(c));
  }
  return out;
}

}  // namespace

std::vector<std::string> fillFeaturelessByNeighbourMean(HeteroGraph& g) {
  std::vector<std::string> filled;
  for (;;) {
    std::set<std::string> featured;
    for (const std::string& t : g.nodeTypes())
      if (g.node(t).x.defined()) featured.insert(t);
    // Each round reads only the types featured when it began, so a type's features never depend on another
    // type filled in the same round (nor on the order types are visited in).
    std::vector<std::pair<std::string, Tensor>> round;
    for (const std::string& t : g.nodeTypes()) {
      if (featured.count(t) || g.numNodes(t) == 0) continue;
      Tensor x = neighbourMean(g, t, featured);
      if (x.defined()) round.emplace_back(t, std::move(x));
    }
    if (round.empty()) return filled;
    for (auto& [t, x] : round) {
      g.node(t).x = std::move(x);
      filled.push_back(t);
    }
  }
}

}  // namespace gnn
