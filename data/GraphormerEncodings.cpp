#include "data/GraphormerEncodings.h"

#include <algorithm>

#include "gnn/system/Check.h"

namespace gnn {

GraphormerEncodings::GraphormerEncodings(int multiHopMaxDist, bool capAtLongestPath)
    : k_(multiHopMaxDist), cap_(capAtLongestPath) {
  GNN_CHECK_ARG(multiHopMaxDist >= 1, "GraphormerEncodings: multi_hop_max_dist must be >= 1, got ",
                multiHopMaxDist);
}

int GraphormerEncodings::hopSlots(int64_t n) const {
  return cap_ ? static_cast<int>(std::min<int64_t>(k_, std::max<int64_t>(1, n - 1))) : k_;
}

// algos.get_all_edges: the intermediate nodes of the path i -> j, in order, from Floyd-Warshall's
// "last improving k" matrix.
void GraphormerEncodings::appendIntermediates(int i, int j) {
  const int m = via_[static_cast<size_t>(i) * n_ + j];
  if (m < 0) return;
  appendIntermediates(i, m);
  hops_.push_back(m);
  appendIntermediates(m, j);
}

void GraphormerEncodings::computePaths(MoleculeGraph& g) {
  const int n = static_cast<int>(g.numNodes);
  const size_t nn = static_cast<size_t>(n) * n;
  n_ = n;
  constexpr int32_t kFar = static_cast<int32_t>(kUnreachable);
  dist_.assign(nn, kFar);
  via_.assign(nn, -1);
  edgeOf_.assign(nn, -1);
  g.inDegree.assign(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) dist_[static_cast<size_t>(i) * n + i] = 0;
  const int64_t e = g.numEdges();
  for (int64_t k = 0; k < e; ++k) {
    const size_t at = static_cast<size_t>(g.src[k]) * n + g.dst[k];
    if (dist_[at] != 0) dist_[at] = 1;
    if (edgeOf_[at] < 0) ++g.inDegree[g.src[k]];  // adj is boolean: a repeated edge counts once
    // attn_edge_type[src, dst] = ... assigned for every edge in order, so the last duplicate wins.
    edgeOf_[at] = static_cast<int32_t>(k);
  }
  // Floyd-Warshall exactly as algos.floyd_warshall: strict improvement records k as the path's midpoint.
  for (int k = 0; k < n; ++k) {
    const int32_t* dk = dist_.data() + static_cast<size_t>(k) * n;
    for (int i = 0; i < n; ++i) {
      int32_t* di = dist_.data() + static_cast<size_t>(i) * n;
      const int32_t dik = di[k];
      if (dik >= kFar) continue;  // cannot improve anything: dik + dk[j] >= 510 >= di[j] unless di[j] > 510
      int32_t* vi = via_.data() + static_cast<size_t>(i) * n;
      for (int j = 0; j < n; ++j) {
        const int32_t c = dik + dk[j];
        if (di[j] > c) {
          di[j] = c;
          vi[j] = k;
        }
      }
    }
  }
  g.maxDist = hopSlots(n);
  g.spatialPos.resize(nn);
  g.pathVia.resize(nn);
  g.edgeInput.clear();
  for (size_t at = 0; at < nn; ++at) {
    const int32_t d = std::min(dist_[at], kFar);
    g.spatialPos[at] = d;
    g.pathVia[at] = d >= kFar ? -1 : via_[at];  // an unreachable pair has no path (and gets no hop)
  }
}

// The paths are walked here from via_ directly, as Graphormer's get_all_edges does, and not through
// EdgeInputGather: datasets that store edge_input (format 1) come from this code, so the tests comparing them
// with edge_input gathered from the stored pathVia (format 2) compare two implementations, not one with itself.
void GraphormerEncodings::compute(MoleculeGraph& g) {
  computePaths(g);
  const int n = n_;
  constexpr int32_t kFar = static_cast<int32_t>(kUnreachable);
  const int slots = g.maxDist;
  g.edgeInput.assign(static_cast<size_t>(n) * n * static_cast<size_t>(slots) * MoleculeGraph::kBondFeatures, -1);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const size_t at = static_cast<size_t>(i) * n + j;
      const int32_t d = std::min(dist_[at], kFar);
      if (i == j || d >= kFar) continue;
      hops_.clear();
      hops_.push_back(i);
      appendIntermediates(i, j);
      hops_.push_back(j);
      const int numHops = std::min(static_cast<int>(hops_.size()) - 1, slots);
      int16_t* out = g.edgeInput.data() + at * static_cast<size_t>(slots) * MoleculeGraph::kBondFeatures;
      for (int h = 0; h < numHops; ++h, out += MoleculeGraph::kBondFeatures) {
        const int32_t edge = edgeOf_[static_cast<size_t>(hops_[h]) * n + hops_[h + 1]];
        GNN_ASSERT(edge >= 0, "shortest path uses a missing edge");
        const int64_t* attr = g.edgeAttr.data() + static_cast<size_t>(edge) * MoleculeGraph::kBondFeatures;
        for (int f = 0; f < MoleculeGraph::kBondFeatures; ++f)
          out[f] = static_cast<int16_t>(attr[f] + 2 + kFeatureOffset * f);
      }
    }
  }
}

}  // namespace gnn
