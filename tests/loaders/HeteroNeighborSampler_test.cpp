// HeteroNeighborSampler: PyG 2.3.1's heterogeneous NeighborLoader sampling (pyg-lib's hetero_neighbor_sample):
// a hand-checked case of its per-type order, a brute-force reference of the same rules on random graphs (with
// fan-outs >= every degree the sample is the k-hop in-neighbourhood per type, in PyG's order), the invariants of a
// draw below the degree, fan-outs as a list or per edge type, determinism, the worst-case bound and bad input.
#include "loaders/HeteroNeighborSampler.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "gnn/system/Parallel.h"
#include "loaders/RandomHeteroGraph.h"

namespace gnn {
namespace {

using test::pairs;
using test::randomHeteroGraph;

// PyG's rules with every neighbour taken, written the slow way: per hop, per edge type in the graph's order, each
// destination node of the previous hop (in its type's order) scans the whole edge list for its in-edges.
HeteroSampledSubgraph bruteForce(const HeteroGraph& g, const std::string& input, const std::vector<int64_t>& seeds,
                                 size_t hops) {
  HeteroSampledSubgraph r;
  r.nodeTypes = g.nodeTypes();
  r.edgeTypes = g.edgeTypes();
  const size_t T = r.nodeTypes.size(), R = r.edgeTypes.size();
  r.nodes.resize(T);
  r.src.resize(R);
  r.dst.resize(R);
  r.edgeIds.resize(R);
  r.inputType = r.nodeTypeIndex(input);
  r.nodes[static_cast<size_t>(r.inputType)] = seeds;
  std::vector<size_t> begin(T, 0), end(T);
  for (size_t t = 0; t < T; ++t) end[t] = r.nodes[t].size();
  auto rowOf = [&](size_t t, int64_t v) -> int64_t {
    const auto& ns = r.nodes[t];
    const auto it = std::find(ns.begin(), ns.end(), v);
    return it == ns.end() ? -1 : it - ns.begin();
  };
  for (size_t hop = 0; hop < hops; ++hop) {
    for (size_t e = 0; e < R; ++e) {
      const size_t s = static_cast<size_t>(r.nodeTypeIndex(r.edgeTypes[e].src));
      const size_t d = static_cast<size_t>(r.nodeTypeIndex(r.edgeTypes[e].dst));
      const Tensor& ei = g.edge(r.edgeTypes[e]).edgeIndex;
      const int64_t E = ei.dim(1);
      for (size_t i = begin[d]; i < end[d]; ++i)
        for (int64_t c = 0; c < E; ++c) {
          if (ei.data<int64_t>()[E + c] != r.nodes[d][i]) continue;
          const int64_t u = ei.data<int64_t>()[c];
          int64_t row = rowOf(s, u);
          if (row < 0) {
            row = static_cast<int64_t>(r.nodes[s].size());
            r.nodes[s].push_back(u);
          }
          r.src[e].push_back(row);
          r.dst[e].push_back(static_cast<int64_t>(i));
          r.edgeIds[e].push_back(c);
        }
    }
    for (size_t t = 0; t < T; ++t) {
      begin[t] = end[t];
      end[t] = r.nodes[t].size();
    }
  }
  return r;
}

TEST(HeteroNeighborSampler, HandCheckedPerTypeOrder) {
  // Papers 0..3, authors 0..2. Seeds: papers 1, 0; every neighbour, two hops. Worked out by hand from pyg-lib's
  // loop: hop 0 visits writes (papers 1, 0 find authors 0, then 2 and 1), cites (papers 2, 3 found), rev_writes
  // (no author was a seed: nothing); hop 1 expands papers 2, 3 and authors 0, 2, 1.
  HeteroGraph g;
  g.addNodeType("paper", 4);
  g.addNodeType("author", 3);
  g.addEdgeType({"author", "writes", "paper"}, pairs({2, 0, 1, 2}, {0, 1, 0, 3}));
  g.addEdgeType({"paper", "cites", "paper"}, pairs({3, 2, 0}, {0, 1, 2}));
  g.addEdgeType({"paper", "rev_writes", "author"}, pairs({0, 1, 0, 3}, {2, 0, 1, 2}));
  const HeteroNeighborSampler s(g);
  const HeteroSampledSubgraph sub = s.sample("paper", {1, 0}, HeteroNumNeighbors({-1, -1}), 0, 0);
  using V = std::vector<int64_t>;
  EXPECT_EQ(sub.nodes[0], (V{1, 0, 2, 3}));
  EXPECT_EQ(sub.nodes[1], (V{0, 2, 1}));
  EXPECT_EQ(sub.numSeeds, 2);
  EXPECT_EQ(sub.inputType, 0);
  // writes: hop 0 (author row -> paper row) 0->0, 1->1, 2->1; hop 1 1->3.
  EXPECT_EQ(sub.src[0], (V{0, 1, 2, 1}));
  EXPECT_EQ(sub.dst[0], (V{0, 1, 1, 3}));
  EXPECT_EQ(sub.edgeIds[0], (V{1, 0, 2, 3}));
  EXPECT_EQ(sub.src[1], (V{2, 3, 1}));
  EXPECT_EQ(sub.dst[1], (V{0, 1, 2}));
  EXPECT_EQ(sub.edgeIds[1], (V{1, 0, 2}));
  EXPECT_EQ(sub.src[2], (V{0, 1, 3, 1}));
  EXPECT_EQ(sub.dst[2], (V{0, 1, 1, 2}));
  EXPECT_EQ(sub.edgeIds[2], (V{1, 0, 3, 2}));
  EXPECT_EQ(sub.nodesPerHop[0], (V{2, 2, 0}));
  EXPECT_EQ(sub.nodesPerHop[1], (V{0, 3, 0}));
  EXPECT_EQ(sub.edgesPerHop[0], (V{3, 1}));
  EXPECT_EQ(sub.edgesPerHop[1], (V{2, 1}));
  EXPECT_EQ(sub.edgesPerHop[2], (V{0, 4}));
  EXPECT_TRUE(sub.edgeIndex(1).bitEqual(pairs({2, 3, 1}, {0, 1, 2})));
  // One hop: only the seeds are expanded.
  const HeteroSampledSubgraph one = s.sample("paper", {1, 0}, HeteroNumNeighbors({-1}), 0, 0);
  EXPECT_EQ(one.nodes[0], (V{1, 0, 2, 3}));
  EXPECT_EQ(one.nodes[1], (V{0, 2, 1}));
  EXPECT_TRUE(one.src[2].empty());
}

TEST(HeteroNeighborSampler, EveryNeighbourTakenEqualsTheBruteForceReference) {
  for (uint64_t graphSeed : {1, 2, 3}) {
    const HeteroGraph g = randomHeteroGraph(2, graphSeed);
    const HeteroNeighborSampler s(g);
    const std::vector<int64_t> seeds = {7, 3, 41, 0, 59};
    for (size_t hops : {1, 2, 3}) {
      // -1, or a fan-out above every in-degree: the same (every in-edge, in the graph's order).
      for (int64_t fan : {-1, 100}) {
        const HeteroSampledSubgraph got =
            s.sample("paper", seeds, HeteroNumNeighbors(std::vector<int64_t>(hops, fan)), 5, 1);
        const HeteroSampledSubgraph want = bruteForce(g, "paper", seeds, hops);
        EXPECT_EQ(got.nodes, want.nodes) << "graph " << graphSeed << ", " << hops << " hops";
        EXPECT_EQ(got.src, want.src);
        EXPECT_EQ(got.dst, want.dst);
        EXPECT_EQ(got.edgeIds, want.edgeIds);
      }
    }
  }
}

TEST(HeteroNeighborSampler, DrawsBelowTheDegreeKeepTheRules) {
  const HeteroGraph g = randomHeteroGraph(5, 4);
  const HeteroNeighborSampler s(g);
  const std::vector<int64_t> seeds = {11, 2, 30, 45};
  // Per edge type, with a default for the types not listed (PyG's NumNeighbors(values, default)).
  const HeteroNumNeighbors fan({{{"paper", "cites", "paper"}, {3, 2, 1}}, {{"author", "writes", "paper"}, {2, 0, 4}}},
                               std::vector<int64_t>{4, 1, -1});
  const std::vector<std::vector<int64_t>> f = s.fanouts(fan);
  const HeteroSampledSubgraph sub = s.sample("paper", seeds, fan, 9, 3);
  ASSERT_EQ(sub.nodes[0].size() >= seeds.size(), true);
  EXPECT_EQ(std::vector<int64_t>(sub.nodes[0].begin(), sub.nodes[0].begin() + 4), seeds);
  for (size_t t = 0; t < sub.nodes.size(); ++t) {
    const auto& ns = sub.nodes[t];
    EXPECT_EQ(std::set<int64_t>(ns.begin(), ns.end()).size(), ns.size()) << "a node twice in " << sub.nodeTypes[t];
    int64_t total = 0;
    for (int64_t c : sub.nodesPerHop[t]) total += c;
    EXPECT_EQ(total, static_cast<int64_t>(ns.size()));
  }
  for (size_t e = 0; e < sub.edgeTypes.size(); ++e) {
    const EdgeType& et = sub.edgeTypes[e];
    const size_t st = static_cast<size_t>(sub.nodeTypeIndex(et.src));
    const size_t dt = static_cast<size_t>(sub.nodeTypeIndex(et.dst));
    const Tensor& ei = g.edge(et).edgeIndex;
    const int64_t E = ei.dim(1);
    std::vector<int64_t> indeg(static_cast<size_t>(g.numNodes(et.dst)), 0);
    for (int64_t c = 0; c < E; ++c) ++indeg[static_cast<size_t>(ei.data<int64_t>()[E + c])];
    // Every sampled edge is an edge of this type between the rows' nodes; a destination row of hop h's nodes draws
    // min(fan-out, in-degree) distinct edges in hop h + 1 only.
    std::map<int64_t, std::set<int64_t>> drawn;  // destination row -> edge ids
    size_t hop = 0;
    int64_t hopEnd = sub.edgesPerHop[e][0];
    for (size_t k = 0; k < sub.src[e].size(); ++k) {
      while (static_cast<int64_t>(k) >= hopEnd) hopEnd += sub.edgesPerHop[e][++hop];
      const int64_t id = sub.edgeIds[e][k], row = sub.dst[e][k];
      ASSERT_GE(id, 0);
      ASSERT_LT(id, E);
      EXPECT_EQ(sub.nodes[st][static_cast<size_t>(sub.src[e][k])], ei.data<int64_t>()[id]);
      EXPECT_EQ(sub.nodes[dt][static_cast<size_t>(row)], ei.data<int64_t>()[E + id]);
      int64_t first = 0;  // the row's hop: rows [first, first + nodesPerHop[h]) were added by hop h
      size_t h = 0;
      while (row >= first + sub.nodesPerHop[dt][h]) first += sub.nodesPerHop[dt][h++];
      EXPECT_EQ(hop, h) << "row " << row << " of " << et.dst << " expanded at hop " << hop;
      EXPECT_TRUE(drawn[row].insert(id).second) << "edge " << id << " drawn twice";
    }
    for (const auto& [row, ids] : drawn) {
      size_t h = 0;
      int64_t first = 0;
      while (row >= first + sub.nodesPerHop[dt][h]) first += sub.nodesPerHop[dt][h++];
      const int64_t deg = indeg[static_cast<size_t>(sub.nodes[dt][static_cast<size_t>(row)])];
      const int64_t want = f[e][h] < 0 ? deg : std::min(f[e][h], deg);
      EXPECT_EQ(static_cast<int64_t>(ids.size()), want) << et.str() << " row " << row;
    }
  }
  EXPECT_TRUE(sub.src[0].size() > 0 && sub.src[1].size() > 0);
}

TEST(HeteroNeighborSampler, SameSeedSameBitsOnAnyThreadCount) {
  const HeteroGraph g = randomHeteroGraph(6, 5);
  const HeteroNeighborSampler s(g);
  const HeteroNumNeighbors fan({3, 2});
  auto batches = [&](int threads, uint64_t seed, int64_t epoch) {
    setNumThreads(threads);
    std::vector<HeteroSampledSubgraph> out(12);
    parallelFor(12, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        out[static_cast<size_t>(i)] = s.sample("paper", {i, i + 12, i + 24, i + 36}, fan, seed, epoch);
    });
    return out;
  };
  const auto a = batches(1, 3, 0), b = batches(2, 3, 0), c = batches(2, 4, 0), d = batches(2, 3, 1);
  setNumThreads(2);
  bool seedMoves = false, epochMoves = false;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].nodes, b[i].nodes) << "batch " << i;
    EXPECT_EQ(a[i].src, b[i].src);
    EXPECT_EQ(a[i].dst, b[i].dst);
    EXPECT_EQ(a[i].edgeIds, b[i].edgeIds);
    seedMoves = seedMoves || a[i].edgeIds != c[i].edgeIds;
    epochMoves = epochMoves || a[i].edgeIds != d[i].edgeIds;
  }
  EXPECT_TRUE(seedMoves) << "another seed draws other neighbours";
  EXPECT_TRUE(epochMoves) << "another epoch draws other neighbours";
  // A node's draws do not depend on the batch it falls in: papers 0 and 5 draw the same cites edges alone or
  // together.
  const HeteroNumNeighbors oneHop({{{"paper", "cites", "paper"}, {2}}}, std::vector<int64_t>{0});
  const HeteroSampledSubgraph both = s.sample("paper", {0, 5}, oneHop, 3, 0);
  const HeteroSampledSubgraph alone = s.sample("paper", {5}, oneHop, 3, 0);
  std::vector<int64_t> fromBoth, fromAlone;
  for (size_t k = 0; k < both.dst[1].size(); ++k)
    if (both.dst[1][k] == 1) fromBoth.push_back(both.edgeIds[1][k]);
  for (size_t k = 0; k < alone.dst[1].size(); ++k) fromAlone.push_back(alone.edgeIds[1][k]);
  EXPECT_EQ(fromBoth, fromAlone);
}

