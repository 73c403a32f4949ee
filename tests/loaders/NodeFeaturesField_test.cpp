// node_features (Graph::nodeFeatures, [N, F] float32: molecules' user atom descriptors) through the loaders: every
// real atom's row reaches the batch exactly under each packing strategy and in stacked micro-batches, padding rows
// are 0 whatever the node pad value, trimming keeps the kept atoms' rows, and a field of the wrong row count is
// an error naming it.
#include <gtest/gtest.h>

#include "loaders/BatchFields.h"
#include "loaders/FixedSizeDataLoader.h"
#include "loaders/GraphTrim.h"
#include "loaders/SyntheticGraphs.h"

namespace gnn {
namespace {

constexpr int64_t kWidth = 2;

// Atom k of graph g has features (1000 g + k, -(1000 g + k) / 4): every row tells where it came from.
std::shared_ptr<InMemoryDataset> featuredGraphs(int64_t count) {
  auto plain = test::randomDataset(count, 9, 1, 14);
  auto ds = std::make_shared<InMemoryDataset>();
  for (size_t i = 0; i < plain->size(); ++i) {
    Graph g = plain->get(i);
    std::vector<float> v;
    for (int64_t k = 0; k < g.numNodes; ++k) {
      const float id = static_cast<float>(1000 * static_cast<int64_t>(i) + k);
      v.push_back(id);
      v.push_back(-id / 4);
    }
    g.nodeFeatures = Tensor::fromVector(v, {g.numNodes, kWidth});
    ds->push(std::move(g));
  }
  return ds;
}

void expectRowsOf(const Batch& b) {
  ASSERT_TRUE(b.nodeFeatures.defined());
  ASSERT_EQ(b.nodeFeatures.shape(), (Shape{b.numNodes, kWidth}));
  for (int64_t k = 0; k < b.numRealGraphs; ++k) {
    const int64_t g = b.graphIndex[static_cast<size_t>(k)], n0 = static_cast<int64_t>(b.ptr.at(k));
    for (int64_t a = 0; a < static_cast<int64_t>(b.ptr.at(k + 1)) - n0; ++a) {
      ASSERT_EQ(b.nodeFeatures.at((n0 + a) * kWidth), static_cast<double>(1000 * g + a)) << "graph " << g;
      ASSERT_EQ(b.nodeFeatures.at((n0 + a) * kWidth + 1), -static_cast<double>(1000 * g + a) / 4) << "graph " << g;
    }
  }
  for (int64_t i = b.numRealNodes * kWidth; i < b.nodeFeatures.numel(); ++i)
    ASSERT_EQ(b.nodeFeatures.at(i), 0.0) << "padding";
}

TEST(NodeFeaturesField, EveryStrategyCarriesTheRowsAndPadsWithZero) {
  auto ds = featuredGraphs(120);
  for (PackingStrategy s : {PackingStrategy::PadToMax, PackingStrategy::StreamPack, PackingStrategy::PlannedPack}) {
    FixedSizeOptions o = s == PackingStrategy::PadToMax ? FixedSizeOptions::fromDataset(*ds, 5)
                                                        : FixedSizeOptions::forPacking(*ds, 8);
    o.nodePadValue = 7;  // the other node fields' padding; node_features pads with 0 (FieldPad::Zero)
    FixedSizeDataLoader::Options lo;
    lo.strategy = s;
    lo.seed = 4;
    FixedSizeDataLoader loader(ds, o, lo);
    loader.startEpoch(0);
    int64_t graphs = 0;
    for (Batch b; loader.next(b);) {
      ASSERT_NO_THROW(b.validate());
      expectRowsOf(b);
      graphs += b.numRealGraphs;
      ASSERT_EQ(b.x.at(b.numRealNodes * b.x.cols()), 7.0);  // x's padding does follow nodePadValue
    }
    EXPECT_EQ(graphs, 120) << packingStrategyName(s);
    // Micro-batches stacked into one request keep the field bit for bit.
    lo.microBatchesPerRequest = 3;
    FixedSizeDataLoader combined(ds, o, lo);
    loader.startEpoch(1);
    combined.startEpoch(1);
    Batch req, one;
    while (combined.nextRequest(req)) {
      const int64_t parts = req.numGraphs / o.numGraphs;
      for (int64_t k = 0; k < parts; ++k) {
        ASSERT_TRUE(loader.next(one));
        Batch mb = parts == 1 ? req : microBatch(req, k, parts);
        EXPECT_TRUE(mb.nodeFeatures.bitEqual(one.nodeFeatures)) << "micro-batch " << k;
      }
    }
  }
}

TEST(NodeFeaturesField, TrimmingKeepsTheKeptAtomsRows) {
  auto ds = featuredGraphs(40);
  size_t big = 0;
  for (size_t i = 0; i < ds->size(); ++i)
    if (ds->numNodes(i) > ds->numNodes(big)) big = i;
  Graph g = ds->get(big);
  Generator gen(3);
  std::vector<int64_t> kept;
  Graph t = trimGraph(g, g.numNodes / 2, g.numEdges(), OverSizeStrategy::TrimNodes, gen, false, "graph", &kept);
  ASSERT_EQ(t.nodeFeatures.shape(), (Shape{t.numNodes, kWidth}));
  for (int64_t a = 0; a < t.numNodes; ++a)
    EXPECT_EQ(t.nodeFeatures.at(a * kWidth), static_cast<double>(1000 * static_cast<int64_t>(big) + kept[static_cast<size_t>(a)]));
  // A field whose rows are not the graph's atoms is refused by name.
  g.nodeFeatures = Tensor::fromVector<float>({1, 2}, {1, 2});
  EXPECT_THROW(g.validate("graph 3"), std::invalid_argument);
  for (const BatchField& f : batchFields())
    if (std::string(f.name) == "node_features") {
      EXPECT_EQ(f.level, FieldLevel::Node);
      try {
        checkFieldShape(f, g, false, "graph 3");
        FAIL() << "accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("graph 3: node field node_features has shape [1, 2]"), std::string::npos)
            << e.what();
      }
    }
}

}  // namespace
}  // namespace gnn
