#include "data/EdgeInputGather.h"

#include <algorithm>

#include "data/GraphormerEncodings.h"
#include "data/MoleculeGraph.h"
#include "gnn/system/Check.h"

namespace gnn {

void EdgeInputGather::run(int64_t n, const int64_t* src, const int64_t* dst, int64_t numEdges,
                          const int64_t* edgeAttr, const int64_t* spatialPos, const int32_t* via, int k,
                          int64_t* out) {
  constexpr int kB = MoleculeGraph::kBondFeatures;
  constexpr int64_t kFar = GraphormerEncodings::kUnreachable;
  const int64_t nn = n * n, slot = static_cast<int64_t>(k) * kB;
  std::fill(out, out + nn * slot, int64_t{-1});
  if (k <= 0 || n == 0) return;
  edgeOf_.assign(static_cast<size_t>(nn), -1);
  for (int64_t e = 0; e < numEdges; ++e) edgeOf_[static_cast<size_t>(src[e] * n + dst[e])] = static_cast<int32_t>(e);
  // The reachable pairs, by distance (a counting sort): each pair's halves come before it.
  int64_t longest = 0;
  for (int64_t p = 0; p < nn; ++p)
    if (spatialPos[p] > 0 && spatialPos[p] < kFar) longest = std::max(longest, spatialPos[p]);
  start_.assign(static_cast<size_t>(longest + 2), 0);
  for (int64_t p = 0; p < nn; ++p)
    if (spatialPos[p] > 0 && spatialPos[p] < kFar) ++start_[static_cast<size_t>(spatialPos[p] + 1)];
  for (int64_t d = 1; d <= longest + 1; ++d) start_[static_cast<size_t>(d)] += start_[static_cast<size_t>(d - 1)];
  order_.resize(static_cast<size_t>(start_[static_cast<size_t>(longest + 1)]));
  for (int64_t p = 0; p < nn; ++p)
    if (spatialPos[p] > 0 && spatialPos[p] < kFar) order_[static_cast<size_t>(start_[static_cast<size_t>(spatialPos[p])]++)] = p;
  for (const int64_t p : order_) {
    int64_t* o = out + p * slot;
    const int32_t m = via[p];
    if (m < 0) {  // one edge
      const int32_t edge = edgeOf_[static_cast<size_t>(p)];
      GNN_ASSERT(edge >= 0 && spatialPos[p] == 1, "EdgeInputGather: a pair without a via is not an edge");
      const int64_t* attr = edgeAttr + static_cast<int64_t>(edge) * kB;
      for (int f = 0; f < kB; ++f) o[f] = attr[f] + 2 + GraphormerEncodings::kFeatureOffset * f;
      continue;
    }
    const int64_t i = p / n, j = p % n, first = i * n + m, second = static_cast<int64_t>(m) * n + j;
    GNN_ASSERT(spatialPos[first] + spatialPos[second] == spatialPos[p], "EdgeInputGather: via's halves do not add up");
    const int64_t fromFirst = std::min<int64_t>(k, spatialPos[first]);
    std::copy_n(out + first * slot, fromFirst * kB, o);
    const int64_t fromSecond = std::min<int64_t>(k - fromFirst, spatialPos[second]);
    if (fromSecond > 0) std::copy_n(out + second * slot, fromSecond * kB, o + fromFirst * kB);
  }
}

}  // namespace gnn
