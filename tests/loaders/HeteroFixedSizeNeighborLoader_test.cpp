// HeteroFixedSizeNeighborLoader: every input node a seed once per epoch in batches of the configured shapes per node
// and edge type (masks on the real rows, padding edges between padding rows, features, ids, labels and edge
// features gathered from the graph), the sampler's subgraph inside, the same batches for any thread count and
// prefetch depth, trimming per type with the counts reported (or refused), sizes from the loader within the worst
// case, padding invariance (to_hetero's GraphSAGE gives the seeds the same outputs and loss with more padding), and bad
// configurations refused.
#include "loaders/HeteroFixedSizeNeighborLoader.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "gnn/nn/models/HeteroBasicGNN.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"
#include "loaders/RandomHeteroGraph.h"

namespace gnn {
namespace {

// The random graph with float features on papers ([60, 3]: paper v's row is v, v + 0.5, -v), labels v % 4 and a
// one-column edge feature on cites (edge k: k); authors and fields have no features.
std::shared_ptr<HeteroGraph> graphWithFeatures(int64_t meanDegree, uint64_t seed) {
  auto g = std::make_shared<HeteroGraph>(test::randomHeteroGraph(meanDegree, seed));
  NodeStore& paper = g->node("paper");
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t v = 0; v < paper.numNodes; ++v) {
    x.insert(x.end(), {static_cast<float>(v), static_cast<float>(v) + 0.5f, -static_cast<float>(v)});
    y.push_back(v % 4);
  }
  paper.x = Tensor::fromVector(x, {paper.numNodes, 3});
  paper.y = Tensor::fromVector(y, {paper.numNodes});
  EdgeStore& cites = g->edge({"paper", "cites", "paper"});
  std::vector<float> attr;
  for (int64_t k = 0; k < cites.numEdges(); ++k) attr.push_back(static_cast<float>(k));
  cites.edgeAttr = Tensor::fromVector(attr, {cites.numEdges(), 1});
  return g;
}

std::vector<int64_t> everyThirdPaper() {
  std::vector<int64_t> ids;
  for (int64_t v = 0; v < 60; v += 3) ids.push_back(v);
  return ids;
}

bool sameBatch(const HeteroBatch& a, const HeteroBatch& b) {
  bool same = a.inputId == b.inputId && a.numSeeds == b.numSeeds && a.y.bitEqual(b.y) &&
              a.seedMask.bitEqual(b.seedMask) && a.nodes.size() == b.nodes.size() && a.edges.size() == b.edges.size();
  for (size_t t = 0; same && t < a.nodes.size(); ++t)
    same = a.nodes[t].nodeId.bitEqual(b.nodes[t].nodeId) && a.nodes[t].x.defined() == b.nodes[t].x.defined() &&
           (!a.nodes[t].x.defined() || a.nodes[t].x.bitEqual(b.nodes[t].x));
  for (size_t e = 0; same && e < a.edges.size(); ++e)
    same = a.edges[e].edgeIndex.bitEqual(b.edges[e].edgeIndex) && a.edges[e].edgeIds == b.edges[e].edgeIds;
  return same;
}

TEST(HeteroFixedSizeNeighborLoader, EveryInputNodeIsASeedOncePerEpochInFixedShapes) {
  auto g = graphWithFeatures(3, 1);
  auto s = std::make_shared<HeteroNeighborSampler>(*g);
  const std::vector<int64_t> input = everyThirdPaper();  // 20 papers
  HeteroFixedSizeNeighborLoader::Options o;
  o.numNeighbors = {3, 2};
  o.batchSize = 8;
  o.seed = 4;
  HeteroFixedSizeNeighborLoader::Sizes sizes = HeteroFixedSizeNeighborLoader::worstCase(*s, "paper", o);
  sizes.nodePadValue = -7;
  sizes.edgePadValue = -9;
  sizes.labelPadValue = -1;
  HeteroFixedSizeNeighborLoader loader(g, s, "paper", input, o, sizes);
  EXPECT_EQ(loader.numBatches(), 3);  // 8, 8, 4
  for (int64_t epoch : {0, 1}) {
    loader.startEpoch(epoch);
    std::multiset<int64_t> seen;
    int64_t batches = 0;
    for (HeteroBatch b; loader.next(b); ++batches) {
      ASSERT_NO_THROW(b.validate());
      EXPECT_EQ(b.numSeeds, batches < 2 ? 8 : 4);
      const HeteroSampledSubgraph sub =
          s->sample("paper", loader.batchSeeds(batches), o.numNeighbors, o.seed, epoch, o.replace);
      ASSERT_EQ(b.nodes.size(), 3u);
      ASSERT_EQ(b.edges.size(), 5u);
      for (size_t t = 0; t < 3; ++t) {
        const HeteroBatch::NodeRows& n = b.nodes[t];
        EXPECT_EQ(n.numNodes, sizes.numNodes.at(n.type)) << n.type;
        ASSERT_EQ(n.numRealNodes, static_cast<int64_t>(sub.nodes[t].size()));
        for (int64_t r = 0; r < n.numNodes; ++r) {
          const int64_t v = n.nodeId.data<int64_t>()[r];
          EXPECT_EQ(v, r < n.numRealNodes ? sub.nodes[t][static_cast<size_t>(r)] : 0);
          if (n.type != "paper") continue;
          const float* x = n.x.data<float>() + 3 * r;
          EXPECT_EQ(x[0], r < n.numRealNodes ? static_cast<float>(v) : -7.0f);
          EXPECT_EQ(x[2], r < n.numRealNodes ? -static_cast<float>(v) : -7.0f);
          EXPECT_EQ(b.y.data<int64_t>()[r], r < n.numRealNodes ? v % 4 : -1);
          if (r < b.numSeeds) {
            EXPECT_EQ(v, input[static_cast<size_t>(b.inputId[static_cast<size_t>(r)])]);
            seen.insert(v);
          }
        }
        EXPECT_EQ(n.x.defined(), n.type == "paper") << "only papers have features";
      }
      for (size_t e = 0; e < 5; ++e) {
        const HeteroBatch::EdgeRows& r = b.edges[e];
        EXPECT_EQ(r.numEdges, sizes.numEdges.at(r.type)) << r.type.str();
        EXPECT_EQ(r.edgeIds, sub.edgeIds[e]);
        EXPECT_TRUE(r.edgeIndex.slice(0, 1).reshape({r.numEdges}).slice(0, r.numRealEdges).bitEqual(
            Tensor::fromVector(sub.src[e])));
        EXPECT_EQ(r.edgeAttr.defined(), r.type.rel == "cites");
        if (r.edgeAttr.defined()) {
          for (int64_t k = 0; k < r.numEdges; ++k)
            EXPECT_EQ(r.edgeAttr.data<float>()[k],
                      k < r.numRealEdges ? static_cast<float>(r.edgeIds[static_cast<size_t>(k)]) : -9.0f);
        }
      }
      EXPECT_EQ(b.edgeIndexDict().size(), 5u);
    }
    EXPECT_EQ(batches, 3);
    EXPECT_EQ(seen, std::multiset<int64_t>(input.begin(), input.end()));
    EXPECT_EQ(loader.report().trimmed, 0) << "the worst case never trims";
    EXPECT_EQ(loader.report().batches, 3);
  }
}

TEST(HeteroFixedSizeNeighborLoader, SameBatchesForAnyThreadCountAndPrefetchDepth) {
  auto g = graphWithFeatures(4, 2);
  auto s = std::make_shared<HeteroNeighborSampler>(*g);
  HeteroFixedSizeNeighborLoader::Options o;
  o.numNeighbors = HeteroNumNeighbors({{{"paper", "cites", "paper"}, {4, 2}}}, std::vector<int64_t>{2, 2});
  o.batchSize = 5;
  o.seed = 11;
  const std::vector<int64_t> input = everyThirdPaper();
  auto epochBatches = [&](int threads, int64_t prefetch, int64_t epoch) {
    setNumThreads(threads);
    o.prefetch = prefetch;
    const auto sizes = HeteroFixedSizeNeighborLoader::fromLoader(*s, "paper", input, o);
    HeteroFixedSizeNeighborLoader loader(g, s, "paper", input, o, sizes);
    loader.startEpoch(epoch);
    std::vector<HeteroBatch> out;
    for (HeteroBatch b; loader.next(b);) out.push_back(b);
    return std::make_pair(sizes.toString(), out);
  };
  const auto a = epochBatches(1, 0, 3), b = epochBatches(2, 2, 3), c = epochBatches(2, 1, 4);
  setNumThreads(2);
  EXPECT_EQ(a.first, b.first) << "the same sizes";
  ASSERT_EQ(a.second.size(), b.second.size());
  for (size_t i = 0; i < a.second.size(); ++i) EXPECT_TRUE(sameBatch(a.second[i], b.second[i])) << "batch " << i;
  EXPECT_NE(a.second[0].inputId, c.second[0].inputId) << "another epoch, another order";
}

TEST(HeteroFixedSizeNeighborLoader, TrimsPerTypeKeepingTheSeedsAndCountsIt) {
  auto g = graphWithFeatures(5, 3);
  auto s = std::make_shared<HeteroNeighborSampler>(*g);
  HeteroFixedSizeNeighborLoader::Options o;
  o.numNeighbors = {4, 4};
  o.batchSize = 6;
  o.shuffle = false;
  o.prefetch = 0;
  const std::vector<int64_t> input = everyThirdPaper();
  HeteroFixedSizeNeighborLoader::Sizes small = HeteroFixedSizeNeighborLoader::worstCase(*s, "paper", o);
  small.numNodes["paper"] = 10;   // 9 real rows: the 6 seeds and 3 more
  small.numNodes["author"] = 5;   // 4 real rows
  small.numEdges[{"paper", "cites", "paper"}] = 8;
  HeteroFixedSizeNeighborLoader loader(g, s, "paper", input, o, small);
  loader.startEpoch(0);
  const HeteroSampledSubgraph full = s->sample("paper", loader.batchSeeds(0), o.numNeighbors, o.seed, 0);
  ASSERT_GT(full.nodes[0].size(), 9u);
  ASSERT_GT(full.nodes[1].size(), 4u);
  HeteroBatch b;
  ASSERT_TRUE(loader.next(b));
  ASSERT_NO_THROW(b.validate());
  EXPECT_EQ(b.numSeeds, 6);
  EXPECT_EQ(b.nodes[0].numRealNodes, 9);
  EXPECT_EQ(b.nodes[1].numRealNodes, 4);
  EXPECT_EQ(b.nodes[2].numRealNodes, static_cast<int64_t>(full.nodes[2].size())) << "fields fit: untouched";
  // The kept rows are the first of the sample, the seeds among them.
  for (int64_t r = 0; r < 9; ++r)
    EXPECT_EQ(b.nodes[0].nodeId.data<int64_t>()[r], full.nodes[0][static_cast<size_t>(r)]);
  EXPECT_LE(b.edge({"paper", "cites", "paper"}).numRealEdges, 7);
  int64_t keptNodes = 0, keptEdges = 0, fullNodes = 0, fullEdges = 0;
  for (size_t t = 0; t < 3; ++t) {
    keptNodes += b.nodes[t].numRealNodes;
    fullNodes += static_cast<int64_t>(full.nodes[t].size());
    int64_t perHop = 0;
    for (int64_t c : b.nodes[t].nodesPerHop) perHop += c;
    EXPECT_EQ(perHop, b.nodes[t].numRealNodes);
  }
  for (size_t e = 0; e < 5; ++e) {
    keptEdges += b.edges[e].numRealEdges;
    fullEdges += static_cast<int64_t>(full.src[e].size());
    int64_t perHop = 0;
    for (int64_t c : b.edges[e].edgesPerHop) perHop += c;
    EXPECT_EQ(perHop, b.edges[e].numRealEdges);
  }
  EXPECT_EQ(loader.report().trimmed, 1);
  EXPECT_EQ(loader.report().trimmedNodes, fullNodes - keptNodes);
  EXPECT_EQ(loader.report().trimmedEdges, fullEdges - keptEdges);
  // Error refuses the batch, naming the type and its room.
  o.overSize = OverSizeStrategy::Error;
  HeteroFixedSizeNeighborLoader strict(g, s, "paper", input, o, small);
  strict.startEpoch(0);
  try {
    strict.next(b);
    FAIL() << "an over-size batch was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nodes of 'author' (room for 4)"), std::string::npos) << e.what();
  }
}

