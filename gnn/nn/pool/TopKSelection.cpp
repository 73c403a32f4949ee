#include "gnn/nn/pool/TopKSelection.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "gnn/ops/Ops.h"

namespace gnn {

PooledGraph topKSelect(const Variable& x, const Variable& score, const Tensor& edgeIndex, const Variable& edgeAttr,
                       const Tensor& batch, int64_t numGraphs, double ratio, double multiplier, bool fixedSize,
                       const Tensor& realNodes) {
  GNN_CHECK_ARG(ratio > 0, "top-k pooling: ratio = ", ratio, " must be > 0");
  const int64_t N = x.dim(0), E = edgeIndex.dim(1);
  GNN_CHECK_ARG(score.value().rank() == 1 && score.dim(0) == N, "top-k pooling: score ", shapeString(score.shape()),
                " for ", N, " nodes");
  const int64_t* b = batch.defined() ? batch.data<int64_t>() : nullptr;
  const uint8_t* real = realNodes.defined() ? realNodes.data<uint8_t>() : nullptr;
  // Each graph's candidate nodes (sorted batch vector), highest score first (ties: lower index).
  std::vector<std::vector<int64_t>> nodes(static_cast<size_t>(std::max<int64_t>(numGraphs, 1)));
  for (int64_t i = 0; i < N; ++i) {
    const int64_t g = b ? b[i] : 0;
    GNN_CHECK_ARG(g >= 0 && g < static_cast<int64_t>(nodes.size()) && (i == 0 || !b || b[i] >= b[i - 1]),
                  "top-k pooling: batch must be sorted graph ids in [0, ", numGraphs, ") (node ", i, ")");
    if (!real || real[i]) nodes[static_cast<size_t>(g)].push_back(i);
  }
  std::vector<int64_t> perm, graphOf;
  dispatchFloat(score.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* s = score.value().template data<T>();
    for (size_t g = 0; g < nodes.size(); ++g) {
      std::vector<int64_t>& v = nodes[g];
      const int64_t n = static_cast<int64_t>(v.size());
      // PyG's k, in the scores' dtype.
      const int64_t k = ratio >= 1 ? std::min<int64_t>(static_cast<int64_t>(ratio), n)
                                   : static_cast<int64_t>(std::ceil(static_cast<T>(ratio) * static_cast<T>(n)));
      std::stable_sort(v.begin(), v.end(), [&](int64_t a, int64_t c) { return s[a] > s[c]; });
      for (int64_t t = 0; t < std::min(k, n); ++t) {
        perm.push_back(v[static_cast<size_t>(t)]);
        graphOf.push_back(static_cast<int64_t>(g));
      }
    }
  });
  const int64_t kept = static_cast<int64_t>(perm.size());
  const int64_t K = fixedSize ? static_cast<int64_t>(std::ceil(ratio >= 1 ? std::min<double>(ratio * numGraphs, N)
                                                                          : ratio * static_cast<double>(N))) +
                                    numGraphs
                              : kept;
  GNN_CHECK_ARG(kept <= K, "top-k pooling: ", kept, " kept nodes exceed the fixed ", K);
  PooledGraph out;
  std::vector<int64_t> rows(perm), owner(graphOf), permOut(perm);
  for (int64_t r = kept; r < K; ++r) {
    rows.push_back(0);
    owner.push_back(std::max<int64_t>(numGraphs, 1) - 1);
    permOut.push_back(-1);
  }
  auto tensorOf = [](const std::vector<int64_t>& v) {
    return v.empty() ? Tensor::zeros({0}, DType::I64) : Tensor::fromVector(v);
  };
  const Tensor rowIndex = tensorOf(rows);
  // 1 for the kept rows, 0 for fixed-size filler rows (which read row 0).
  Tensor keep = Tensor::zeros({K, 1}, x.dtype());
  dispatchFloat(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    for (int64_t r = 0; r < kept; ++r) keep.data<T>()[r] = T(1);
  });
  const Variable s = mul(gatherRows(reshape(score, {N, 1}), rowIndex), Variable(keep));  // [K, 1]
  out.x = mul(gatherRows(x, rowIndex), s);  // PyG: x[perm] * score[perm], then times the multiplier
  if (multiplier != 1.0) out.x = scale(out.x, multiplier);
  out.score = reshape(s, {K});
  out.batch = tensorOf(owner);
  out.perm = tensorOf(permOut);
  // filter_adj: the edges whose ends were both kept, renumbered, in order.
  std::vector<int64_t> newId(static_cast<size_t>(N), -1);
  for (int64_t r = 0; r < kept; ++r) newId[static_cast<size_t>(perm[r])] = r;
  const int64_t* src = edgeIndex.data<int64_t>();
  const int64_t* dst = src + E;
  std::vector<int64_t> es, ed, ids;
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(src[e] >= 0 && src[e] < N && dst[e] >= 0 && dst[e] < N, "top-k pooling: edge ", e,
                  " points outside the ", N, " nodes");
    const int64_t a = newId[static_cast<size_t>(src[e])], c = newId[static_cast<size_t>(dst[e])];
    if (a >= 0 && c >= 0) {
      es.push_back(a);
      ed.push_back(c);
      ids.push_back(e);
    }
  }
  const int64_t keptEdges = static_cast<int64_t>(es.size()), EOut = fixedSize ? E : keptEdges;
  for (int64_t e = keptEdges; e < EOut; ++e) {  // filler self-loops on the last row
    es.push_back(K - 1);
    ed.push_back(K - 1);
    ids.push_back(0);
  }
  Tensor ei = Tensor::empty({2, EOut}, DType::I64);
  std::copy(es.begin(), es.end(), ei.data<int64_t>());
  std::copy(ed.begin(), ed.end(), ei.data<int64_t>() + EOut);
  out.edgeIndex = ei;
  if (edgeAttr.defined() && EOut > 0) {
    Tensor keepEdge = Tensor::zeros({EOut, 1}, edgeAttr.dtype());
    dispatchFloat(edgeAttr.dtype(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      for (int64_t e = 0; e < keptEdges; ++e) keepEdge.data<T>()[e] = T(1);
    });
    out.edgeAttr = mul(gatherRows(edgeAttr, tensorOf(ids)), Variable(keepEdge));
  }
  if (fixedSize) {
    std::vector<uint8_t> nm(static_cast<size_t>(K), 0), em(static_cast<size_t>(EOut), 0);
    std::fill(nm.begin(), nm.begin() + kept, 1);
    std::fill(em.begin(), em.begin() + keptEdges, 1);
    out.nodesMask = Tensor::fromVector(nm);
    out.edgesMask = Tensor::fromVector(em);
  }
  return out;
}

}  // namespace gnn
