// NeighborSampler: PyG NeighborLoader's sampling semantics (seeds first, each hop's fan-out over incoming
// neighbours, without replacement, -1 = all, every node expanded once, directed subgraph of the sampled edges),
// draws keyed by (seed, epoch, node), uniform over a node's neighbours, the worst-case bound, and bad input.
#include "loaders/NeighborSampler.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>

#include "gnn/system/Random.h"

namespace gnn {
namespace {

struct EdgeList {
  int64_t n = 0;
  std::vector<int64_t> src, dst;
  Tensor tensor() const {
    std::vector<int64_t> ei(src);
    ei.insert(ei.end(), dst.begin(), dst.end());
    return Tensor::fromVector(ei, {2, static_cast<int64_t>(src.size())});
  }
};

// A random directed graph with in-degrees from 0 to about 2 * meanDegree, duplicates and self-loops included.
EdgeList randomEdges(int64_t n, int64_t meanDegree, uint64_t seed) {
  Generator g(seed);
  EdgeList el;
  el.n = n;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t deg = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(2 * meanDegree + 1)));
    for (int64_t j = 0; j < deg; ++j) {
      el.src.push_back(static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n))));
      el.dst.push_back(v);
    }
  }
  return el;
}

TEST(NeighborSampler, FollowsNeighborLoadersSemantics) {
  const EdgeList el = randomEdges(300, 6, 1);
  const Tensor ei = el.tensor();
  NeighborSampler s(ei, el.n);
  std::vector<int64_t> indeg(static_cast<size_t>(el.n), 0);
  for (int64_t d : el.dst) ++indeg[static_cast<size_t>(d)];
  const std::vector<int64_t> seeds = {5, 17, 3, 250, 99};
  const std::vector<int64_t> fan = {4, -1, 2};
  const SampledSubgraph sub = s.sample(seeds, fan, /*seed=*/7, /*epoch=*/2);
  // Seeds first, in their order; every node once.
  ASSERT_GE(sub.nodes.size(), seeds.size());
  for (size_t i = 0; i < seeds.size(); ++i) EXPECT_EQ(sub.nodes[i], seeds[i]);
  EXPECT_EQ(std::set<int64_t>(sub.nodes.begin(), sub.nodes.end()).size(), sub.nodes.size());
  EXPECT_EQ(sub.numSeeds, 5);
  ASSERT_EQ(sub.nodesPerHop.size(), 4u);
  ASSERT_EQ(sub.edgesPerHop.size(), 3u);
  int64_t total = 0;
  for (int64_t c : sub.nodesPerHop) total += c;
  EXPECT_EQ(total, static_cast<int64_t>(sub.nodes.size()));
  // Every edge is a real edge, neighbour -> node, in local ids.
  ASSERT_EQ(sub.src.size(), sub.dst.size());
  ASSERT_EQ(sub.src.size(), sub.edgeIds.size());
  std::map<int64_t, std::vector<int64_t>> byTarget;  // local target -> edge ids sampled for it
  for (size_t e = 0; e < sub.src.size(); ++e) {
    const int64_t id = sub.edgeIds[e];
    EXPECT_EQ(sub.nodes[static_cast<size_t>(sub.src[e])], el.src[static_cast<size_t>(id)]);
    EXPECT_EQ(sub.nodes[static_cast<size_t>(sub.dst[e])], el.dst[static_cast<size_t>(id)]);
    byTarget[sub.dst[e]].push_back(id);
  }
  // Node t of hop h (the seeds are hop 0) is expanded by hop h + 1 with min(fan, in-degree) distinct edges; the
  // last hop's nodes are not expanded.
  int64_t begin = 0;
  for (size_t h = 0; h < sub.nodesPerHop.size(); ++h) {
    const int64_t end = begin + sub.nodesPerHop[h];
    for (int64_t t = begin; t < end; ++t) {
      const int64_t v = sub.nodes[static_cast<size_t>(t)];
      const auto it = byTarget.find(t);
      const int64_t got = it == byTarget.end() ? 0 : static_cast<int64_t>(it->second.size());
      if (h == fan.size()) {
        EXPECT_EQ(got, 0) << "node of the last hop expanded";
        continue;
      }
      const int64_t want = fan[h] < 0 ? indeg[static_cast<size_t>(v)] : std::min(fan[h], indeg[static_cast<size_t>(v)]);
      EXPECT_EQ(got, want) << "node " << v << " at hop " << h;
      if (got > 0) {
        EXPECT_EQ(std::set<int64_t>(it->second.begin(), it->second.end()).size(), it->second.size());
      }
    }
    begin = end;
  }
  // Edges grouped by target in expansion order.
  for (size_t e = 1; e < sub.dst.size(); ++e) EXPECT_LE(sub.dst[e - 1], sub.dst[e]);
}