TEST(HeteroFixedSizeNeighborLoader, SizesFromTheLoaderHoldItsBatchesWithinTheWorstCase) {
  auto g = graphWithFeatures(4, 5);
  auto s = std::make_shared<HeteroNeighborSampler>(*g);
  HeteroFixedSizeNeighborLoader::Options o;
  o.numNeighbors = {3, -1};
  o.batchSize = 7;
  o.prefetch = 0;
  const std::vector<int64_t> input = everyThirdPaper();
  const auto bound = HeteroFixedSizeNeighborLoader::worstCase(*s, "paper", o);
  const auto sizes = HeteroFixedSizeNeighborLoader::fromLoader(*s, "paper", input, o, 1000, 0.0);
  bool tighter = false;
  for (const auto& [t, n] : sizes.numNodes) {
    EXPECT_LE(n, bound.numNodes.at(t));
    EXPECT_GE(n, 1);
    tighter = tighter || n < bound.numNodes.at(t);
  }
  for (const auto& [e, n] : sizes.numEdges) EXPECT_LE(n, bound.numEdges.at(e));
  EXPECT_TRUE(tighter) << "sampled sizes below the worst case somewhere";
  HeteroFixedSizeNeighborLoader loader(g, s, "paper", input, o, sizes);
  loader.startEpoch(0);
  int64_t most = 0;
  for (HeteroBatch b; loader.next(b);) most = std::max(most, b.node("author").numRealNodes);
  EXPECT_EQ(loader.report().trimmed, 0) << "epoch 0's batches are the ones measured";
  EXPECT_EQ(most + 1, sizes.numNodes.at("author")) << "the largest batch plus the padding row";
}

