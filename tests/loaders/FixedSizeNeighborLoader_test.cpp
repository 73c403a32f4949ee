// FixedSizeNeighborLoader: every input node a seed once per epoch (the last batch short), fixed shapes, the seeds'
// rows first with the split masks on them only, the same batches for any thread count and prefetch depth,
// trimming from the end with the counts reported (or refused), sizes from the loader and the worst case, and
// padding invariance: a GraphSAGE layer's outputs on the seeds do not change with more padding.
#include "loaders/FixedSizeNeighborLoader.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "gnn/nn/conv/SAGEConv.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/Random.h"
#include "loaders/RandomNodeGraph.h"

namespace gnn {
namespace {

// Mean in-degree meanDegree, 4 features, 3 classes.
std::shared_ptr<Graph> randomNodeGraph(int64_t n, int64_t meanDegree, uint64_t seed) {
  return test::randomNodeGraph(n, 2 * meanDegree, 4, 3, seed);
}

std::vector<int64_t> evenNodes(int64_t n) {
  std::vector<int64_t> ids;
  for (int64_t v = 0; v < n; v += 2) ids.push_back(v);
  return ids;
}

TEST(FixedSizeNeighborLoader, EveryInputNodeIsASeedOncePerEpochInFixedShapes) {
  auto g = randomNodeGraph(400, 5, 1);
  auto s = std::make_shared<NeighborSampler>(g->edgeIndex, g->numNodes);
  const std::vector<int64_t> input = evenNodes(g->numNodes);  // 200 train nodes
  FixedSizeNeighborLoader::Options o;
  o.numNeighbors = {5, 3};
  o.batchSize = 64;
  o.seed = 3;
  const FixedSizeOptions fixed = FixedSizeNeighborLoader::worstCase(*s, o);
  FixedSizeNeighborLoader loader(g, s, input, o, fixed);
  EXPECT_EQ(loader.numBatches(), 4);  // 64, 64, 64, 8
  for (int64_t epoch : {0, 1}) {
    loader.startEpoch(epoch);
    std::multiset<int64_t> seen;
    std::vector<int64_t> firstSeeds;
    int64_t batches = 0;
    for (Batch b; loader.next(b); ++batches) {
      EXPECT_NO_THROW(b.validate());
      EXPECT_EQ(b.numNodes, fixed.numNodes);
      EXPECT_EQ(b.numEdges, fixed.numEdges);
      EXPECT_EQ(b.numSeeds, batches < 3 ? 64 : 8);
      ASSERT_EQ(static_cast<int64_t>(b.inputId.size()), b.numSeeds);
      ASSERT_EQ(static_cast<int64_t>(b.nodeIndex.size()), b.numRealNodes);
      const uint8_t* train = b.trainMask.data<uint8_t>();
      const uint8_t* valid = b.validMask.data<uint8_t>();
      for (int64_t r = 0; r < b.numNodes; ++r) {
        const bool seedRow = r < b.numSeeds;
        if (seedRow) {
          const int64_t v = b.nodeIndex[static_cast<size_t>(r)];
          EXPECT_EQ(v, input[static_cast<size_t>(b.inputId[static_cast<size_t>(r)])]);
          seen.insert(v);
          if (batches == 0) firstSeeds.push_back(v);
          EXPECT_EQ(train[r], 1) << "a seed of the train split";
          EXPECT_EQ(b.y.data<int64_t>()[r], v % 3);
        } else {
          EXPECT_EQ(train[r], 0) << "row " << r << " is no seed";
        }
        EXPECT_EQ(valid[r], 0);
      }
    }
    EXPECT_EQ(batches, 4);
    EXPECT_EQ(seen, std::multiset<int64_t>(input.begin(), input.end()));
    EXPECT_EQ(loader.report().trimmed, 0);  // the worst case never trims
    if (epoch == 0) {
      EXPECT_NE(firstSeeds, std::vector<int64_t>(input.begin(), input.begin() + 64)) << "shuffled";
    }
  }
}

bool sameBatch(const Batch& a, const Batch& b) {
  return a.x.bitEqual(b.x) && a.edgeIndex.bitEqual(b.edgeIndex) && a.y.bitEqual(b.y) &&
         a.trainMask.bitEqual(b.trainMask) && a.nodeIndex == b.nodeIndex && a.inputId == b.inputId;
}

TEST(FixedSizeNeighborLoader, SameBatchesForAnyThreadCountAndPrefetchDepth) {
  auto g = randomNodeGraph(500, 6, 2);
  auto s = std::make_shared<NeighborSampler>(g->edgeIndex, g->numNodes);
  FixedSizeNeighborLoader::Options o;
  o.numNeighbors = {4, 4};
  o.batchSize = 50;
  const std::vector<int64_t> input = evenNodes(g->numNodes);
  auto epochBatches = [&](int threads, int64_t prefetch) {
    setNumThreads(threads);
    o.prefetch = prefetch;
    const FixedSizeOptions fixed = FixedSizeNeighborLoader::fromLoader(*s, input, o);
    FixedSizeNeighborLoader loader(g, s, input, o, fixed);
    loader.startEpoch(5);
    std::vector<Batch> out;
    for (Batch b; loader.next(b);) out.push_back(b);
    return out;
  };
  const auto a = epochBatches(1, 0), b = epochBatches(2, 2);
  setNumThreads(2);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(sameBatch(a[i], b[i])) << "batch " << i;
}

TEST(FixedSizeNeighborLoader, TrimsFromTheEndKeepingTheSeedsAndCountsIt) {
  auto g = randomNodeGraph(300, 8, 3);
  auto s = std::make_shared<NeighborSampler>(g->edgeIndex, g->numNodes);
  FixedSizeNeighborLoader::Options o;
  o.numNeighbors = {6, 6};
  o.batchSize = 30;
  o.shuffle = false;
  const std::vector<int64_t> input = evenNodes(g->numNodes);
  FixedSizeOptions small;
  small.numGraphs = 2;
  small.numNodes = 61;   // 60 real rows
  small.numEdges = 101;  // 100 real edges
  FixedSizeNeighborLoader loader(g, s, input, o, small);
  loader.startEpoch(0);
  const SampledSubgraph full = s->sample(loader.batchSeeds(0), o.numNeighbors, o.seed, 0);
  ASSERT_GT(full.nodes.size(), 60u);
  Batch b;
  ASSERT_TRUE(loader.next(b));
  EXPECT_NO_THROW(b.validate());
  EXPECT_EQ(b.numRealNodes, 60);
  EXPECT_LE(b.numRealEdges, 100);
  // The kept rows are the first 60 of the sample, the seeds among them.
  EXPECT_EQ(b.nodeIndex, std::vector<int64_t>(full.nodes.begin(), full.nodes.begin() + 60));
  EXPECT_EQ(b.numSeeds, 30);
  EXPECT_EQ(loader.report().trimmed, 1);
  EXPECT_EQ(loader.report().trimmedNodes, static_cast<int64_t>(full.nodes.size()) - 60);
  EXPECT_EQ(loader.report().trimmedEdges, static_cast<int64_t>(full.src.size()) - b.numRealEdges);
  EXPECT_EQ(loader.report().toJson()["trimmed_nodes"], loader.report().trimmedNodes);
  // Error refuses the batch, naming the sizes.
  o.overSize = OverSizeStrategy::Error;
  o.prefetch = 0;
  FixedSizeNeighborLoader strict(g, s, input, o, small);
  strict.startEpoch(0);
  EXPECT_THROW(strict.next(b), std::invalid_argument);
  // Too few rows for the seeds is refused up front.
  small.numNodes = 20;
  EXPECT_THROW(FixedSizeNeighborLoader(g, s, input, o, small), std::invalid_argument);
}

TEST(FixedSizeNeighborLoader, SizesFromTheLoaderHoldItsBatchesWithinTheWorstCase) {
  auto g = randomNodeGraph(600, 5, 4);
  auto s = std::make_shared<NeighborSampler>(g->edgeIndex, g->numNodes);
  FixedSizeNeighborLoader::Options o;
  o.numNeighbors = {5, 5};
  o.batchSize = 40;
  const std::vector<int64_t> input = evenNodes(g->numNodes);
  const FixedSizeOptions worst = FixedSizeNeighborLoader::worstCase(*s, o);
  const FixedSizeOptions f = FixedSizeNeighborLoader::fromLoader(*s, input, o, 1000, 0.0);
  EXPECT_LE(f.numNodes, worst.numNodes);
  EXPECT_LE(f.numEdges, worst.numEdges);
  // With no margin, epoch 0's largest batch fills the sizes exactly (plus the padding graph's row).
  FixedSizeNeighborLoader loader(g, s, input, o, f);
  loader.startEpoch(0);
  int64_t maxNodes = 0, maxEdges = 0;
  for (Batch b; loader.next(b);) {
    maxNodes = std::max(maxNodes, b.numRealNodes);
    maxEdges = std::max(maxEdges, b.numRealEdges);
  }
  EXPECT_EQ(maxNodes + 1, f.numNodes);
  EXPECT_EQ(maxEdges + 1, f.numEdges);
  EXPECT_EQ(loader.report().trimmed, 0);
  const FixedSizeOptions m = FixedSizeNeighborLoader::fromLoader(*s, input, o, 1000, 0.1);
  EXPECT_GT(m.numNodes, f.numNodes);
}

TEST(FixedSizeNeighborLoader, SeedOutputsDoNotChangeWithMorePadding) {
  auto g = randomNodeGraph(300, 6, 5);
  auto s = std::make_shared<NeighborSampler>(g->edgeIndex, g->numNodes);
  FixedSizeNeighborLoader::Options o;
  o.numNeighbors = {4, 4};
  o.batchSize = 32;
  const std::vector<int64_t> input = evenNodes(g->numNodes);
  const FixedSizeOptions tight = FixedSizeNeighborLoader::worstCase(*s, o);
  FixedSizeOptions loose = tight;
  loose.numNodes += 37;
  loose.numEdges += 91;
  FixedSizeNeighborLoader a(g, s, input, o, tight), b(g, s, input, o, loose);
  a.startEpoch(2);
  b.startEpoch(2);
  Generator init(9);
  SAGEConv l1(4, 8, init), l2(8, 3, init);
  for (Batch ba, bb; a.next(ba) && b.next(bb);) {
    ASSERT_EQ(ba.numSeeds, bb.numSeeds);
    auto run = [&](const Batch& x) {
      return l2.forward(relu(l1.forward(Variable(x.x), x.edgeIndex)), x.edgeIndex).value();
    };
    const Tensor ya = run(ba), yb = run(bb);
    EXPECT_TRUE(ya.slice(0, ba.numSeeds).bitEqual(yb.slice(0, bb.numSeeds)));
  }
}

}  // namespace
}  // namespace gnn
