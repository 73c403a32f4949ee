// Small random molecule-like graphs for loader tests: int64 node features [n, 3], both directions of every
// undirected edge, int64 edge features [m, 2], one float target per graph. Seeded, so tests are reproducible.
#pragma once
#include <memory>

#include "data/Dataset.h"
#include "gnn/Random.h"

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

}  // namespace gnn::test
