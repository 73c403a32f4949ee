#include "loaders/FixedSizeDataLoader.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "loaders/DataLoader.h"
#include "loaders/SyntheticGraphs.h"

namespace gnn {
namespace {

std::vector<Batch> epochBatches(FixedSizeDataLoader& loader, int64_t epoch) {
  loader.startEpoch(epoch);
  std::vector<Batch> out;
  for (Batch b; loader.next(b);) out.push_back(b);
  return out;
}

FixedSizeOptions packOptions() { return FixedSizeOptions{200, 600, 17}; }

struct StrategyCase {
  PackingStrategy strategy;
  bool packed;
};

class AllStrategies : public ::testing::TestWithParam<PackingStrategy> {};

TEST_P(AllStrategies, ExactShapesMasksAndEveryGraphOnce) {
  auto ds = test::randomDataset(500, 3);
  FixedSizeOptions o = GetParam() == PackingStrategy::PadToMax ? FixedSizeOptions::fromDataset(*ds, 9) : packOptions();
  FixedSizeDataLoader::Options lo;
  lo.strategy = GetParam();
  lo.seed = 4;
  FixedSizeDataLoader loader(ds, o, lo);
  auto batches = epochBatches(loader, 0);
  std::map<int64_t, int> seen;
  PaddingReport fromBatches;
  for (const Batch& b : batches) {
    b.validate();  // masks mark exactly the real rows, pads are self-loops, edges stay in their graph
    EXPECT_EQ(b.numNodes, o.numNodes);
    EXPECT_EQ(b.numEdges, o.numEdges);
    EXPECT_EQ(b.numGraphs, o.numGraphs);
    EXPECT_EQ(b.x.dim(0), o.numNodes);
    EXPECT_EQ(b.edgeAttr.dim(0), o.numEdges);
    EXPECT_EQ(b.y.dim(0), o.numGraphs);
    EXPECT_GE(b.numRealGraphs, 1);
    for (int64_t idx : b.graphIndex) ++seen[idx];
    // Real rows are the dataset graphs' rows.
    int64_t off = 0;
    for (int64_t k = 0; k < b.numRealGraphs; ++k) {
      Graph g = ds->get(static_cast<size_t>(b.graphIndex[k]));
      EXPECT_EQ(b.ptr.at(k), off);
      for (int64_t i = 0; i < g.x.numel(); ++i) ASSERT_EQ(b.x.at(off * 3 + i), g.x.at(i));
      off += g.numNodes;
    }
    fromBatches.add(b);
  }
  EXPECT_EQ(seen.size(), ds->size());
  for (auto& [idx, count] : seen) EXPECT_EQ(count, 1) << "graph " << idx;
  PaddingReport planned = loader.report();
  EXPECT_EQ(planned.realNodes, fromBatches.realNodes);
  EXPECT_EQ(planned.totalNodes, fromBatches.totalNodes);
  EXPECT_EQ(planned.realEdges, fromBatches.realEdges);
  EXPECT_EQ(planned.realGraphs, fromBatches.realGraphs);
  EXPECT_EQ(planned.batches, static_cast<int64_t>(batches.size()));
}

TEST_P(AllStrategies, SameSeedSameBatchesWithOrWithoutPrefetch) {
  auto ds = test::randomDataset(300, 7);
  FixedSizeOptions o = GetParam() == PackingStrategy::PadToMax ? FixedSizeOptions::fromDataset(*ds, 5) : packOptions();
  FixedSizeDataLoader::Options lo;
  lo.strategy = GetParam();
  lo.seed = 11;
  lo.prefetch = 0;
  FixedSizeDataLoader sync(ds, o, lo);
  lo.prefetch = 3;
  FixedSizeDataLoader pre(ds, o, lo);
  for (int64_t epoch : {0, 1, 5}) {
    auto a = epochBatches(sync, epoch), b = epochBatches(pre, epoch);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].graphIndex, b[i].graphIndex);
      EXPECT_TRUE(a[i].x.bitEqual(b[i].x));
      EXPECT_TRUE(a[i].edgeIndex.bitEqual(b[i].edgeIndex));
      EXPECT_TRUE(a[i].edgeAttr.bitEqual(b[i].edgeAttr));
      EXPECT_TRUE(a[i].y.bitEqual(b[i].y));
    }
  }
  // Epochs differ, and another seed gives another order.
  auto e0 = epochBatches(sync, 0), e1 = epochBatches(sync, 1);
  EXPECT_NE(e0.front().graphIndex, e1.front().graphIndex);
  lo.seed = 12;
  FixedSizeDataLoader other(ds, o, lo);
  EXPECT_NE(epochBatches(other, 0).front().graphIndex, e0.front().graphIndex);
}