TEST(HeteroNeighborSampler, WorstCaseBoundsEverySample) {
  const HeteroGraph g = randomHeteroGraph(4, 6);
  const HeteroNeighborSampler s(g);
  const HeteroNumNeighbors fan({{{"paper", "cites", "paper"}, {3, -1}}}, std::vector<int64_t>{2, 2});
  const auto [nodes, edges] = s.worstCase("paper", 5, fan);
  ASSERT_EQ(nodes.size(), 3u);
  ASSERT_EQ(edges.size(), 5u);
  EXPECT_EQ(nodes[0] >= 5, true);
  for (int64_t b = 0; b < 12; ++b) {
    const HeteroSampledSubgraph sub = s.sample("paper", {b, b + 12, b + 24, b + 36, b + 48}, fan, 1, b);
    for (size_t t = 0; t < 3; ++t) EXPECT_LE(static_cast<int64_t>(sub.nodes[t].size()), nodes[t]);
    for (size_t e = 0; e < 5; ++e) EXPECT_LE(static_cast<int64_t>(sub.src[e].size()), edges[e]);
  }
  // Tight on the first hop: 5 seeds, 2 writes each, so at most 10 authors and 10 writes edges after one hop.
  const auto [n1, e1] = s.worstCase("paper", 5, HeteroNumNeighbors({2}));
  EXPECT_EQ(n1[1], 10);
  EXPECT_EQ(e1[0], 10);
  EXPECT_EQ(e1[2], 0) << "no author is a seed, so rev_writes samples nothing in one hop";
}

