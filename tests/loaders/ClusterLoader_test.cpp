#include "loaders/ClusterLoader.h"

#include <gtest/gtest.h>

#include <set>

#include "gnn/system/Parallel.h"
#include "gnn/system/Random.h"

namespace gnn {
namespace {

// A graph of `blocks` dense communities joined by a few edges, with awkward input on purpose: directed edges
// (only one direction present), duplicates, self-loops and isolated nodes.
Graph communityGraph(int64_t blocks, int64_t perBlock, int64_t isolated, uint64_t seed) {
  Generator g(seed);
  Graph gr;
  gr.numNodes = blocks * perBlock + isolated;
  std::vector<int64_t> src, dst;
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t i = 0; i < perBlock; ++i)
      for (int64_t j = 0; j < perBlock; ++j)
        if (i != j && g.nextUniform() < 0.3) src.push_back(b * perBlock + i), dst.push_back(b * perBlock + j);
  for (int64_t b = 0; b + 1 < blocks; ++b) src.push_back(b * perBlock), dst.push_back((b + 1) * perBlock + 1);
  for (int64_t v = 0; v < 10; ++v) src.push_back(v), dst.push_back(v);          // self-loops
  for (int64_t v = 0; v < 10; ++v) src.push_back(v), dst.push_back((v + 1) % perBlock);  // duplicates
  std::vector<int64_t> ei(src);
  ei.insert(ei.end(), dst.begin(), dst.end());
  int64_t m = static_cast<int64_t>(src.size());
  gr.edgeIndex = Tensor::fromVector(ei, {2, m});
  std::vector<float> x;
  std::vector<int64_t> y;
  std::vector<uint8_t> train;
  for (int64_t v = 0; v < gr.numNodes; ++v) {
    x.push_back(static_cast<float>(v)), x.push_back(1.0f);
    y.push_back(v % 3);
    train.push_back(v % 2);
  }
  gr.x = Tensor::fromVector(x, {gr.numNodes, 2});
  gr.y = Tensor::fromVector(y);
  gr.trainMask = Tensor::fromVector(train);
  std::vector<float> ea;
  for (int64_t j = 0; j < m; ++j) ea.push_back(static_cast<float>(j));
  gr.edgeAttr = Tensor::fromVector(ea, {m, 1});
  return gr;
}

TEST(ClusterData, PartitionsAwkwardInput) {
  Graph g = communityGraph(8, 40, 13, 1);
  ClusterData cd(g, 8, /*seed=*/3);
  EXPECT_EQ(cd.numClusters(), 8);
  int64_t total = 0;
  for (int64_t c = 0; c < 8; ++c) {
    EXPECT_GT(cd.clusterSize(c), 0);
    total += cd.clusterSize(c);
  }
  EXPECT_EQ(total, g.numNodes);
  // Dense communities should mostly end up whole: the cut is small compared with the edges.
  EXPECT_LT(cd.edgeCut(), g.numEdges() / 10);
  // Same seed, same partition.
  EXPECT_EQ(ClusterData(g, 8, 3).clusterOf(), cd.clusterOf());
}

TEST(ClusterData, SameBatchesForAnyThreadCount) {
  Graph g = communityGraph(10, 30, 4, 3);
  std::vector<std::vector<int64_t>> seen[2];
  for (int threads : {1, 2}) {
    setNumThreads(threads);
    auto cd = std::make_shared<ClusterData>(g, 10, 5);
    ClusterLoader::Options lo;
    lo.clustersPerBatch = 3;
    lo.seed = 2;
    ClusterLoader loader(cd, cd->worstCaseOptions(3), lo);
    loader.startEpoch(1);
    for (Batch b; loader.next(b);) seen[threads - 1].push_back(b.nodeIndex);
  }
  setNumThreads(0);
  EXPECT_EQ(seen[0], seen[1]);
}

TEST(ClusterData, SubgraphKeepsEveryEdgeBetweenChosenClusters) {
  Graph g = communityGraph(6, 30, 5, 2);
  ClusterData cd(g, 6, 1);
  std::vector<int64_t> ids;
  Graph s = cd.subgraph({4, 1}, &ids);
  s.validate("subgraph");
  std::set<int64_t> chosen(ids.begin(), ids.end());
  int64_t expected = 0;
  const int64_t m = g.numEdges();
  for (int64_t j = 0; j < m; ++j)
    if (chosen.count(g.edgeIndex.at(j)) && chosen.count(g.edgeIndex.at(m + j))) ++expected;
  EXPECT_EQ(s.numEdges(), expected);
  for (int64_t j = 0; j < s.numEdges(); ++j) {
    int64_t orig = static_cast<int64_t>(s.edgeAttr.at(j));  // edge_attr holds the original edge id
    EXPECT_EQ(ids[s.edgeIndex.at(j)], g.edgeIndex.at(orig));
    EXPECT_EQ(ids[s.edgeIndex.at(s.numEdges() + j)], g.edgeIndex.at(m + orig));
  }
  for (int64_t i = 0; i < s.numNodes; ++i) {
    EXPECT_EQ(s.x.at(2 * i), static_cast<float>(ids[i]));
    EXPECT_EQ(s.y.at(i), ids[i] % 3);
  }
}

TEST(ClusterData, EdgeCases) {
  Graph g;
  g.numNodes = 10;  // no edges at all
  g.edgeIndex = Tensor({2, 0}, DType::I64);
  ClusterData cd(g, 3);
  EXPECT_EQ(cd.clusterSize(0) + cd.clusterSize(1) + cd.clusterSize(2), 10);
  EXPECT_THROW(ClusterData(g, 11), std::invalid_argument);
  ClusterData one(g, 1);
  EXPECT_EQ(one.clusterSize(0), 10);
}

TEST(ClusterLoader, FixedSizeBatchesCoverEveryNodeOnce) {
  Graph g = communityGraph(12, 25, 7, 5);
  auto cd = std::make_shared<ClusterData>(g, 12, 2);
  ClusterLoader::Options lo;
  lo.clustersPerBatch = 3;
  lo.seed = 9;
  FixedSizeOptions o = cd->worstCaseOptions(3);
  ClusterLoader loader(cd, o, lo);
  EXPECT_EQ(loader.numBatches(), 4);
  loader.startEpoch(0);
  std::set<int64_t> seen;
  std::vector<std::vector<int64_t>> nodeOrder;
  for (Batch b; loader.next(b);) {
    b.validate();
    EXPECT_EQ(b.numNodes, o.numNodes);
    EXPECT_EQ(b.numEdges, o.numEdges);
    EXPECT_EQ(b.numGraphs, 2);
    EXPECT_EQ(b.numRealGraphs, 1);
    EXPECT_EQ(b.y.dim(0), o.numNodes);  // node-level labels travel with the nodes
    for (int64_t i = 0; i < b.numRealNodes; ++i) {
      EXPECT_EQ(b.y.at(i), b.nodeIndex[i] % 3);
      EXPECT_EQ(b.trainMask.at(i), b.nodeIndex[i] % 2);
    }
    for (int64_t i = b.numRealNodes; i < b.numNodes; ++i) EXPECT_EQ(b.trainMask.at(i), 0);
    seen.insert(b.nodeIndex.begin(), b.nodeIndex.end());
    nodeOrder.push_back(b.nodeIndex);
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), g.numNodes);
  EXPECT_EQ(loader.report().trimmed, 0);
  // Same seed with prefetch off: same batches.
  lo.prefetch = 0;
  ClusterLoader sync(cd, o, lo);
  sync.startEpoch(0);
  size_t k = 0;
  for (Batch b; sync.next(b); ++k) EXPECT_EQ(b.nodeIndex, nodeOrder[k]);
}

TEST(ClusterLoader, TrimsBatchesAboveTheFixedSize) {
  Graph g = communityGraph(8, 30, 0, 6);
  auto cd = std::make_shared<ClusterData>(g, 8, 2);
  ClusterLoader::Options lo;
  lo.clustersPerBatch = 4;
  FixedSizeOptions o{50, 200, 2};
  ClusterLoader loader(cd, o, lo);
  loader.startEpoch(0);
  for (Batch b; loader.next(b);) {
    b.validate();
    EXPECT_EQ(b.numNodes, 50);
    EXPECT_LE(b.numRealNodes, 49);
    EXPECT_EQ(static_cast<int64_t>(b.nodeIndex.size()), b.numRealNodes);
  }
  EXPECT_EQ(loader.report().trimmed, 2);
  lo.overSize = OverSizeStrategy::Error;
  ClusterLoader strict(cd, o, lo);
  strict.startEpoch(0);
  Batch b;
  EXPECT_THROW(strict.next(b), std::invalid_argument);
  EXPECT_THROW(ClusterLoader(cd, FixedSizeOptions{50, 200, 3}, lo), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