INSTANTIATE_TEST_SUITE_P(Loaders, AllStrategies,
                         ::testing::Values(PackingStrategy::PadToMax, PackingStrategy::StreamPack,
                                           PackingStrategy::PlannedPack),
                         [](const auto& info) { return std::string(packingStrategyName(info.param)); });

TEST(FixedSizeDataLoader, PadToMaxTakesBatchSizeMinusOneGraphs) {
  auto ds = test::randomDataset(100, 3);
  FixedSizeDataLoader::Options lo;
  lo.shuffle = false;
  FixedSizeDataLoader loader(ds, FixedSizeOptions::fromDataset(*ds, 8), lo);
  auto batches = epochBatches(loader, 0);
  ASSERT_EQ(batches.size(), 15u);  // ceil(100 / 7)
  for (size_t i = 0; i + 1 < batches.size(); ++i) EXPECT_EQ(batches[i].numRealGraphs, 7);
  EXPECT_EQ(batches.back().numRealGraphs, 2);
  EXPECT_EQ(batches[0].graphIndex, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  lo.dropLast = true;
  FixedSizeDataLoader dropping(ds, FixedSizeOptions::fromDataset(*ds, 8), lo);
  EXPECT_EQ(epochBatches(dropping, 0).size(), 14u);
}

TEST(FixedSizeDataLoader, StreamPackKeepsOneNodeAndEdgePerPaddingGraph) {
  auto ds = test::randomDataset(400, 9);
  FixedSizeOptions o{60, 150, 6};
  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::StreamPack;
  lo.shuffle = false;
  FixedSizeDataLoader loader(ds, o, lo);
  auto batches = epochBatches(loader, 0);
  int64_t expectNext = 0;
  for (size_t i = 0; i < batches.size(); ++i) {
    const Batch& b = batches[i];
    int64_t pads = b.numGraphs - b.numRealGraphs;
    EXPECT_GE(pads, 1);
    EXPECT_LE(b.numRealNodes + pads, o.numNodes);
    EXPECT_LE(b.numRealEdges + pads, o.numEdges);
    for (int64_t idx : b.graphIndex) EXPECT_EQ(idx, expectNext++);  // sampler order, no reordering
    if (i + 1 < batches.size() && b.numRealGraphs < o.numGraphs - 1) {
      // Closed because the next graph did not fit.
      int64_t nxt = batches[i + 1].graphIndex.front();
      bool fitsNodes = b.numRealNodes + ds->numNodes(nxt) + (pads - 1) <= o.numNodes;
      bool fitsEdges = b.numRealEdges + ds->numEdges(nxt) + (pads - 1) <= o.numEdges;
      EXPECT_FALSE(fitsNodes && fitsEdges) << "batch " << i;
    }
  }
}

TEST(FixedSizeDataLoader, PlannedPackPacksTighterThanStreamPack) {
  auto ds = test::randomDataset(2000, 13);
  FixedSizeOptions o{300, 900, 30};  // ~28 graphs of mean 10.5 nodes fill 300 nodes
  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::StreamPack;
  FixedSizeDataLoader stream(ds, o, lo);
  lo.strategy = PackingStrategy::PlannedPack;
  FixedSizeDataLoader plan(ds, o, lo);
  stream.startEpoch(0);
  plan.startEpoch(0);
  EXPECT_GT(plan.report().nodeEfficiency(), stream.report().nodeEfficiency());
  EXPECT_GT(plan.report().nodeEfficiency(), 0.97);
  EXPECT_LT(plan.numBatches(), stream.numBatches());
}

TEST(FixedSizeDataLoader, PlannedPackWindows) {
  auto ds = test::randomDataset(700, 17);
  FixedSizeOptions o{300, 900, 30};
  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::PlannedPack;
  lo.packWindow = 128;  // graphs are packed within consecutive windows of the shuffled order
  FixedSizeDataLoader loader(ds, o, lo);
  auto batches = epochBatches(loader, 2);
  std::set<int64_t> seen;
  for (const Batch& b : batches) {
    b.validate();
    EXPECT_EQ(b.numNodes, 300);
    seen.insert(b.graphIndex.begin(), b.graphIndex.end());
  }
  EXPECT_EQ(seen.size(), ds->size());
  // Each window of ~4.5 batches ends with a partly filled one: small windows cost padding.
  EXPECT_GT(loader.report().nodeEfficiency(), 0.8);
}

TEST(FixedSizeDataLoader, OverSizeStrategies) {
  auto ds = test::randomDataset(50, 21, 2, 12);
  Generator g(99);
  ds->push(test::randomGraph(g, 40, 40));  // graph 50 cannot fit
  FixedSizeOptions o{60, 100, 5};          // one graph: at most 56 nodes, 96 edges
  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::StreamPack;
  lo.prefetch = 0;
  int64_t e50 = ds->numEdges(50);
  ASSERT_GT(e50, 96);
  try {
    FixedSizeDataLoader(ds, o, lo).startEpoch(0);
    FAIL() << "expected an over-size error";
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("graph 50"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(e50) + " edges"), std::string::npos) << msg;
    EXPECT_NE(msg.find("96 edges"), std::string::npos) << msg;
  }
  lo.overSize = OverSizeStrategy::Skip;
  FixedSizeDataLoader skip(ds, o, lo);
  skip.startEpoch(0);
  EXPECT_EQ(skip.report().skipped, 1);
  EXPECT_EQ(skip.report().realGraphs, 50);

  for (OverSizeStrategy s : {OverSizeStrategy::TrimEdges, OverSizeStrategy::TrimNodes, OverSizeStrategy::TrimNodesAndEdges}) {
    lo.overSize = s;
    FixedSizeDataLoader trim(ds, o, lo), again(ds, o, lo);
    auto a = epochBatches(trim, 3), b = epochBatches(again, 3);
    EXPECT_EQ(trim.report().trimmed, 1);
    EXPECT_EQ(trim.report().realGraphs, 51);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      a[i].validate();
      EXPECT_TRUE(a[i].edgeIndex.bitEqual(b[i].edgeIndex)) << "trimming must be seeded";
      for (size_t k = 0; k < a[i].graphIndex.size(); ++k)
        if (a[i].graphIndex[k] == 50) {
          int64_t n = a[i].ptr.at(k + 1) - a[i].ptr.at(k), m = a[i].edgePtr.at(k + 1) - a[i].edgePtr.at(k);
          EXPECT_LE(n, 56);
          EXPECT_LE(m, 96);
          if (s == OverSizeStrategy::TrimEdges) {
            EXPECT_EQ(n, 40);
            EXPECT_EQ(m, 96);
          }
        }
    }
  }
}

