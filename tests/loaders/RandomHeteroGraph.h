// A small heterogeneous graph for the heterogeneous loader tests: paper (60), author (40) and field (7) nodes and five
// relations (a same-type one, a pair of reverses, one into a type no seed has), each node's in-degree per relation
// from 0 to 2 * meanDegree, duplicate edges included, columns shuffled so a destination's edges are scattered. No
// features: the tests that need them add them. Seeded, so tests are reproducible.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "data/HeteroGraph.h"
#include "gnn/system/Random.h"

namespace gnn::test {

/// The [2, E] int64 edge_index of edges src[e] -> dst[e].
inline Tensor pairs(const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  std::vector<int64_t> ei(src);
  ei.insert(ei.end(), dst.begin(), dst.end());
  return Tensor::fromVector(ei, {2, static_cast<int64_t>(src.size())});
}

inline HeteroGraph randomHeteroGraph(int64_t meanDegree, uint64_t seed) {
  Generator g(seed);
  HeteroGraph h;
  h.addNodeType("paper", 60);
  h.addNodeType("author", 40);
  h.addNodeType("field", 7);
  const std::vector<EdgeType> types = {{"author", "writes", "paper"},
                                       {"paper", "cites", "paper"},
                                       {"paper", "rev_writes", "author"},
                                       {"paper", "has_topic", "field"},
                                       {"field", "rev_has_topic", "paper"}};
  for (const EdgeType& t : types) {
    std::vector<int64_t> src, dst;
    const int64_t ns = h.numNodes(t.src), nd = h.numNodes(t.dst);
    for (int64_t v = 0; v < nd; ++v) {
      const int64_t deg = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(2 * meanDegree + 1)));
      for (int64_t j = 0; j < deg; ++j) {
        src.push_back(static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(ns))));
        dst.push_back(v);
      }
    }
    std::vector<int64_t> perm(src.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[g.nextBelow(i)]);
    std::vector<int64_t> s2, d2;
    for (int64_t p : perm) {
      s2.push_back(src[static_cast<size_t>(p)]);
      d2.push_back(dst[static_cast<size_t>(p)]);
    }
    h.addEdgeType(t, pairs(s2, d2));
  }
  return h;
}

}  // namespace gnn::test
