// ShapeBuckets: every graph in the smallest shape that holds it, shapes within the base, never more padded
// work than the base alone, the least node-pair work over every choice of thresholds where the graph cap
// binds (checked against brute force), deterministic, and the padding it plans is the padding the loaders
// make.
#include "loaders/ShapeBuckets.h"

#include <gtest/gtest.h>

#include <functional>

#include "loaders/FixedSizeDataLoader.h"
#include "loaders/SyntheticGraphs.h"

namespace gnn {
namespace {

// Molecule-like sizes: most of 5 to 25 atoms, one in twenty of up to 51; about 2.1 directed bonds per atom.
std::vector<GraphSize> moleculeSizes(int64_t count, uint64_t seed) {
  Generator g(seed);
  std::vector<GraphSize> out;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = g.nextBelow(20) == 0 ? 26 + static_cast<int64_t>(g.nextBelow(26))
                                           : 5 + static_cast<int64_t>(g.nextBelow(21));
    out.push_back({n, 2 * n + static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n / 4 + 1)))});
  }
  return out;
}

// The base of Graphormer's evaluation: `slots` graph slots, every slot of the largest graph's side.
FixedSizeOptions padBase(const std::vector<GraphSize>& sizes, int64_t slots) {
  int64_t n = 0, e = 0;
  for (const GraphSize& s : sizes) n = std::max(n, s.nodes), e = std::max(e, s.edges);
  FixedSizeOptions o;
  o.numGraphs = slots;
  o.numNodes = o.rowsNeeded(n * (slots - 1), slots - 1);
  o.numEdges = o.rowsNeeded(e * (slots - 1), slots - 1);
  o.maxNodesPerGraph = n;
  return o;
}

TEST(ShapeBuckets, OneBucketIsTheBaseShape) {
  const auto sizes = moleculeSizes(500, 1);
  const FixedSizeOptions base = padBase(sizes, 65);
  const ShapeBuckets b = ShapeBuckets::choose(sizes, base, 1, ShapeCost::NodePairs);
  ASSERT_EQ(b.size(), 1);
  EXPECT_EQ(b.shapes()[0].toString(), base.toString());
  EXPECT_EQ(ShapeBuckets::choose({}, base, 4, ShapeCost::Rows).shapes()[0].toString(), base.toString());
  EXPECT_THROW(ShapeBuckets::choose(sizes, base, 0, ShapeCost::Rows), std::invalid_argument);
}

TEST(ShapeBuckets, EveryGraphInTheSmallestShapeThatHoldsIt) {
  const auto sizes = moleculeSizes(3000, 2);
  for (ShapeCost cost : {ShapeCost::NodePairs, ShapeCost::Rows}) {
    const FixedSizeOptions base = padBase(sizes, 65);
    const ShapeBuckets b = ShapeBuckets::choose(sizes, base, 4, cost);
    ASSERT_GE(b.size(), 2) << b.toString();
    ASSERT_LE(b.size(), 4);
    for (int64_t k = 0; k < b.size(); ++k) {
      const FixedSizeOptions& s = b.shapes()[static_cast<size_t>(k)];
      s.validate();
      EXPECT_LE(s.numNodes, base.numNodes);
      EXPECT_LE(s.numEdges, base.numEdges);
      EXPECT_LE(s.numGraphs, base.numGraphs);
      EXPECT_LE(s.maxGraphNodes(), base.maxGraphNodes());
      if (k > 0) {
        EXPECT_LT(b.shapes()[static_cast<size_t>(k - 1)].maxGraphNodes(), s.maxGraphNodes());
      }
    }
    for (const GraphSize& g : sizes) {
      const int64_t k = b.bucketOf(g.nodes, g.edges);
      ASSERT_GE(k, 0) << g.nodes << " nodes";
      for (int64_t j = 0; j < k; ++j)
        EXPECT_FALSE(b.shapes()[static_cast<size_t>(j)].fitsGraph(g.nodes, g.edges));
    }
    EXPECT_EQ(b.bucketOf(base.maxGraphNodes() + 1, 1), -1);
  }
}

TEST(ShapeBuckets, FarLessNodePairWorkThanOneShapeOfTheLargestGraph) {
  const auto sizes = moleculeSizes(3000, 3);
  const FixedSizeOptions base = padBase(sizes, 65);
  const ShapeBuckets one = ShapeBuckets::single(base);
  const ShapeBuckets b = ShapeBuckets::choose(sizes, base, 4, ShapeCost::NodePairs);
  const double w1 = one.packedWork(sizes, ShapeCost::NodePairs),
               w4 = b.packedWork(sizes, ShapeCost::NodePairs);
  // Sides of 51 for molecules of mostly 5 to 25 atoms: buckets need well under half the pair work.
  EXPECT_LT(w4, 0.45 * w1) << b.toString();
  // More buckets never cost more.
  double previous = w1;
  for (int64_t k = 2; k <= 6; ++k) {
    const double w =
        ShapeBuckets::choose(sizes, base, k, ShapeCost::NodePairs).packedWork(sizes, ShapeCost::NodePairs);
    EXPECT_LE(w, previous) << k << " buckets";
    previous = w;
  }
}

