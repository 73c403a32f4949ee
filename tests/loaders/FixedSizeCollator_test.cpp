#include "loaders/FixedSizeCollator.h"

#include <gtest/gtest.h>

#include "loaders/SyntheticGraphs.h"

namespace gnn {
namespace {

TEST(FixedSizeCollator, ConcatenatesAndPads) {
  auto ds = test::randomDataset(3, 5, 3, 6);
  std::vector<Graph> gs{ds->get(0), ds->get(1), ds->get(2)};
  int64_t n = 0, m = 0;
  for (auto& g : gs) n += g.numNodes, m += g.numEdges();
  FixedSizeOptions o;
  o.numNodes = n + 7;
  o.numEdges = m + 5;
  o.numGraphs = 6;  // 3 padding graphs share 7 nodes (3, 2, 2) and 5 edges (2, 2, 1)
  o.nodePadValue = 9;
  o.edgePadValue = 8;
  o.graphPadValue = -1;
  Batch b = FixedSizeCollator(o).collate(gs, {10, 11, 12});
  b.validate();
  EXPECT_EQ(b.numNodes, o.numNodes);
  EXPECT_EQ(b.numEdges, o.numEdges);
  EXPECT_EQ(b.numGraphs, 6);
  EXPECT_EQ(b.numRealGraphs, 3);
  EXPECT_EQ(b.numRealNodes, n);
  EXPECT_EQ(b.numRealEdges, m);
  EXPECT_EQ(b.graphIndex, (std::vector<int64_t>{10, 11, 12}));

  // Real rows are the graphs' rows with node offsets applied.
  int64_t off = 0, eoff = 0;
  for (int gi = 0; gi < 3; ++gi) {
    const Graph& g = gs[gi];
    for (int64_t i = 0; i < g.numNodes * 3; ++i) EXPECT_EQ(b.x.at(off * 3 + i), g.x.at(i));
    for (int64_t j = 0; j < g.numEdges(); ++j) {
      EXPECT_EQ(b.edgeIndex.at(eoff + j), g.edgeIndex.at(j) + off);
      EXPECT_EQ(b.edgeIndex.at(b.numEdges + eoff + j), g.edgeIndex.at(g.numEdges() + j) + off);
    }
    EXPECT_EQ(b.y.at(gi), g.y.at(0));
    EXPECT_EQ(b.yMask.at(gi), 1);
    off += g.numNodes;
    eoff += g.numEdges();
  }
  // Padding: pad values, self-loops on each pad graph's first node, leftover split evenly.
  const int64_t* p = b.ptr.data<int64_t>();
  const int64_t* ep = b.edgePtr.data<int64_t>();
  EXPECT_EQ(p[4] - p[3], 3);
  EXPECT_EQ(p[5] - p[4], 2);
  EXPECT_EQ(p[6] - p[5], 2);
  EXPECT_EQ(ep[4] - ep[3], 2);
  EXPECT_EQ(ep[5] - ep[4], 2);
  EXPECT_EQ(ep[6] - ep[5], 1);
  for (int64_t i = n * 3; i < b.numNodes * 3; ++i) EXPECT_EQ(b.x.at(i), 9);
  for (int64_t j = m * 2; j < b.numEdges * 2; ++j) EXPECT_EQ(b.edgeAttr.at(j), 8);
  for (int64_t g = 3; g < 6; ++g) {
    EXPECT_EQ(b.y.at(g), -1);
    EXPECT_EQ(b.yMask.at(g), 0);
  }
}

TEST(FixedSizeCollator, RejectsGraphsThatDoNotFit) {
  auto ds = test::randomDataset(2, 5, 5, 5);
  FixedSizeOptions o;
  o.numNodes = 10;  // two graphs of 5 nodes leave no node for the padding graph
  o.numEdges = 1000;
  o.numGraphs = 3;
  EXPECT_THROW(FixedSizeCollator(o).collate({ds->get(0), ds->get(1)}), std::invalid_argument);
  o.numGraphs = 2;  // no slot left for the padding graph
  o.numNodes = 11;
  EXPECT_THROW(FixedSizeCollator(o).collate({ds->get(0), ds->get(1)}), std::invalid_argument);
  o.numGraphs = 1;
  EXPECT_THROW(FixedSizeCollator{o}, std::invalid_argument);
}

TEST(FixedSizeCollator, EmptyGraphsAndConcatenate) {
  Graph empty;  // H2 without hydrogens: no nodes, no edges, no features
  empty.y = Tensor::fromVector<float>({1.5f}, {1});
  auto ds = test::randomDataset(2, 3);
  std::vector<Graph> gs{ds->get(0), empty, ds->get(1)};
  FixedSizeOptions o{64, 256, 4};
  Batch b = FixedSizeCollator(o).collate(gs);
  b.validate();
  EXPECT_EQ(b.ptr.at(1), b.ptr.at(2));
  std::vector<const Graph*> ptrs{&gs[0], &gs[1], &gs[2]};
  Batch c = FixedSizeCollator::concatenate(ptrs);
  c.validate();
  EXPECT_EQ(c.numGraphs, 3);
  EXPECT_EQ(c.numRealNodes, c.numNodes);
}

TEST(FixedSizeOptions, FromDatasetAndPercentile) {
  auto ds = test::randomDataset(200, 2, 1, 20);
  int64_t maxN = 0, maxE = 0;
  for (size_t i = 0; i < ds->size(); ++i) maxN = std::max(maxN, ds->numNodes(i)), maxE = std::max(maxE, ds->numEdges(i));
  auto o = FixedSizeOptions::fromDataset(*ds, 9);
  EXPECT_EQ(o.numGraphs, 9);
  EXPECT_EQ(o.numNodes, maxN * 8 + 1);
  EXPECT_EQ(o.numEdges, maxE * 8 + 1);
  auto p = FixedSizeOptions::fromPercentile(*ds, 9, 90);
  EXPECT_LT(p.options.numNodes, o.numNodes);
  EXPECT_GT(p.aboveSlot, 0);
  EXPECT_LE(p.aboveSlot, 30);
  EXPECT_EQ(p.overSize, 0);
  EXPECT_NE(p.summary.find("exceed a slot"), std::string::npos);
  EXPECT_THROW(FixedSizeOptions::fromDataset(*ds, 1), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