TEST(HeteroNeighborSampler, RefusesBadInputClearly) {
  const HeteroGraph g = randomHeteroGraph(2, 7);
  const HeteroNeighborSampler s(g);
  auto message = [&](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const HeteroNumNeighbors two({2, 2});
  EXPECT_NE(message([&] { s.sample("venue", {0}, two, 0, 0); }).find("no node type 'venue'"), std::string::npos);
  EXPECT_NE(message([&] { s.sample("paper", {60}, two, 0, 0); }).find("seed 60 is outside"), std::string::npos);
  EXPECT_NE(message([&] { s.sample("paper", {-1}, two, 0, 0); }).find("seed -1 is outside"), std::string::npos);
  EXPECT_NE(message([&] { s.sample("paper", {3, 3}, two, 0, 0); }).find("appears twice"), std::string::npos);
  const HeteroNumNeighbors unknown({{{"paper", "cited_by", "paper"}, {2}}}, std::vector<int64_t>{2});
  EXPECT_NE(message([&] { s.sample("paper", {0}, unknown, 0, 0); }).find("(paper, cited_by, paper)"),
            std::string::npos);
  const HeteroNumNeighbors missing({{{"paper", "cites", "paper"}, {2}}});
  EXPECT_NE(message([&] { s.sample("paper", {0}, missing, 0, 0); }).find("missing number of neighbors for edge type"),
            std::string::npos);
  const HeteroNumNeighbors uneven({{{"paper", "cites", "paper"}, {2}}}, std::vector<int64_t>{2, 2});
  EXPECT_NE(message([&] { s.sample("paper", {0}, uneven, 0, 0); }).find("number of hops"), std::string::npos);
  EXPECT_NE(message([&] { s.sample("paper", {0}, HeteroNumNeighbors({2, -2}), 0, 0); }).find("got -2"),
            std::string::npos);
  // A failed call leaves the sampler's scratch clean: the next batch is as from a fresh sampler.
  const HeteroSampledSubgraph after = s.sample("paper", {3}, two, 0, 0);
  const HeteroSampledSubgraph fresh = HeteroNeighborSampler(g).sample("paper", {3}, two, 0, 0);
  EXPECT_EQ(after.nodes, fresh.nodes);
  // An edge type whose edges point past a type's count is refused when indexed (HeteroGraph::validate).
  HeteroGraph bad;
  bad.addNodeType("a", 2);
  bad.addEdgeType({"a", "to", "a"}, pairs({0}, {2}));
  EXPECT_THROW(HeteroNeighborSampler{bad}, std::invalid_argument);
}

}  // namespace
}  // namespace gnn