// Where the graph cap binds (Graphormer's batches), the estimate is exact and the dynamic programme finds the
// least work over every set of at most 3 thresholds among the distinct node counts.
TEST(ShapeBuckets, LeastNodePairWorkOfAnyThresholdsWhenTheGraphCapBinds) {
  const auto sizes = moleculeSizes(400, 4);
  const FixedSizeOptions base = padBase(sizes, 17);
  std::vector<int64_t> counts;
  for (const GraphSize& s : sizes) counts.push_back(s.nodes);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  // Brute force: thresholds t1 < t2 < max (or fewer), each bucket at the base's graph slots.
  auto work = [&](const std::vector<int64_t>& thresholds) {
    std::vector<FixedSizeOptions> shapes;
    int64_t lo = 0;
    for (int64_t t : thresholds) {
      int64_t e = 1;
      for (const GraphSize& s : sizes)
        if (s.nodes > lo && s.nodes <= t) e = std::max(e, s.edges);
      shapes.push_back(bucketShape(base, t, e, base.numGraphs));
      lo = t;
    }
    double w = 0;
    for (size_t k = 0; k < shapes.size(); ++k) {
      int64_t c = 0;
      for (const GraphSize& s : sizes)
        if (s.nodes <= shapes[k].maxGraphNodes() && (k == 0 || s.nodes > shapes[k - 1].maxGraphNodes())) ++c;
      w += static_cast<double>((c + base.numGraphs - 2) / (base.numGraphs - 1)) *
           ShapeBuckets::batchCost(shapes[k], ShapeCost::NodePairs);
    }
    return w;
  };
  const int64_t top = counts.back();
  double best = work({top});
  for (size_t i = 0; i + 1 < counts.size(); ++i) {
    best = std::min(best, work({counts[i], top}));
    for (size_t j = i + 1; j + 1 < counts.size(); ++j)
      best = std::min(best, work({counts[i], counts[j], top}));
  }
  const ShapeBuckets b = ShapeBuckets::choose(sizes, base, 3, ShapeCost::NodePairs);
  EXPECT_LE(b.packedWork(sizes, ShapeCost::NodePairs), best) << b.toString();
}

TEST(ShapeBuckets, PackedShapesKeepAtMostTheSingleShapesWork) {
  // A packing base (budgets from the mean, as PlannedPack's training shape): buckets only where they pay.
  auto ds = test::randomDataset(700, 5, 1, 40);
  const FixedSizeOptions base = FixedSizeOptions::forPacking(*ds, 32);
  std::vector<int64_t> all;
  for (int64_t i = 0; i < static_cast<int64_t>(ds->size()); ++i) all.push_back(i);
  const auto sizes = graphSizes(*ds, all);
  const ShapeBuckets b = ShapeBuckets::choose(sizes, base, 4, ShapeCost::Rows);
  EXPECT_LE(b.packedWork(sizes, ShapeCost::Rows),
            ShapeBuckets::single(base).packedWork(sizes, ShapeCost::Rows));
  // Deterministic.
  EXPECT_EQ(ShapeBuckets::choose(sizes, base, 4, ShapeCost::Rows).toString(), b.toString());
}

TEST(ShapeBuckets, PlannedPaddingIsTheLoadersPadding) {
  auto ds = test::graphormerDataset(150, 6, 1, 24, 3);
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < 150; ++i) positions.push_back((i * 7) % 150);
  const FixedSizeOptions base = FixedSizeOptions::fromDataset(*ds, 17);
  const ShapeBuckets b = ShapeBuckets::choose(graphSizes(*ds, positions), base, 3, ShapeCost::NodePairs);
  ASSERT_GE(b.size(), 2);
  PaddingReport fromBatches;
  for (int64_t k = 0; k < b.size(); ++k) {
    std::vector<size_t> members;
    for (int64_t i : positions)
      if (b.bucketOf(ds->numNodes(static_cast<size_t>(i)), ds->numEdges(static_cast<size_t>(i))) == k)
        members.push_back(static_cast<size_t>(i));
    FixedSizeDataLoader::Options lo;
    lo.strategy = PackingStrategy::StreamPack;
    lo.shuffle = false;
    lo.prefetch = 0;
    FixedSizeDataLoader loader(std::make_shared<Subset>(ds, members), b.shapes()[static_cast<size_t>(k)], lo);
    loader.startEpoch(0);
    for (Batch batch; loader.next(batch);) {
      batch.validate();
      fromBatches.add(batch);
    }
  }
  EXPECT_EQ(plannedPadding(ds, positions, b, true).toJson(), fromBatches.toJson());
  EXPECT_GT(fromBatches.totalNodePairs, 0);
  EXPECT_LT(fromBatches.realNodePairs, fromBatches.totalNodePairs);
}

}  // namespace
}  // namespace gnn
