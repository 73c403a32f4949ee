// Small random molecule-like graphs for loader tests: int64 node features [n, 3], both directions of every
// undirected edge, int64 edge features [m, 2], one float target per graph. Seeded, so tests are reproducible.
// graphormerGraph adds what Graphormer and SchNet read: OGB-shaped features (9 atom, 3 bond), pos, z, and the
// encodings of data/GraphormerEncodings.h (spatial_pos, in_degree, edge_input).
#pragma once
#include <memory>

#include "data/Dataset.h"
#include "data/GraphormerEncodings.h"
#include "data/MoleculeGraph.h"
#include "gnn/system/Random.h"

namespace gnn::test {

inline Graph randomGraph(Generator& g, int64_t minNodes, int64_t maxNodes, double edgeProb = 0.25) {
  Graph gr;
  gr.numNodes = minNodes + static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(maxNodes - minNodes + 1)));
  std::vector<int64_t> x;
  for (int64_t i = 0; i < gr.numNodes * 3; ++i) x.push_back(static_cast<int64_t>(g.nextBelow(5)));
  gr.x = Tensor::fromVector(x, {gr.numNodes, 3});
  std::vector<int64_t> src, dst, attr;
  for (int64_t i = 0; i < gr.numNodes; ++i)
    for (int64_t j = i + 1; j < gr.numNodes; ++j)
      if (j == i + 1 || g.nextUniform() < edgeProb / static_cast<double>(gr.numNodes) * 4) {
        int64_t a0 = static_cast<int64_t>(g.nextBelow(4)), a1 = static_cast<int64_t>(g.nextBelow(3));
        src.push_back(i), dst.push_back(j), attr.push_back(a0), attr.push_back(a1);
        src.push_back(j), dst.push_back(i), attr.push_back(a0), attr.push_back(a1);
      }
  int64_t m = static_cast<int64_t>(src.size());
  std::vector<int64_t> ei(src);
  ei.insert(ei.end(), dst.begin(), dst.end());
  gr.edgeIndex = Tensor::fromVector(ei, {2, m});
  gr.edgeAttr = Tensor::fromVector(attr, {m, 2});
  gr.y = Tensor::fromVector<float>({static_cast<float>(g.nextUniform() * 10)}, {1});
  return gr;
}

inline std::shared_ptr<InMemoryDataset> randomDataset(int64_t count, uint64_t seed = 1, int64_t minNodes = 1,
                                                      int64_t maxNodes = 20) {
  Generator g(seed);
  auto ds = std::make_shared<InMemoryDataset>();
  for (int64_t i = 0; i < count; ++i) ds->push(randomGraph(g, minNodes, maxNodes));
  return ds;
}

/// A molecule-shaped graph with Graphormer's encodings (multi_hop_max_dist k), pos and z. About one graph in
/// five is split in two (a missing chain bond), so spatial_pos holds the unreachable value 510 too. minNodes may
/// be 0 (an empty molecule, which carries no node-pair fields, pos or z, as MoleculeGraph::toGraph makes it).
inline Graph graphormerGraph(Generator& g, int64_t minNodes, int64_t maxNodes, int k = 3) {
  MoleculeGraph m;
  m.numNodes = minNodes + static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(maxNodes - minNodes + 1)));
  const int64_t n = m.numNodes;
  for (int64_t i = 0; i < n * MoleculeGraph::kAtomFeatures; ++i) m.x.push_back(static_cast<int64_t>(g.nextBelow(6)));
  const int64_t cut = g.nextBelow(5) == 0 && n > 2 ? 1 + static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n - 2))) : -1;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j)
      if ((j == i + 1 && i != cut) || (j > i + 2 && g.nextUniform() < 0.08)) {
        int64_t a[3] = {static_cast<int64_t>(g.nextBelow(4)), static_cast<int64_t>(g.nextBelow(3)),
                        static_cast<int64_t>(g.nextBelow(2))};
        m.src.push_back(i), m.dst.push_back(j), m.edgeAttr.insert(m.edgeAttr.end(), a, a + 3);
        m.src.push_back(j), m.dst.push_back(i), m.edgeAttr.insert(m.edgeAttr.end(), a, a + 3);
      }
  for (int64_t i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) m.pos.push_back(static_cast<float>(g.nextUniform() * 4 - 2));
    m.z.push_back(1 + static_cast<int64_t>(g.nextBelow(17)));
  }
  m.y.push_back(static_cast<float>(g.nextUniform() * 10));
  m.yMask.push_back(1);
  if (n > 0) GraphormerEncodings(k).compute(m);
  return m.toGraph();
}

inline std::shared_ptr<InMemoryDataset> graphormerDataset(int64_t count, uint64_t seed = 1, int64_t minNodes = 1,
                                                          int64_t maxNodes = 12, int k = 3) {
  Generator g(seed);
  auto ds = std::make_shared<InMemoryDataset>();
  for (int64_t i = 0; i < count; ++i) ds->push(graphormerGraph(g, minNodes, maxNodes, k));
  return ds;
}

}  // namespace gnn::test
