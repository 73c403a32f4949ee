// HeteroClusterLoader: every node of every type in exactly one batch an epoch, each batch's edges exactly the typed
// edges its nodes induce (checked against every edge of the graph), the batches in the fixed shapes with padding
// rows masked and padded, the input nodes first as the seeds, the same batches for the same seed whatever the thread
// count and prefetch depth, trimming per type counted (or refused), sizes from the loader within the worst case,
// and bad configurations refused.
#include "loaders/HeteroClusterLoader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>

#include "gnn/system/Parallel.h"
#include "loaders/RandomHeteroGraph.h"

namespace gnn {
namespace {

// The random graph with features on papers ([60, 2]: paper v's row is v, -v), labels v % 3 and authors' and
// fields' without.
std::shared_ptr<HeteroGraph> graphWithFeatures(int64_t meanDegree, uint64_t seed) {
  auto g = std::make_shared<HeteroGraph>(test::randomHeteroGraph(meanDegree, seed));
  NodeStore& paper = g->node("paper");
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t v = 0; v < paper.numNodes; ++v) {
    x.insert(x.end(), {static_cast<float>(v), -static_cast<float>(v)});
    y.push_back(v % 3);
  }
  paper.x = Tensor::fromVector(x, {paper.numNodes, 2});
  paper.y = Tensor::fromVector(y, {paper.numNodes});
  return g;
}

std::vector<int64_t> everySecondPaper() {
  std::vector<int64_t> ids;
  for (int64_t v = 0; v < 60; v += 2) ids.push_back(v);
  return ids;
}

std::vector<HeteroBatch> epochBatches(HeteroClusterLoader& loader, int64_t epoch) {
  loader.startEpoch(epoch);
  std::vector<HeteroBatch> out;
  for (HeteroBatch b; loader.next(b);) out.push_back(b);
  return out;
}

bool sameBatch(const HeteroBatch& a, const HeteroBatch& b) {
  bool same = a.inputId == b.inputId && a.numSeeds == b.numSeeds && a.y.bitEqual(b.y) &&
              a.seedMask.bitEqual(b.seedMask) && a.nodes.size() == b.nodes.size() && a.edges.size() == b.edges.size();
  for (size_t t = 0; same && t < a.nodes.size(); ++t)
    same = a.nodes[t].nodeId.bitEqual(b.nodes[t].nodeId) && a.nodes[t].numRealNodes == b.nodes[t].numRealNodes;
  for (size_t e = 0; same && e < a.edges.size(); ++e)
    same = a.edges[e].edgeIndex.bitEqual(b.edges[e].edgeIndex) && a.edges[e].edgeIds == b.edges[e].edgeIds;
  return same;
}

TEST(HeteroClusterLoader, EveryNodeInOneBatchPerEpochInFixedMaskedShapes) {
  auto g = graphWithFeatures(3, 1);
  auto clusters = std::make_shared<HeteroClusterData>(*g, 7, /*seed=*/2);
  HeteroClusterLoader::Options o;
  o.clustersPerBatch = 3;
  o.seed = 5;
  HeteroBatchSizes sizes = HeteroClusterLoader::worstCase(*clusters, o);
  sizes.nodePadValue = -7;
  sizes.labelPadValue = -1;
  const std::vector<int64_t> input = everySecondPaper();
  HeteroClusterLoader loader(g, clusters, "paper", input, o, sizes);
  EXPECT_EQ(loader.numBatches(), 3);  // 3, 3, 1 clusters
  for (int64_t epoch : {0, 1}) {
    std::map<std::string, std::multiset<int64_t>> seen;
    std::multiset<int64_t> seeds;
    for (const HeteroBatch& b : epochBatches(loader, epoch)) {
      ASSERT_NO_THROW(b.validate());
      for (const HeteroBatch::NodeRows& n : b.nodes) {
        EXPECT_EQ(n.numNodes, sizes.numNodes.at(n.type)) << n.type;
        for (int64_t r = 0; r < n.numRealNodes; ++r) seen[n.type].insert(n.nodeId.data<int64_t>()[r]);
        for (int64_t r = n.numRealNodes; r < n.numNodes; ++r) {
          EXPECT_EQ(n.nodesMask.data<uint8_t>()[r], 0);
          if (n.x.defined()) {
            EXPECT_EQ(n.x.data<float>()[r * 2], -7.0f);
          }
        }
      }
      for (const HeteroBatch::EdgeRows& e : b.edges) EXPECT_EQ(e.numEdges, sizes.numEdges.at(e.type)) << e.type.str();
      const HeteroBatch::NodeRows& p = b.node("paper");
      for (int64_t r = 0; r < p.numRealNodes; ++r) {
        const int64_t v = p.nodeId.data<int64_t>()[r];
        EXPECT_EQ(r < b.numSeeds, v % 2 == 0) << "the input papers first, and only they are seeds";
        EXPECT_EQ(b.y.data<int64_t>()[r], v % 3);
        if (r < b.numSeeds) {
          EXPECT_EQ(input[static_cast<size_t>(b.inputId[static_cast<size_t>(r)])], v);
          seeds.insert(v);
        }
      }
      for (int64_t r = p.numRealNodes; r < p.numNodes; ++r) EXPECT_EQ(b.y.data<int64_t>()[r], -1);
    }
    for (const std::string& t : g->nodeTypes()) {
      std::multiset<int64_t> all;
      for (int64_t v = 0; v < g->numNodes(t); ++v) all.insert(v);
      EXPECT_EQ(seen[t], all) << t << ": every node once in epoch " << epoch;
    }
    EXPECT_EQ(seeds, std::multiset<int64_t>(input.begin(), input.end()));
    EXPECT_EQ(loader.report().trimmed, 0) << "the worst case never trims";
  }
  EXPECT_LE(loader.maxSeeds(), sizes.numNodes.at("paper") - 1);
}

TEST(HeteroClusterLoader, EdgesAreExactlyTheInducedTypedEdges) {
  auto g = graphWithFeatures(4, 3);
  auto clusters = std::make_shared<HeteroClusterData>(*g, 6, /*seed=*/1);
  HeteroClusterLoader::Options o;
  o.clustersPerBatch = 2;
  o.seed = 9;
  HeteroClusterLoader loader(g, clusters, "paper", everySecondPaper(), o, HeteroClusterLoader::worstCase(*clusters, o));
  int64_t induced = 0;
  for (const HeteroBatch& b : epochBatches(loader, 2)) {
    for (const HeteroBatch::EdgeRows& e : b.edges) {
      const HeteroBatch::NodeRows& s = b.node(e.type.src);
      const HeteroBatch::NodeRows& d = b.node(e.type.dst);
      std::map<int64_t, int64_t> srcRow, dstRow;  // a node's row in the batch
      for (int64_t r = 0; r < s.numRealNodes; ++r) srcRow[s.nodeId.data<int64_t>()[r]] = r;
      for (int64_t r = 0; r < d.numRealNodes; ++r) dstRow[d.nodeId.data<int64_t>()[r]] = r;
      // Brute force: every edge of the graph of this type with both ends among the batch's nodes, by its column.
      const Tensor& ei = g->edge(e.type).edgeIndex;
      const int64_t E = ei.dim(1);
      std::multiset<std::tuple<int64_t, int64_t, int64_t>> expected, got;
      for (int64_t k = 0; k < E; ++k) {
        const auto su = srcRow.find(ei.data<int64_t>()[k]), dv = dstRow.find(ei.data<int64_t>()[E + k]);
        if (su != srcRow.end() && dv != dstRow.end()) expected.emplace(k, su->second, dv->second);
      }
      for (int64_t k = 0; k < e.numRealEdges; ++k)
        got.emplace(e.edgeIds[static_cast<size_t>(k)], e.edgeIndex.data<int64_t>()[k],
                    e.edgeIndex.data<int64_t>()[e.numEdges + k]);
      EXPECT_EQ(got, expected) << e.type.str();
      induced += static_cast<int64_t>(expected.size());
    }
  }
  EXPECT_GT(induced, 0);
}

TEST(HeteroClusterLoader, SameBatchesForTheSameSeedAnyThreadCountAndPrefetchDepth) {
  auto g = graphWithFeatures(3, 4);
  const std::vector<int64_t> input = everySecondPaper();
  auto run = [&](int threads, int64_t prefetch, int64_t epoch, uint64_t seed) {
    setNumThreads(threads);
    auto clusters = std::make_shared<HeteroClusterData>(*g, 8, /*seed=*/3);
    HeteroClusterLoader::Options o;
    o.clustersPerBatch = 3;
    o.seed = seed;
    o.prefetch = prefetch;
    const HeteroBatchSizes sizes = HeteroClusterLoader::fromLoader(*clusters, "paper", o);
    HeteroClusterLoader loader(g, clusters, "paper", input, o, sizes);
    return std::make_pair(sizes.toString(), epochBatches(loader, epoch));
  };
  const auto a = run(1, 0, 3, 7), b = run(2, 2, 3, 7), c = run(2, 1, 4, 7);
  setNumThreads(2);
  EXPECT_EQ(a.first, b.first) << "the same sizes";
  ASSERT_EQ(a.second.size(), b.second.size());
  for (size_t i = 0; i < a.second.size(); ++i) EXPECT_TRUE(sameBatch(a.second[i], b.second[i])) << "batch " << i;
  bool differs = false;
  for (size_t i = 0; i < a.second.size(); ++i) differs = differs || !sameBatch(a.second[i], c.second[i]);
  EXPECT_TRUE(differs) << "another epoch, another order of clusters";
}

TEST(HeteroClusterLoader, SizesFromTheLoaderHoldEpochZeroWithinTheWorstCase) {
  auto g = graphWithFeatures(3, 5);
  auto clusters = std::make_shared<HeteroClusterData>(*g, 10, /*seed=*/0);
  HeteroClusterLoader::Options o;
  o.clustersPerBatch = 2;
  const HeteroBatchSizes worst = HeteroClusterLoader::worstCase(*clusters, o);
  const HeteroBatchSizes fitted = HeteroClusterLoader::fromLoader(*clusters, "paper", o, 0.0);
  for (const auto& [t, n] : worst.numNodes) EXPECT_LE(fitted.numNodes.at(t), n) << t;
  for (const auto& [e, n] : worst.numEdges) EXPECT_LE(fitted.numEdges.at(e), n) << e.str();
  HeteroClusterLoader loader(g, clusters, "paper", everySecondPaper(), o, fitted);
  epochBatches(loader, 0);
  EXPECT_EQ(loader.report().trimmed, 0);
}

TEST(HeteroClusterLoader, TrimsPerTypeOrRefusesNamingTheType) {
  auto g = graphWithFeatures(5, 6);
  auto clusters = std::make_shared<HeteroClusterData>(*g, 4, /*seed=*/0);
  HeteroClusterLoader::Options o;
  o.clustersPerBatch = 2;
  o.prefetch = 0;
  HeteroBatchSizes small = HeteroClusterLoader::worstCase(*clusters, o);
  small.numNodes["author"] = 6;
  small.numEdges[{"paper", "cites", "paper"}] = 4;
  HeteroClusterLoader loader(g, clusters, "paper", everySecondPaper(), o, small);
  for (const HeteroBatch& b : epochBatches(loader, 0)) {
    ASSERT_NO_THROW(b.validate());
    EXPECT_EQ(b.node("author").numRealNodes, 5);
    EXPECT_LE(b.edge({"paper", "cites", "paper"}).numRealEdges, 3);
  }
  EXPECT_EQ(loader.report().trimmed, 2);
  EXPECT_GT(loader.report().trimmedNodes, 0);
  o.overSize = OverSizeStrategy::Error;
  HeteroClusterLoader strict(g, clusters, "paper", everySecondPaper(), o, small);
  strict.startEpoch(0);
  try {
    strict.collateBatch(0);
    FAIL() << "an over-size batch was not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'author'"), std::string::npos) << e.what();
  }
}