TEST(HeteroFixedSizeNeighborLoader, SeedOutputsDoNotChangeWithMorePadding) {
  auto g = graphWithFeatures(4, 8);
  auto s = std::make_shared<HeteroNeighborSampler>(*g);
  HeteroFixedSizeNeighborLoader::Options o;
  o.numNeighbors = {3, 3};
  o.batchSize = 6;
  const std::vector<int64_t> input = everyThirdPaper();
  const auto tight = HeteroFixedSizeNeighborLoader::worstCase(*s, "paper", o);
  auto loose = tight;
  for (auto& [t, n] : loose.numNodes) n += 13;
  for (auto& [e, n] : loose.numEdges) n += 29;
  HeteroFixedSizeNeighborLoader a(g, s, "paper", input, o, tight), b(g, s, "paper", input, o, loose);
  a.startEpoch(1);
  b.startEpoch(1);
  Generator init(3);
  const nlohmann::json args = {{"in_channels", -1}, {"hidden_channels", 8}, {"num_layers", 2}, {"out_channels", 4}};
  HeteroBasicGNN model({{"class", "GraphSAGE"}, {"args", args}}, {g->nodeTypes(), g->edgeTypes()},
                       {{"paper", 3}, {"author", 1}, {"field", 1}}, "sum", init);
  // Featureless types read a value of their node ids (an embedding's stand-in).
  auto xDictOf = [](const HeteroBatch& batch) {
    std::map<std::string, Variable> xDict;
    for (const HeteroBatch::NodeRows& n : batch.nodes)
      xDict.emplace(n.type, Variable(n.x.defined() ? n.x : n.nodeId.to(DType::F32).reshape({n.numNodes, 1})));
    return xDict;
  };
  int64_t batches = 0;
  for (HeteroBatch ba, bb; a.next(ba) && b.next(bb); ++batches) {
    ASSERT_EQ(ba.numSeeds, bb.numSeeds);
    const Tensor ya = model.forward(xDictOf(ba), ba.edgeIndexDict()).at("paper").value();
    const Tensor yb = model.forward(xDictOf(bb), bb.edgeIndexDict()).at("paper").value();
    EXPECT_EQ(yb.dim(0), ya.dim(0) + 13);
    EXPECT_TRUE(ya.slice(0, ba.numSeeds).bitEqual(yb.slice(0, bb.numSeeds))) << "batch " << batches;
    const float la = crossEntropy(Variable(ya), ba.y, ba.seedMask).value().data<float>()[0];
    const float lb = crossEntropy(Variable(yb), bb.y, bb.seedMask).value().data<float>()[0];
    EXPECT_EQ(la, lb);
  }
  EXPECT_EQ(batches, 4);
}

