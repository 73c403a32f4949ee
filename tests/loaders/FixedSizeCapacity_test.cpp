// One capacity rule decides everywhere (FixedSizeOptions::fits / fitsGraph): every padding graph needs one node
// and one edge (its self-loop), so real rows + padding graphs <= fixed rows. Tested at the boundary for the
// options, the collator, the planner (every strategy) and the cluster loader.
#include <gtest/gtest.h>

#include "loaders/ClusterLoader.h"
#include "loaders/FixedSizeCollator.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn {
namespace {

// A graph of exactly n nodes and m edges (edge j: j mod n -> j+1 mod n), float features, one target.
Graph sizedGraph(int64_t n, int64_t m) {
  Graph g;
  g.numNodes = n;
  std::vector<int64_t> ei(static_cast<size_t>(2 * m));
  for (int64_t j = 0; j < m; ++j) {
    ei[j] = j % n;
    ei[m + j] = (j + 1) % n;
  }
  g.edgeIndex = Tensor::fromVector(ei, {2, m});
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  g.x = Tensor::fromVector(x, {n, 1});
  g.y = Tensor::fromVector<float>({1.0f}, {1});
  return g;
}

std::shared_ptr<InMemoryDataset> datasetOf(std::initializer_list<std::pair<int64_t, int64_t>> sizes) {
  auto ds = std::make_shared<InMemoryDataset>();
  for (auto [n, m] : sizes) ds->push(sizedGraph(n, m));
  return ds;
}

TEST(FixedSizeCapacity, OptionsRuleAtTheBoundary) {
  FixedSizeOptions o{20, 30, 4};
  // Two real graphs leave two padding graphs: one node and one edge each.
  EXPECT_EQ(o.rowsNeeded(28, 2), 30);
  EXPECT_TRUE(o.fits(18, 28, 2));    // real edges == numEdges - padGraphs
  EXPECT_FALSE(o.fits(18, 29, 2));
  EXPECT_FALSE(o.fits(18, 30, 2));   // real edges == numEdges: no edge left for the padding graphs
  EXPECT_FALSE(o.fits(19, 28, 2));
  EXPECT_TRUE(o.fits(17, 27, 3));
  EXPECT_FALSE(o.fits(3, 3, 4));     // no graph slot left for padding
  EXPECT_EQ(o.nodeBudget(2), 18);
  EXPECT_EQ(o.edgeBudget(3), 29);
  EXPECT_EQ(o.edgeBudget(1), 27);
  // One graph alone beside numGraphs - 1 padding graphs.
  EXPECT_EQ(o.maxGraphNodes(), 17);
  EXPECT_EQ(o.maxGraphEdges(), 27);
  EXPECT_TRUE(o.fitsGraph(17, 27));
  EXPECT_FALSE(o.fitsGraph(17, 28));
  EXPECT_FALSE(o.fitsGraph(18, 27));
  EXPECT_EQ(o.fitsGraph(17, 27), o.fits(17, 27, 1));
  // The message says which option to raise and to what.
  EXPECT_TRUE(o.misfit(18, 28, 2).empty());
  std::string why = o.misfit(18, 30, 2);
  EXPECT_NE(why.find("raise numEdges to at least 32"), std::string::npos) << why;
  EXPECT_EQ(why.find("numNodes to"), std::string::npos) << why;
  why = o.misfit(19, 30, 2);
  EXPECT_NE(why.find("numNodes to at least 21 and numEdges to at least 32"), std::string::npos) << why;
  why = o.misfit(3, 3, 4);
  EXPECT_NE(why.find("raise numGraphs to at least 5"), std::string::npos) << why;
  // maxNodesPerGraph caps one graph (and sizes node-pair blocks), never the totals.
  o.maxNodesPerGraph = 8;
  EXPECT_EQ(o.maxGraphNodes(), 8);
  EXPECT_TRUE(o.fitsGraph(8, 27));
  EXPECT_FALSE(o.fitsGraph(9, 1));
  EXPECT_TRUE(o.fits(16, 28, 2));
  o.maxNodesPerGraph = 100;  // above the batch's own limit: the batch's limit holds
  EXPECT_EQ(o.maxGraphNodes(), 17);
  o.maxNodesPerGraph = -1;
  EXPECT_THROW(o.validate(), std::invalid_argument);
}

TEST(FixedSizeCapacity, CollatorAgreesWithTheOptions) {
  FixedSizeOptions o{20, 30, 4};
  FixedSizeCollator c(o);
  for (int64_t graphs = 0; graphs <= 4; ++graphs)
    for (int64_t n = 0; n <= 22; ++n)
      for (int64_t e = 0; e <= 32; ++e) ASSERT_EQ(c.fits(n, e, graphs), o.fits(n, e, graphs));
  // Collating two real graphs succeeds exactly when the options say they fit.
  for (int64_t n = 2; n <= 20; ++n)
    for (int64_t e = 24; e <= 31; ++e) {
      std::vector<Graph> gs{sizedGraph(1, e / 2), sizedGraph(n - 1, e - e / 2)};
      bool ok = true;
      try {
        c.collate(gs).validate();
      } catch (const std::invalid_argument&) {
        ok = false;
      }
      ASSERT_EQ(ok, o.fits(n, e, 2)) << n << " nodes, " << e << " edges";
    }
}

TEST(FixedSizeCapacity, CollatorRejectsRealEdgesEqualToNumEdges) {
  // Two graphs with 14 edges each: 28 real edges and two padding graphs.
  std::vector<Graph> gs{sizedGraph(5, 14), sizedGraph(5, 14)};
  FixedSizeOptions o{40, 28, 4};  // realEdges == numEdges: the padding graphs would get no self-loop
  try {
    FixedSizeCollator(o).collate(gs, {3, 9});
    FAIL() << "expected the batch to be rejected";
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("28 edges"), std::string::npos) << msg;
    EXPECT_NE(msg.find("2 padding graph(s)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("raise numEdges to at least 30"), std::string::npos) << msg;
  }
  o.numEdges = 29;
  EXPECT_THROW(FixedSizeCollator(o).collate(gs), std::invalid_argument);
  o.numEdges = 30;  // realEdges == numEdges - padGraphs: fits, one self-loop per padding graph
  Batch b = FixedSizeCollator(o).collate(gs);
  b.validate();
  EXPECT_EQ(b.numRealEdges, 28);
  EXPECT_EQ(b.edgePtr.at(3) - b.edgePtr.at(2), 1);
  EXPECT_EQ(b.edgePtr.at(4) - b.edgePtr.at(3), 1);
  // Nodes likewise.
  o.numNodes = 10;
  EXPECT_NE(std::string([&] {
              try {
                FixedSizeCollator(o).collate(gs);
              } catch (const std::invalid_argument& e) {
                return std::string(e.what());
              }
              return std::string();
            }())
                .find("raise numNodes to at least 12"),
            std::string::npos);
  o.numNodes = 12;
  EXPECT_NO_THROW(FixedSizeCollator(o).collate(gs).validate());
  // A graph above maxNodesPerGraph is refused by name even when the totals fit.
  o.numNodes = 40;
  o.maxNodesPerGraph = 4;
  try {
    FixedSizeCollator(o).collate(gs, {3, 9});
    FAIL() << "expected the graph to be rejected";
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("graph 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("maxNodesPerGraph = 4"), std::string::npos) << msg;
  }
}

class PlannerCapacity : public ::testing::TestWithParam<PackingStrategy> {};

int64_t batchesFor(const std::shared_ptr<InMemoryDataset>& ds, FixedSizeOptions o, PackingStrategy s) {
  FixedSizeDataLoader::Options lo;
  lo.strategy = s;
  lo.shuffle = false;
  lo.prefetch = 0;
  FixedSizeDataLoader loader(ds, o, lo);
  loader.startEpoch(0);
  Batch b;
  int64_t n = 0;
  while (loader.next(b)) {  // every planned batch must collate: planner and collator share the rule
    b.validate();
    ++n;
  }
  EXPECT_EQ(n, loader.numBatches());
  return n;
}

TEST_P(PlannerCapacity, PacksTogetherExactlyWhenTheRuleSaysSo) {
  auto ds = datasetOf({{5, 14}, {5, 14}});
  // Two graphs, 28 edges, two padding graphs left in a batch of 4 graph slots.
  EXPECT_EQ(batchesFor(ds, FixedSizeOptions{40, 30, 4}, GetParam()), 1);  // 28 == numEdges - padGraphs
  EXPECT_EQ(batchesFor(ds, FixedSizeOptions{40, 29, 4}, GetParam()), 2);
  EXPECT_EQ(batchesFor(ds, FixedSizeOptions{40, 28, 4}, GetParam()), 2);  // 28 == numEdges
  // Nodes likewise: 10 real nodes.
  EXPECT_EQ(batchesFor(ds, FixedSizeOptions{12, 100, 4}, GetParam()), 1);
  EXPECT_EQ(batchesFor(ds, FixedSizeOptions{11, 100, 4}, GetParam()), 2);
  EXPECT_EQ(batchesFor(ds, FixedSizeOptions{10, 100, 4}, GetParam()), 2);
}

TEST_P(PlannerCapacity, OverSizeAtMaxGraphEdges) {
  FixedSizeOptions o{100, 30, 4};  // one graph: at most 27 edges
  EXPECT_EQ(batchesFor(datasetOf({{5, 27}}), o, GetParam()), 1);
  try {
    batchesFor(datasetOf({{5, 28}}), o, GetParam());
    FAIL() << "expected an over-size error";
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("graph 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("27 edges"), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Loaders, PlannerCapacity,
                         ::testing::Values(PackingStrategy::PadToMax, PackingStrategy::StreamPack,
                                           PackingStrategy::PlannedPack),
                         [](const auto& info) { return std::string(packingStrategyName(info.param)); });

TEST(FixedSizeCapacity, ClusterLoaderAtTheBoundary) {
  Graph g = sizedGraph(30, 50);
  g.y = Tensor();  // cluster batches take node-level targets only
  auto cd = std::make_shared<ClusterData>(g, 1);
  FixedSizeOptions worst = cd->worstCaseOptions(1);
  EXPECT_EQ(worst.numNodes, 31);
  EXPECT_EQ(worst.numEdges, 51);
  EXPECT_TRUE(worst.fits(30, 50, 1));
  ClusterLoader::Options lo;
  lo.overSize = OverSizeStrategy::Error;
  ClusterLoader exact(cd, worst, lo);  // real edges == numEdges - 1: fits
  exact.startEpoch(0);
  Batch b;
  ASSERT_TRUE(exact.next(b));
  EXPECT_EQ(b.numRealEdges, 50);
  ClusterLoader tooSmall(cd, FixedSizeOptions{31, 50, 2}, lo);  // real edges == numEdges
  tooSmall.startEpoch(0);
  EXPECT_THROW(tooSmall.next(b), std::invalid_argument);
  lo.overSize = OverSizeStrategy::TrimEdges;
  ClusterLoader trimmed(cd, FixedSizeOptions{31, 50, 2}, lo);
  trimmed.startEpoch(0);
  ASSERT_TRUE(trimmed.next(b));
  b.validate();
  EXPECT_EQ(b.numRealEdges, 49);
  EXPECT_EQ(trimmed.report().trimmed, 1);
}

TEST(FixedSizeCapacity, SizingHelpersAreTightUnderTheRule) {
  auto ds = datasetOf({{3, 4}, {7, 12}, {5, 9}});
  FixedSizeOptions o = FixedSizeOptions::fromDataset(*ds, 4);
  EXPECT_TRUE(o.fits(7 * 3, 12 * 3, 3));  // three of the largest graph
  EXPECT_FALSE(o.fits(7 * 3 + 1, 12 * 3, 3));
  EXPECT_FALSE(o.fits(7 * 3, 12 * 3 + 1, 3));
  EXPECT_EQ(o.maxNodesPerGraph, 7);
  FixedSizeOptions p = FixedSizeOptions::forPacking(*ds, 2, 0.0);
  EXPECT_TRUE(p.fitsGraph(7, 12));
  EXPECT_EQ(p.numGraphs, 3);
}

}  // namespace
}  // namespace gnn
