// One large graph for the node-level loader tests (neighbour sampling, trim to layer, layer-wise inference): n
// nodes, each with 0 .. maxInDegree incoming edges from random sources (so some have none; duplicates and
// self-loops included), `features` float features uniform in [-1, 1), labels v % classes, even nodes in the
// training split and odd ones in the validation split. Seeded, so tests are reproducible.
#pragma once
#include <memory>
#include <vector>

#include "data/Graph.h"
#include "gnn/system/Random.h"

namespace gnn::test {

inline std::shared_ptr<Graph> randomNodeGraph(int64_t n, int64_t maxInDegree, int64_t features, int64_t classes,
                                              uint64_t seed) {
  Generator g(seed);
  auto gr = std::make_shared<Graph>();
  gr->numNodes = n;
  std::vector<int64_t> src, dst;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t deg = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(maxInDegree + 1)));
    for (int64_t j = 0; j < deg; ++j) {
      src.push_back(static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n))));
      dst.push_back(v);
    }
  }
  std::vector<int64_t> ei(src);
  ei.insert(ei.end(), dst.begin(), dst.end());
  gr->edgeIndex = Tensor::fromVector(ei, {2, static_cast<int64_t>(src.size())});
  std::vector<float> x;
  std::vector<int64_t> y;
  std::vector<uint8_t> train, valid;
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t f = 0; f < features; ++f) x.push_back(static_cast<float>(g.nextUniform() * 2 - 1));
    y.push_back(v % classes);
    train.push_back(v % 2 == 0);
    valid.push_back(v % 2 == 1);
  }
  gr->x = Tensor::fromVector(x, {n, features});
  gr->y = Tensor::fromVector(y);
  gr->trainMask = Tensor::fromVector(train);
  gr->validMask = Tensor::fromVector(valid);
  return gr;
}

}  // namespace gnn::test
