#include "gnn/nn/conv/CFConv.h"

#include "gnn/ops/Ops.h"

namespace gnn {

CFConv::CFConv(int64_t inChannels, int64_t outChannels, int64_t filters, int64_t gaussians, Generator& gen,
               DType dtype)
    : in_(inChannels),
      out_(outChannels),
      filters_(filters),
      gaussians_(gaussians),
      dtype_(dtype),
      mlp1_(gaussians, filters, gen, true, dtype),
      mlp2_(filters, filters, gen, true, dtype),
      lin1_(inChannels, filters, gen, false, dtype),
      lin2_(filters, outChannels, gen, true, dtype) {
  // PyG's InteractionBlock.reset_parameters and CFConv.reset_parameters: Glorot-uniform weights, zero biases,
  // in this order.
  mlp1_.resetGlorot(gen);
  mlp2_.resetGlorot(gen);
  lin1_.resetGlorot(gen);
  lin2_.resetGlorot(gen);
  registerModule("mlp1", mlp1_);
  registerModule("mlp2", mlp2_);
  registerModule("lin1", lin1_);
  registerModule("lin2", lin2_);
}

std::unique_ptr<Module> CFConv::clone() const {
  Generator unused;
  return cloneInto(std::make_unique<CFConv>(in_, out_, filters_, gaussians_, unused, dtype_));
}

Variable CFConv::filterNetwork(const Variable& rbf) const {
  return mlp2_.forward(shiftedSoftplus(mlp1_.forward(rbf)));
}

Variable CFConv::filters(const Variable& rbf, const Variable& cut) const {
  return mul(filterNetwork(rbf), reshape(cut, {cut.dim(0), 1}));
}

Variable CFConv::forward(const Variable& x, const Tensor& edgeIndex, const Variable& rbf, const Variable& cut,
                         const Tensor& pairOf, bool fusedCutoff, const Tensor& plan) const {
  // The ops in the order of PyG's CFConv (filters, then lin1): a device plan follows the recorded order.
  Variable w = fusedCutoff ? filterNetwork(rbf) : filters(rbf, cut);
  Variable h = lin1_.forward(x);
  const Variable scale = fusedCutoff ? cut : Variable();
  return lin2_.forward(plan.defined() ? filterMessageSum(h, w, plan, scale)
                                      : filterMessageSum(h, w, edgeIndex, x.dim(0), pairOf, scale));
}

}  // namespace gnn

#include <algorithm>
#include <vector>

namespace gnn {

EdgePairs edgePairs(const Tensor& edgeIndex) {
  GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64,
                "edgePairs: edge_index must be int64 [2, E], got ", dtypeName(edgeIndex.dtype()), " ",
                shapeString(edgeIndex.shape()));
  const int64_t E = edgeIndex.dim(1);
  const int64_t* src = edgeIndex.data<int64_t>();
  const int64_t* dst = src + E;
  Tensor pairOf({E}, DType::I64);
  int64_t* po = pairOf.data<int64_t>();
  std::fill(po, po + E, -1);
  std::vector<int64_t> first;
  first.reserve(static_cast<size_t>(E));
  // Each edge's reverse is the unpaired edge dst[e] -> src[e] of lowest index. Radius graphs and their batches
  // come grouped by target (each target's edges contiguous, targets in increasing order): the reverse is then
  // found by scanning the group of target src[e], in index order. Other orders are sorted by (source, target,
  // index) and searched.
  const bool byTarget = std::is_sorted(dst, dst + E);
  std::vector<int64_t> order, groupStart;
  if (byTarget) {
    // groupStart[v] .. groupStart[v + 1]: the edges into v (nodes past the last target have empty groups).
    int64_t nodes = 0;
    if (E > 0) {
      const auto [lo, hi] = std::minmax_element(src, src + E);
      GNN_CHECK_ARG(*lo >= 0 && dst[0] >= 0, "edgePairs: negative node index ", std::min(*lo, dst[0]));
      nodes = std::max(dst[E - 1], *hi) + 1;
    }
    groupStart.assign(static_cast<size_t>(nodes) + 1, 0);
    for (int64_t e = 0; e < E; ++e) ++groupStart[static_cast<size_t>(dst[e]) + 1];
    for (int64_t v = 0; v < nodes; ++v) groupStart[v + 1] += groupStart[v];
  } else {
    order.resize(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) order[e] = e;
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return src[a] != src[b] ? src[a] < src[b] : dst[a] != dst[b] ? dst[a] < dst[b] : a < b;
    });
  }
  auto pairWith = [&](int64_t e, int64_t f) {
    if (po[f] >= 0) return false;
    po[f] = po[e];
    return true;
  };
  for (int64_t e = 0; e < E; ++e) {
    if (po[e] >= 0) continue;  // the reverse of an earlier edge
    po[e] = static_cast<int64_t>(first.size());
    first.push_back(e);
    if (src[e] == dst[e]) continue;
    if (byTarget) {
      for (int64_t f = groupStart[src[e]], end = groupStart[src[e] + 1]; f < end; ++f)
        if (src[f] == dst[e] && pairWith(e, f)) break;
      continue;
    }
    auto it = std::lower_bound(order.begin(), order.end(), e, [&](int64_t a, int64_t) {
      return src[a] != dst[e] ? src[a] < dst[e] : dst[a] < src[e];
    });
    for (; it != order.end() && src[*it] == dst[e] && dst[*it] == src[e]; ++it)
      if (pairWith(e, *it)) break;
  }
  const int64_t P = static_cast<int64_t>(first.size());
  Tensor pairs({2, P}, DType::I64);
  int64_t* pp = pairs.data<int64_t>();
  for (int64_t p = 0; p < P; ++p) {
    pp[p] = src[first[p]];
    pp[P + p] = dst[first[p]];
  }
  return {pairs, pairOf};
}

}  // namespace gnn