TEST(HeteroFixedSizeNeighborLoader, RefusesBadConfigurationsClearly) {
  auto g = graphWithFeatures(2, 6);
  auto s = std::make_shared<HeteroNeighborSampler>(*g);
  HeteroFixedSizeNeighborLoader::Options o;
  o.numNeighbors = {2};
  o.batchSize = 4;
  const auto sizes = HeteroFixedSizeNeighborLoader::worstCase(*s, "paper", o);
  auto message = [&](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto make = [&](const std::string& type, std::vector<int64_t> in, HeteroFixedSizeNeighborLoader::Options opt,
                  HeteroFixedSizeNeighborLoader::Sizes sz) {
    HeteroFixedSizeNeighborLoader l(g, s, type, std::move(in), opt, sz);
  };
  EXPECT_NE(message([&] { make("venue", {0}, o, sizes); }).find("no node type 'venue'"), std::string::npos);
  EXPECT_NE(message([&] { make("paper", {60}, o, sizes); }).find("input node 60 is outside"), std::string::npos);
  EXPECT_NE(message([&] { make("paper", {1, 1}, o, sizes); }).find("listed twice"), std::string::npos);
  auto noAuthors = sizes;
  noAuthors.numNodes.erase("author");
  EXPECT_NE(message([&] { make("paper", {0}, o, noAuthors); }).find("sizes.numNodes[\"author\"]"), std::string::npos);
  auto fewPapers = sizes;
  fewPapers.numNodes["paper"] = 4;
  EXPECT_NE(message([&] { make("paper", {0, 3, 6, 9}, o, fewPapers); }).find(">= 5"), std::string::npos);
  auto badFan = o;
  badFan.numNeighbors = HeteroNumNeighbors({{{"paper", "cited_by", "paper"}, {2}}}, std::vector<int64_t>{2});
  EXPECT_NE(message([&] { make("paper", {0}, badFan, sizes); }).find("cited_by"), std::string::npos);
  auto skip = o;
  skip.overSize = OverSizeStrategy::Skip;
  EXPECT_NE(message([&] { make("paper", {0}, skip, sizes); }).find("TrimNodesAndEdges or Error"), std::string::npos);
  EXPECT_NE(message([&] { HeteroFixedSizeNeighborLoader::worstCase(*s, "venue", o); }).find("venue"),
            std::string::npos);
}

}  // namespace
}  // namespace gnn
