#include "gnn/CFConv.h"

#include "gnn/Ops.h"

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

Variable CFConv::filters(const Variable& rbf, const Variable& cut) const {
  Variable w = mlp2_.forward(shiftedSoftplus(mlp1_.forward(rbf)));
  return mul(w, reshape(cut, {cut.dim(0), 1}));
}

Variable CFConv::forward(const Variable& x, const Tensor& edgeIndex, const Variable& rbf, const Variable& cut,
                         const Tensor& pairOf) const {
  Variable w = filters(rbf, cut);
  Variable h = lin1_.forward(x);
  return lin2_.forward(filterMessageSum(h, w, edgeIndex, x.dim(0), pairOf));
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
  // Edges sorted by their unordered ends, then by edge: each run of equal ends is one pair, whose first edge is
  // the run's first.
  auto lo = [&](int64_t e) { return std::min(src[e], dst[e]); };
  auto hi = [&](int64_t e) { return std::max(src[e], dst[e]); };
  std::vector<int64_t> order(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) order[e] = e;
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return lo(a) != lo(b) ? lo(a) < lo(b) : hi(a) != hi(b) ? hi(a) < hi(b) : a < b;
  });
  std::vector<int64_t> runOf(static_cast<size_t>(E)), first;
  for (int64_t k = 0; k < E; ++k) {
    const int64_t e = order[k];
    if (k == 0 || lo(e) != lo(order[k - 1]) || hi(e) != hi(order[k - 1])) first.push_back(e);
    runOf[e] = static_cast<int64_t>(first.size()) - 1;
  }
  // Pairs numbered in the order of their first edges.
  const int64_t P = static_cast<int64_t>(first.size());
  std::vector<int64_t> byFirst(static_cast<size_t>(P)), number(static_cast<size_t>(P));
  for (int64_t r = 0; r < P; ++r) byFirst[r] = r;
  std::sort(byFirst.begin(), byFirst.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
  for (int64_t k = 0; k < P; ++k) number[byFirst[k]] = k;
  Tensor pairOf({E}, DType::I64);
  int64_t* po = pairOf.data<int64_t>();
  for (int64_t e = 0; e < E; ++e) po[e] = number[runOf[e]];
  Tensor pairs({2, P}, DType::I64);
  int64_t* pp = pairs.data<int64_t>();
  for (int64_t k = 0; k < P; ++k) {
    pp[k] = src[first[byFirst[k]]];
    pp[P + k] = dst[first[byFirst[k]]];
  }
  return {pairs, pairOf};
}

}  // namespace gnn
