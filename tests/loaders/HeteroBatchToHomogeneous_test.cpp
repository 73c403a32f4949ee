// HeteroBatchToHomogeneous: a fixed-size heterogeneous batch as one typed graph (types one after another, each edge
// type's rows shifted by its types' offsets, relations numbered as the whole graph's layout), and R-GCN on it: the
// seeds' logits and the loss bit-identical with more padding, and equal to the full-batch logits of the same papers
// when every neighbour is sampled (the same weights read the same relations in both layouts).
#include "loaders/HeteroBatchToHomogeneous.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "gnn/ops/Ops.h"
#include "loaders/HeteroFixedSizeNeighborLoader.h"
#include "loaders/RandomHeteroGraph.h"
#include "models/HeteroRGCN.h"

namespace gnn {
namespace {

// The random graph with 3 features on papers (paper v: v / 60, 0.5, -v / 30) and labels v % 4; authors and fields
// featureless (embedded).
std::shared_ptr<HeteroGraph> paperGraph(int64_t meanDegree, uint64_t seed) {
  auto g = std::make_shared<HeteroGraph>(test::randomHeteroGraph(meanDegree, seed));
  NodeStore& paper = g->node("paper");
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t v = 0; v < paper.numNodes; ++v) {
    const float f = static_cast<float>(v);
    x.insert(x.end(), {f / 60, 0.5f, -f / 30});
    y.push_back(v % 4);
  }
  paper.x = Tensor::fromVector(x, {paper.numNodes, 3});
  paper.y = Tensor::fromVector(y, {paper.numNodes});
  return g;
}

std::vector<int64_t> everyThirdPaper() {
  std::vector<int64_t> ids;
  for (int64_t v = 0; v < 60; v += 3) ids.push_back(v);
  return ids;
}

HeteroRGCN makeRgcn(const HeteroGraph& g, uint64_t seed) {
  HeteroRGCNOptions o;
  for (const std::string& t : g.nodeTypes()) {
    const NodeStore& n = g.node(t);
    o.nodeTypes.push_back({t, n.numNodes, n.x.defined() ? n.x.dim(1) : 0});
  }
  o.numRelations = static_cast<int64_t>(g.edgeTypes().size());
  o.hidden = 8;
  o.outChannels = 4;
  o.targetType = 0;  // paper
  Generator gen(seed);
  return HeteroRGCN(o, gen);
}

// R-GCN's logits for the target type's first targetRows rows of a batch laid out as the whole graph is.
Variable batchLogits(HeteroRGCN& net, const HeteroBatch& b, const std::vector<EdgeType>& relations,
                     int64_t targetRows) {
  const HomogeneousGraph h = heteroBatchToHomogeneous(b, relations);
  std::vector<Tensor> features, ids;
  for (const HeteroBatch::NodeRows& n : b.nodes) {
    features.push_back(n.x);
    ids.push_back(n.x.defined() ? Tensor() : n.nodeId);
  }
  return net.forward(features, ids, h.edgeIndex, h.edgeType, targetRows);
}

TEST(HeteroBatchToHomogeneous, LaysTypesOutInOrderWithTheWholeGraphsRelationIds) {
  auto g = paperGraph(3, 5);
  auto s = std::make_shared<HeteroNeighborSampler>(*g);
  HeteroFixedSizeNeighborLoader::Options o;
  o.numNeighbors = {3, 2};
  o.batchSize = 5;
  HeteroFixedSizeNeighborLoader loader(g, s, "paper", everyThirdPaper(), o,
                                       HeteroFixedSizeNeighborLoader::worstCase(*s, "paper", o));
  loader.startEpoch(0);
  HeteroBatch b;
  ASSERT_TRUE(loader.next(b));
  // The relations in another order than the batch's: the ids follow the list given, not the batch.
  std::vector<EdgeType> relations = g->edgeTypes();
  std::reverse(relations.begin(), relations.end());
  const HomogeneousGraph h = heteroBatchToHomogeneous(b, relations);
  ASSERT_EQ(h.nodeTypeNames, g->nodeTypes());
  int64_t rows = 0;
  for (size_t t = 0; t < b.nodes.size(); ++t) {
    EXPECT_EQ(h.nodeSlices[t], rows);
    for (int64_t r = 0; r < b.nodes[t].numNodes; ++r) EXPECT_EQ(h.nodeType.data<int64_t>()[rows + r], int64_t(t));
    rows += b.nodes[t].numNodes;
  }
  EXPECT_EQ(h.numNodes, rows);
  const int64_t E = h.edgeIndex.dim(1);
  int64_t at = 0;
  for (const HeteroBatch::EdgeRows& e : b.edges) {
    const int64_t rel = std::find(relations.begin(), relations.end(), e.type) - relations.begin();
    const int64_t* ei = e.edgeIndex.data<int64_t>();
    for (int64_t k = 0; k < e.numEdges; ++k, ++at) {
      EXPECT_EQ(h.edgeIndex.data<int64_t>()[at], ei[k] + h.nodeOffset(e.type.src));
      EXPECT_EQ(h.edgeIndex.data<int64_t>()[E + at], ei[e.numEdges + k] + h.nodeOffset(e.type.dst));
      EXPECT_EQ(h.edgeType.data<int64_t>()[at], rel);
    }
  }
  EXPECT_EQ(at, E);
  relations.pop_back();
  EXPECT_THROW(heteroBatchToHomogeneous(b, relations), std::invalid_argument);
}

TEST(HeteroBatchToHomogeneous, RgcnSeedLogitsAndLossDoNotChangeWithMorePadding) {
  auto g = paperGraph(4, 8);
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
  HeteroRGCN net = makeRgcn(*g, 3);
  net.eval();
  const std::vector<EdgeType> relations = g->edgeTypes();
  int64_t batches = 0;
  for (HeteroBatch ba, bb; a.next(ba) && b.next(bb); ++batches) {
    ASSERT_EQ(ba.numSeeds, bb.numSeeds);
    // A fixed count of target rows (the batch size), the seeds first: the short last batch included.
    const Tensor ya = batchLogits(net, ba, relations, o.batchSize).value();
    const Tensor yb = batchLogits(net, bb, relations, o.batchSize).value();
    ASSERT_EQ(ya.dim(0), o.batchSize);
    EXPECT_TRUE(ya.slice(0, ba.numSeeds).bitEqual(yb.slice(0, bb.numSeeds))) << "batch " << batches;
    const Tensor ma = ba.seedMask.slice(0, o.batchSize).clone(), mb = bb.seedMask.slice(0, o.batchSize).clone();
    const Tensor la = ba.y.slice(0, o.batchSize).clone(), lb = bb.y.slice(0, o.batchSize).clone();
    const float lossA = crossEntropy(Variable(ya), la, ma).value().data<float>()[0];
    const float lossB = crossEntropy(Variable(yb), lb, mb).value().data<float>()[0];
    EXPECT_EQ(lossA, lossB) << "batch " << batches;
  }
  EXPECT_EQ(batches, 4);  // 20 seeds in batches of 6: the last one short
}

TEST(HeteroBatchToHomogeneous, RgcnOnEveryNeighbourGivesTheFullBatchLogitsOfTheSeeds) {
  auto g = paperGraph(3, 11);
  auto s = std::make_shared<HeteroNeighborSampler>(*g);
  HeteroFixedSizeNeighborLoader::Options o;
  o.numNeighbors = {-1, -1};  // two hops for two layers, every neighbour: each seed's whole receptive field
  o.batchSize = 7;
  o.shuffle = false;
  HeteroFixedSizeNeighborLoader loader(g, s, "paper", everyThirdPaper(), o,
                                       HeteroFixedSizeNeighborLoader::worstCase(*s, "paper", o));
  HeteroRGCN net = makeRgcn(*g, 4);
  net.eval();
  ToHomogeneousOptions ho;
  ho.nodeAttrs = std::vector<std::string>{};
  ho.edgeAttrs = std::vector<std::string>{};
  const HomogeneousGraph whole = toHomogeneous(*g, ho);
  std::vector<Tensor> features;
  for (const std::string& t : whole.nodeTypeNames) features.push_back(g->node(t).x);
  const Tensor full = net.forward(features, whole.edgeIndex, whole.edgeType).value();  // the papers' logits
  loader.startEpoch(0);
  int64_t seeds = 0;
  for (HeteroBatch b; loader.next(b);) {
    const Tensor out = batchLogits(net, b, whole.edgeTypeNames, b.numSeeds).value();
    for (int64_t i = 0; i < b.numSeeds; ++i, ++seeds) {
      const int64_t paper = b.node("paper").nodeId.data<int64_t>()[i];
      for (int64_t c = 0; c < 4; ++c)
        EXPECT_NEAR(out.data<float>()[i * 4 + c], full.data<float>()[paper * 4 + c], 1e-5)
            << "paper " << paper << " class " << c;
    }
  }
  EXPECT_EQ(seeds, 20);
}

}  // namespace
}  // namespace gnn
