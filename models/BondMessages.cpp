#include "models/BondMessages.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/ops/Ops.h"

namespace gnn {

ReverseEdges reverseEdges(const Tensor& edgeIndex, DType maskDtype) {
  GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64,
                "reverseEdges: edge_index must be int64 [2, E], got ", dtypeName(edgeIndex.dtype()), " ",
                shapeString(edgeIndex.shape()));
  const int64_t E = edgeIndex.dim(1);
  const int64_t* src = edgeIndex.data<int64_t>();
  const int64_t* dst = src + E;
  ReverseEdges out;
  out.index = Tensor({E}, DType::I64);
  int64_t* rev = out.index.data<int64_t>();

  // smiles2graph's layout (and the padding's self-loops, two by two): edges 2k and 2k + 1 reverse each other.
  bool paired = E % 2 == 0;
  for (int64_t e = 0; paired && e < E; e += 2) paired = src[e + 1] == dst[e] && dst[e + 1] == src[e];
  if (paired) {
    for (int64_t e = 0; e < E; ++e) rev[e] = src[e] == dst[e] ? e : (e ^ 1);  // a self-loop is its own reverse
    return out;
  }

  // Any other layout: edges sorted by (source, target, position); the k-th edge u -> v pairs with the k-th v -> u.
  std::vector<int64_t> order(static_cast<size_t>(E)), rank(static_cast<size_t>(E));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return src[a] != src[b] ? src[a] < src[b] : dst[a] != dst[b] ? dst[a] < dst[b] : a < b;
  });
  for (int64_t i = 0; i < E; ++i) {
    const int64_t e = order[i], p = i > 0 ? order[i - 1] : -1;
    rank[e] = p >= 0 && src[p] == src[e] && dst[p] == dst[e] ? rank[p] + 1 : 0;
  }
  bool missing = false;
  for (int64_t e = 0; e < E; ++e) {
    // The first of the edges dst[e] -> src[e] in the sorted order, then the rank[e]-th of them.
    auto lo = std::lower_bound(order.begin(), order.end(), e, [&](int64_t a, int64_t) {
      return src[a] != dst[e] ? src[a] < dst[e] : dst[a] < src[e];
    });
    const auto at = static_cast<int64_t>(lo - order.begin()) + rank[e];
    if (at < E && src[order[at]] == dst[e] && dst[order[at]] == src[e]) {
      rev[e] = order[at];
    } else {
      rev[e] = -1;
      missing = true;
    }
  }
  if (missing) {
    Tensor mask({E, 1}, DType::F64);
    double* m = mask.data<double>();
    for (int64_t e = 0; e < E; ++e) {
      m[e] = rev[e] >= 0 ? 1.0 : 0.0;
      if (rev[e] < 0) rev[e] = e;  // any valid row: the mask zeroes it
    }
    out.mask = mask.to(maskDtype);
  }
  return out;
}

Variable bondMessages(const Variable& h, const Tensor& edgeIndex, const ReverseEdges& rev, int64_t numNodes) {
  GNN_CHECK_ARG(h.value().rank() == 2 && h.dim(0) == edgeIndex.dim(1) && rev.index.numel() == h.dim(0),
                "bondMessages: hidden states ", shapeString(h.shape()), " for ", edgeIndex.dim(1), " edges and ",
                rev.index.numel(), " reverse indices");
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  Variable incoming = gatherRows(scatterSum(h, dst, numNodes), src);  // sum_{k -> u} h_ku, on edge u -> v
  Variable back = gatherRows(h, rev.index);                          // h_vu
  if (rev.mask.defined())
    back = mul(back, Variable(rev.mask.dtype() == h.dtype() ? rev.mask : rev.mask.to(h.dtype())));
  return sub(incoming, back);
}

}  // namespace gnn