TEST(HeteroClusterLoader, RefusesBadConfigurations) {
  auto g = graphWithFeatures(2, 7);
  auto clusters = std::make_shared<HeteroClusterData>(*g, 4, /*seed=*/0);
  HeteroClusterLoader::Options o;
  o.clustersPerBatch = 5;
  EXPECT_THROW(HeteroClusterLoader::worstCase(*clusters, o), std::invalid_argument) << "more than the clusters";
  o.clustersPerBatch = 2;
  const HeteroBatchSizes sizes = HeteroClusterLoader::worstCase(*clusters, o);
  EXPECT_THROW(HeteroClusterLoader(g, clusters, "paper", {2, 2}, o, sizes), std::invalid_argument) << "twice";
  EXPECT_THROW(HeteroClusterLoader(g, clusters, "paper", {60}, o, sizes), std::invalid_argument) << "out of range";
  EXPECT_THROW(HeteroClusterLoader(g, clusters, "venue", {1}, o, sizes), std::invalid_argument) << "no such type";
  HeteroBatchSizes missing = sizes;
  missing.numNodes.erase("field");
  EXPECT_THROW(HeteroClusterLoader(g, clusters, "paper", {1}, o, missing), std::invalid_argument) << "no size";
  EXPECT_THROW(HeteroClusterData(*g, 200), std::invalid_argument) << "more clusters than nodes";
}

}  // namespace
}  // namespace gnn
