#include "gnn/nn/conv/GcnNormEdges.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

NormalizedEdges gcnNormEdges(const Tensor& edgeIndex, int64_t n, bool addSelfLoops, DType dtype) {
  const Tensor srcT = edgeRow(edgeIndex, 0), dstT = edgeRow(edgeIndex, 1);
  const int64_t* s = srcT.data<int64_t>();
  const int64_t* d = dstT.data<int64_t>();
  const int64_t E = edgeIndex.dim(1);
  std::vector<int64_t> src, dst;
  src.reserve(static_cast<size_t>(E + n));
  dst.reserve(static_cast<size_t>(E + n));
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(s[e] >= 0 && s[e] < n && d[e] >= 0 && d[e] < n, "gcn_norm: edge ", e, " (", s[e], " -> ", d[e],
                  ") points outside the ", n, " nodes");
    if (addSelfLoops && s[e] == d[e]) continue;
    src.push_back(s[e]);
    dst.push_back(d[e]);
  }
  if (addSelfLoops)
    for (int64_t i = 0; i < n; ++i) {
      src.push_back(i);
      dst.push_back(i);
    }
  std::vector<double> deg(static_cast<size_t>(n), 0.0);
  for (int64_t t : dst) deg[static_cast<size_t>(t)] += 1;
  std::vector<double> w(src.size());
  for (size_t e = 0; e < src.size(); ++e) {
    const double a = deg[static_cast<size_t>(src[e])], b = deg[static_cast<size_t>(dst[e])];
    w[e] = (a > 0 ? 1 / std::sqrt(a) : 0.0) * (b > 0 ? 1 / std::sqrt(b) : 0.0);
  }
  NormalizedEdges out;
  const int64_t m = static_cast<int64_t>(src.size());
  out.edgeIndex = Tensor::empty({2, m}, DType::I64);
  std::copy(src.begin(), src.end(), out.edgeIndex.data<int64_t>());
  std::copy(dst.begin(), dst.end(), out.edgeIndex.data<int64_t>() + m);
  out.src = edgeRow(out.edgeIndex, 0);
  out.dst = edgeRow(out.edgeIndex, 1);
  out.weight = Tensor::fromVector(w, {m, 1}).to(dtype);
  return out;
}

}  // namespace gnn
