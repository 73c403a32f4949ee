// Molecule-like graphs for model tests: random trees whose node and edge features are valid OGB categories
// (atom [N, 9], bond [E, 3]), one regression target per graph with some labels missing; and the fixed-size
// batches a loader makes of them. Seeded, so tests are reproducible.
#pragma once
#include <algorithm>
#include <memory>
#include <vector>

#include "loaders/FixedSizeDataLoader.h"
#include "models/AtomEncoder.h"
#include "models/BondEncoder.h"

namespace gnn::test {

inline std::shared_ptr<InMemoryDataset> molecules(int64_t count, uint64_t seed) {
  Generator g(seed);
  auto ds = std::make_shared<InMemoryDataset>();
  const auto atomDims = AtomEncoder::featureDims();
  const auto bondDims = BondEncoder::featureDims();
  for (int64_t k = 0; k < count; ++k) {
    Graph gr;
    gr.numNodes = 1 + static_cast<int64_t>(g.nextBelow(14));
    std::vector<int64_t> x, ea, src, dst;
    for (int64_t i = 0; i < gr.numNodes; ++i)
      for (int64_t c = 0; c < 9; ++c) x.push_back(static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(std::min<int64_t>(atomDims[c], 6)))));
    for (int64_t i = 1; i < gr.numNodes; ++i) {
      int64_t j = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(i)));  // a random tree: bonds i - j
      std::vector<int64_t> attr;
      for (int64_t c = 0; c < 3; ++c) attr.push_back(static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(bondDims[c]))));
      src.push_back(i), dst.push_back(j), ea.insert(ea.end(), attr.begin(), attr.end());
      src.push_back(j), dst.push_back(i), ea.insert(ea.end(), attr.begin(), attr.end());
    }
    int64_t m = static_cast<int64_t>(src.size());
    gr.x = Tensor::fromVector(x, {gr.numNodes, 9});
    std::vector<int64_t> ei(src);
    ei.insert(ei.end(), dst.begin(), dst.end());
    gr.edgeIndex = Tensor::fromVector(ei, {2, m});
    gr.edgeAttr = Tensor::fromVector(ea, {m, 3});
    gr.y = Tensor::fromVector<float>({static_cast<float>(g.nextUniform() * 4 - 2)}, {1});
    gr.yMask = Tensor::fromVector<uint8_t>({static_cast<uint8_t>(k % 7 != 3)}, {1});  // some labels missing
    ds->push(std::move(gr));
  }
  return ds;
}

/// Every batch of one epoch of a FixedSizeDataLoader over `ds`.
inline std::vector<Batch> batchesOf(const std::shared_ptr<const Dataset>& ds, const FixedSizeOptions& o,
                                    PackingStrategy s, uint64_t seed = 3) {
  FixedSizeDataLoader::Options lo;
  lo.strategy = s;
  lo.seed = seed;
  FixedSizeDataLoader loader(ds, o, lo);
  loader.startEpoch(0);
  std::vector<Batch> out;
  for (Batch b; loader.next(b);) out.push_back(b);
  return out;
}

}  // namespace gnn::test