TEST(FixedSizeDataLoader, CombinedBatchesForTheDevice) {
  auto ds = test::randomDataset(120, 5);
  FixedSizeOptions o = FixedSizeOptions::fromDataset(*ds, 5);
  FixedSizeDataLoader::Options lo;
  lo.seed = 3;
  FixedSizeDataLoader single(ds, o, lo);
  lo.microBatchesPerRequest = 6;  // e.g. deviceIterations 3 × replicas 2
  FixedSizeDataLoader combined(ds, o, lo);
  auto singles = epochBatches(single, 0);
  combined.startEpoch(0);
  size_t k = 0;
  Batch req;
  int64_t requests = 0;
  while (combined.nextRequest(req)) {
    ++requests;
    // The last request holds what is left (the device pads or drops it, and says so).
    const int64_t parts = std::min<int64_t>(6, static_cast<int64_t>(singles.size() - k));
    EXPECT_EQ(req.numNodes, parts * o.numNodes);
    EXPECT_EQ(req.x.dim(0), parts * o.numNodes);
    for (int64_t i = 0; i < parts; ++i, ++k) {
      Batch mb = parts == 1 ? req : microBatch(req, i, parts);
      mb.validate();  // indices are local to the micro-batch
      EXPECT_TRUE(mb.edgeIndex.bitEqual(singles[k].edgeIndex));
      EXPECT_TRUE(mb.x.bitEqual(singles[k].x));
      EXPECT_EQ(mb.graphIndex, singles[k].graphIndex);
    }
  }
  EXPECT_EQ(requests, (static_cast<int64_t>(singles.size()) + 5) / 6);
  EXPECT_EQ(k, singles.size());
}

TEST(DataLoader, VariableSizeBatches) {
  auto ds = test::randomDataset(103, 8);
  DataLoader::Options lo;
  lo.batchSize = 10;
  lo.seed = 5;
  DataLoader loader(ds, lo);
  EXPECT_EQ(loader.numBatches(), 11);
  loader.startEpoch(0);
  std::set<int64_t> seen;
  std::vector<std::vector<int64_t>> first;
  for (Batch b; loader.next(b);) {
    b.validate();
    EXPECT_EQ(b.numRealNodes, b.numNodes);
    EXPECT_EQ(b.numGraphs, b.numRealGraphs);
    seen.insert(b.graphIndex.begin(), b.graphIndex.end());
    first.push_back(b.graphIndex);
  }
  EXPECT_EQ(seen.size(), 103u);
  EXPECT_EQ(first.back().size(), 3u);
  lo.dropLast = true;
  lo.prefetch = 0;
  DataLoader drop(ds, lo);
  EXPECT_EQ(drop.numBatches(), 10);
  drop.startEpoch(0);
  Batch b;
  ASSERT_TRUE(drop.next(b));
  EXPECT_EQ(b.graphIndex, first.front());  // same seed, same order, prefetch or not
}

}  // namespace
}  // namespace gnn