TEST(NeighborSampler, DrawsAreKeyedBySeedEpochAndNode) {
  const EdgeList el = randomEdges(200, 10, 2);
  NeighborSampler s(el.tensor(), el.n);
  auto firstHop = [&](const std::vector<int64_t>& seeds, int64_t fan, uint64_t seed, int64_t epoch, int64_t node) {
    const SampledSubgraph sub = s.sample(seeds, {fan}, seed, epoch);
    std::vector<int64_t> ids;
    for (size_t e = 0; e < sub.src.size(); ++e)
      if (sub.nodes[static_cast<size_t>(sub.dst[e])] == node) ids.push_back(sub.edgeIds[e]);
    return ids;
  };
  // The same node's draws in another batch, in another place of the batch: the same.
  const auto a = firstHop({11}, 3, 5, 1, 11), b = firstHop({40, 7, 11, 3}, 3, 5, 1, 11);
  EXPECT_EQ(a, b);
  // A larger fan-out extends the draws: the first 3 of 6 are the 3.
  const auto c = firstHop({11}, 6, 5, 1, 11);
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(std::vector<int64_t>(c.begin(), c.begin() + 3), a);
  // Another epoch or seed draws again (over many nodes at least one differs).
  int differ = 0;
  for (int64_t v = 0; v < 50; ++v) differ += firstHop({v}, 3, 5, 1, v) != firstHop({v}, 3, 5, 2, v);
  EXPECT_GT(differ, 10);
  differ = 0;
  for (int64_t v = 0; v < 50; ++v) differ += firstHop({v}, 3, 5, 1, v) != firstHop({v}, 3, 6, 1, v);
  EXPECT_GT(differ, 10);
}

TEST(NeighborSampler, DrawsEachNeighbourAsOftenWithoutReplacementAndRepeatsWithIt) {
  EdgeList el;
  el.n = 11;
  for (int64_t u = 1; u <= 10; ++u) el.src.push_back(u), el.dst.push_back(0);  // node 0: 10 in-neighbours
  NeighborSampler s(el.tensor(), el.n);
  std::vector<int64_t> count(11, 0);
  const int64_t epochs = 3000;
  int repeats = 0;
  for (int64_t ep = 0; ep < epochs; ++ep) {
    const SampledSubgraph sub = s.sample({0}, {3}, 1, ep);
    ASSERT_EQ(sub.src.size(), 3u);
    for (int64_t l : sub.src) ++count[static_cast<size_t>(sub.nodes[static_cast<size_t>(l)])];
    const SampledSubgraph rep = s.sample({0}, {3}, 1, ep, /*replace=*/true);
    ASSERT_EQ(rep.src.size(), 3u);
    repeats += std::set<int64_t>(rep.edgeIds.begin(), rep.edgeIds.end()).size() < 3;
  }
  // Each neighbour expected 900 times (3 of 10 per epoch); 4 standard deviations is about 100.
  for (int64_t u = 1; u <= 10; ++u) EXPECT_NEAR(static_cast<double>(count[static_cast<size_t>(u)]), 900.0, 110.0) << u;
  // With replacement a neighbour repeats in 28% of the epochs (1 - 10 * 9 * 8 / 1000).
  EXPECT_NEAR(repeats / static_cast<double>(epochs), 0.28, 0.04);
}

TEST(NeighborSampler, WorstCaseBoundsEverySample) {
  const EdgeList el = randomEdges(500, 8, 3);
  NeighborSampler s(el.tensor(), el.n);
  const std::vector<int64_t> fan = {5, 3};
  const auto [maxNodes, maxEdges] = s.worstCase(20, fan);
  EXPECT_EQ(maxNodes, 20 + 100 + 300);
  EXPECT_EQ(maxEdges, 100 + 300);
  for (int64_t ep = 0; ep < 30; ++ep) {
    std::vector<int64_t> seeds;
    for (int64_t i = 0; i < 20; ++i) seeds.push_back((ep * 20 + i) % el.n);
    const SampledSubgraph sub = s.sample(seeds, fan, 0, ep);
    EXPECT_LE(static_cast<int64_t>(sub.nodes.size()), maxNodes);
    EXPECT_LE(static_cast<int64_t>(sub.src.size()), maxEdges);
  }
  // -1 counts the largest in-degree; counts saturate at the graph's size.
  EXPECT_EQ(s.worstCase(1, {-1}).second, s.maxInDegree());
  EXPECT_EQ(s.worstCase(400, {-1, -1, -1}).first, el.n);
}

TEST(NeighborSampler, RefusesBadInput) {
  EdgeList el;
  el.n = 3;
  el.src = {0, 1, 5};
  el.dst = {1, 2, 0};
  EXPECT_THROW(NeighborSampler(el.tensor(), 3), std::invalid_argument);  // edge 2 names node 5
  el.src = {0, 1, 2};
  NeighborSampler s(el.tensor(), 3);
  EXPECT_THROW(s.sample({0, 0}, {2}, 0, 0), std::invalid_argument);  // a seed twice
  EXPECT_THROW(s.sample({3}, {2}, 0, 0), std::invalid_argument);     // outside the graph
  EXPECT_THROW(s.sample({1}, {-2}, 0, 0), std::invalid_argument);    // fan-out below -1
  // A refused batch leaves nothing behind: the next one is sampled as on a fresh sampler.
  const SampledSubgraph ok = s.sample({0, 1}, {-1}, 0, 0);
  EXPECT_EQ(ok.nodes, (std::vector<int64_t>{0, 1, 2}));
}

}  // namespace
}  // namespace gnn
