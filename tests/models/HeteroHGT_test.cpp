// HeteroHGT computes only what the target type's logits read (the relations each layer takes), and its logits and
// gradients are those of the whole model, every relation in every layer as hgt_dblp.py runs it; the typed graph's
// edges split into each relation's own ids; a target no relation reaches is refused. On fixed-size batches (the
// neighbour and the cluster loader's) the seeds' logits do not change with more padding, and a batch holding the whole
// graph gives the whole model's logits (the embeddings looked up at the batch's node ids).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "loaders/HeteroClusterLoader.h"
#include "loaders/HeteroFixedSizeNeighborLoader.h"
#include "loaders/RandomHeteroGraph.h"
#include "models/HeteroHGT.h"

namespace gnn {
namespace {

using EdgeDict = std::vector<std::pair<EdgeType, Tensor>>;

// ogbn-mag's node types and relations after ToUndirected, in the typed graph's order, a few nodes each.
HeteroHGTOptions magShaped() {
  HeteroHGTOptions o;
  o.nodeTypes = {{"author", 7, 0}, {"field_of_study", 4, 0}, {"institution", 3, 0}, {"paper", 9, 5}};
  o.edgeTypes = {{"author", "affiliated_with", "institution"},    {"author", "writes", "paper"},
                 {"paper", "cites", "paper"},                     {"paper", "has_topic", "field_of_study"},
                 {"institution", "rev_affiliated_with", "author"}, {"paper", "rev_writes", "author"},
                 {"field_of_study", "rev_has_topic", "paper"}};
  o.targetType = "paper";
  o.hidden = 8;
  o.heads = 2;
  o.outChannels = 3;
  return o;
}

int64_t countOf(const HeteroHGTOptions& o, const std::string& type) {
  for (const HeteroRGCNNodeType& t : o.nodeTypes)
    if (t.name == type) return t.numNodes;
  return 0;
}

// 12 random edges a relation (duplicates likely), in each relation's own ids.
EdgeDict randomEdges(const HeteroHGTOptions& o, Generator& gen) {
  EdgeDict edges;
  for (const EdgeType& r : o.edgeTypes) {
    const int64_t E = 12;
    std::vector<int64_t> v(2 * E);
    for (int64_t e = 0; e < E; ++e) {
      v[e] = static_cast<int64_t>(gen.nextBelow(static_cast<uint64_t>(countOf(o, r.src))));
      v[E + e] = static_cast<int64_t>(gen.nextBelow(static_cast<uint64_t>(countOf(o, r.dst))));
    }
    edges.emplace_back(r, Tensor::fromVector(v, {2, E}));
  }
  return edges;
}

TEST(HeteroHGT, LayersReadWhatTheTargetNeeds) {
  Generator gen(1);
  HeteroHGT net(magShaped(), gen);
  const std::set<EdgeType> last = {{"author", "writes", "paper"}, {"paper", "cites", "paper"},
                                   {"field_of_study", "rev_has_topic", "paper"}};
  EXPECT_EQ(net.layerRelations(1), last);
  EXPECT_EQ(net.layerRelations(0).size(), 6u);  // all but the one into institutions
  EXPECT_FALSE(net.layerRelations(0).count({"author", "affiliated_with", "institution"}));
}

// The whole model by hand from the model's own weights: every node type's input rows, every relation in every
// layer; the target's logits are the same bits, and every gradient the same (a parameter the model leaves out
// gets none there and none, or zeros, here).
TEST(HeteroHGT, SameLogitsAndGradientsAsTheWholeModel) {
  const HeteroHGTOptions o = magShaped();
  Generator gen(2);
  HeteroHGT net(o, gen);
  const EdgeDict edges = randomEdges(o, gen);
  const Tensor paperX = init::uniform({9, 5}, -1, 1, gen);
  const Tensor w = init::uniform({9, 3}, -1, 1, gen);
  const Variable pruned = net.forward({Tensor(), Tensor(), Tensor(), paperX}, edges);
  sum(mul(pruned, Variable(w))).backward();

  // The whole model: the input rows and the classifier from copies of the model's weights, layers of their own
  // with the model's layers' weights.
  std::map<std::string, Variable> copies;
  for (auto& [name, p] : net.namedParameters()) copies.emplace(name, Variable(p.value().clone(), true));
  std::vector<std::pair<std::string, int64_t>> widths;
  for (const HeteroRGCNNodeType& t : o.nodeTypes) widths.emplace_back(t.name, o.hidden);
  std::map<std::string, Variable> x = {{"author", copies.at("emb.author.weight")},
                                       {"field_of_study", copies.at("emb.field_of_study.weight")},
                                       {"institution", copies.at("emb.institution.weight")}};
  x["paper"] = relu(linear(Variable(paperX), copies.at("lin_dict.paper.weight"), copies.at("lin_dict.paper.bias")));
  std::vector<std::unique_ptr<HGTConv>> convs;
  for (int64_t l = 0; l < o.layers; ++l) {
    convs.push_back(std::make_unique<HGTConv>(widths, o.hidden, o.edgeTypes, gen, o.heads));
    for (auto& [name, p] : convs.back()->namedParameters()) {
      Variable v = p;
      v.value() = copies.at("convs." + std::to_string(l) + "." + name).value();
    }
    x = convs.back()->forward(x, edges);
    ASSERT_EQ(x.size(), 4u);  // every type is reached
  }
  const Variable logits = linear(x.at("paper"), copies.at("lin.weight"), copies.at("lin.bias"));
  EXPECT_TRUE(logits.value().bitEqual(pruned.value()));
  sum(mul(logits, Variable(w))).backward();
  std::map<std::string, Variable> whole = copies;
  for (size_t l = 0; l < convs.size(); ++l)
    for (auto& [name, p] : convs[l]->namedParameters()) whole["convs." + std::to_string(l) + "." + name] = p;
  int left = 0;
  for (auto& [name, p] : net.namedParameters()) {
    const Variable& full = whole.at(name);
    if (!p.hasGrad()) {  // left out: no gradient in the whole model either, or zeros
      ++left;
      if (full.hasGrad()) {
        EXPECT_EQ(full.grad().flat<float>().cwiseAbs().maxCoeff(), 0.0f) << name;
      }
      continue;
    }
    ASSERT_TRUE(full.hasGrad()) << name;
    const double diff = (p.grad().flat<float>() - full.grad().flat<float>()).cwiseAbs().maxCoeff();
    EXPECT_LE(diff, 1e-6 * std::max(1.0f, full.grad().flat<float>().cwiseAbs().maxCoeff())) << name;
  }
  EXPECT_GT(left, 0);  // e.g. the last layer's a_lin of every type but papers
}

// With layerNorm, each layer's rows go through their type's LayerNorm (pyHGT's use_norm), by hand from the model's
// own weights (the norms' weights drawn away from torch's ones and zeros so that they count): the same bits, every
// parameter the logits read gets a gradient, the norms' among them, and the parameters are named as pyHGT's.
TEST(HeteroHGT, LayerNormAfterEachLayer) {
  HeteroHGTOptions o = magShaped();
  o.layerNorm = true;
  Generator gen(5);
  HeteroHGT net(o, gen);
  for (auto& [name, p] : net.namedParameters())
    if (name.rfind("norms.", 0) == 0) p.value() = init::uniform(p.value().shape(), 0.5, 1.5, gen);
  const EdgeDict edges = randomEdges(o, gen);
  const Tensor paperX = init::uniform({9, 5}, -1, 1, gen);
  const Variable logits = net.forward({Tensor(), Tensor(), Tensor(), paperX}, edges);
  sum(logits).backward();

  std::map<std::string, Variable> params;
  for (auto& [name, p] : net.namedParameters()) params.emplace(name, p);
  std::vector<std::pair<std::string, int64_t>> widths;
  for (const HeteroRGCNNodeType& t : o.nodeTypes) widths.emplace_back(t.name, o.hidden);
  std::map<std::string, Variable> x = {{"author", params.at("emb.author.weight")},
                                       {"field_of_study", params.at("emb.field_of_study.weight")},
                                       {"institution", params.at("emb.institution.weight")}};
  x["paper"] = relu(linear(Variable(paperX), params.at("lin_dict.paper.weight"), params.at("lin_dict.paper.bias")));
  for (int64_t l = 0; l < o.layers; ++l) {
    HGTConv conv(widths, o.hidden, o.edgeTypes, gen, o.heads);
    const std::string prefix = std::to_string(l) + ".";
    for (auto& [name, p] : conv.namedParameters()) {
      Variable v = p;
      v.value() = params.at("convs." + prefix + name).value();
    }
    std::vector<std::pair<EdgeType, Tensor>> read;  // the relations the model's layer reads
    for (const auto& [type, e] : edges)
      if (net.layerRelations(static_cast<size_t>(l)).count(type)) read.emplace_back(type, e);
    x = conv.forward(x, read);
    for (auto& [type, rows] : x) {
      LayerNorm norm(o.hidden);
      for (auto& [name, p] : norm.namedParameters()) {
        Variable v = p;
        v.value() = params.at("norms." + prefix + type + "." + name).value();
      }
      rows = norm.forward(rows);
    }
  }
  const Variable byHand = linear(x.at("paper"), params.at("lin.weight"), params.at("lin.bias"));
  EXPECT_TRUE(byHand.value().bitEqual(logits.value()));
  for (const char* name : {"norms.0.author.weight", "norms.0.paper.bias", "norms.1.paper.weight"}) {
    const Variable& p = params.at(name);
    ASSERT_TRUE(p.hasGrad()) << name;
    EXPECT_GT(p.grad().flat<float>().cwiseAbs().maxCoeff(), 0.0f) << name;
  }
}

TEST(HeteroHGT, RelationEdgesSplitsTheTypedGraph) {
  HeteroHGTOptions o;
  o.nodeTypes = {{"author", 2, 0}, {"paper", 3, 4}};  // authors at rows 0-1, papers at 2-4
  o.edgeTypes = {{"author", "writes", "paper"}, {"paper", "cites", "paper"}, {"paper", "rev_writes", "author"}};
  o.targetType = "paper";
  o.outChannels = 2;
  o.hidden = 4;
  Generator gen(3);
  HeteroHGT net(o, gen);
  // Edges of the three relations interleaved, as rows of the typed graph: author 1 writes paper 0 (rows 1 -> 2),
  // paper 2 rev_writes author 1 (4 -> 1), paper 0 cites paper 1 (2 -> 3), author 0 writes paper 0, paper 1 cites
  // paper 2, paper 2 cites paper 0.
  const Tensor edgeIndex = Tensor::fromVector<int64_t>({1, 4, 2, 0, 3, 4, 2, 1, 3, 2, 4, 2}, {2, 6});
  const Tensor edgeType = Tensor::fromVector<int64_t>({0, 2, 1, 0, 1, 1}, {6});
  const EdgeDict split = net.relationEdges(edgeIndex, edgeType);
  ASSERT_EQ(split.size(), 3u);
  auto ids = [](const Tensor& t) { return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel()); };
  EXPECT_EQ(split[0].first.str(), "author__writes__paper");
  EXPECT_EQ(ids(split[0].second), (std::vector<int64_t>{1, 0, 0, 0}));  // edges 0 and 3: [[1, 0], [0, 0]]
  EXPECT_EQ(ids(split[1].second), (std::vector<int64_t>{0, 1, 2, 1, 2, 0}));  // edges 2, 4, 5
  EXPECT_EQ(ids(split[2].second), (std::vector<int64_t>{2, 1}));  // edge 1: paper 2 -> author 1
  EXPECT_THROW(net.relationEdges(edgeIndex, Tensor::fromVector<int64_t>({0, 3, 1, 0, 1, 1}, {6})),
               std::invalid_argument);
}

TEST(HeteroHGT, RefusesATargetNoRelationReaches) {
  HeteroHGTOptions o = magShaped();
  o.edgeTypes = {{"paper", "rev_writes", "author"}, {"author", "affiliated_with", "institution"}};
  Generator gen(4);
  try {
    HeteroHGT net(o, gen);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no relation reaches node type 'paper'"), std::string::npos) << e.what();
  }
}

// The loaders' random graph with 5 features on papers (the other types without) and HGT over its types.
std::shared_ptr<HeteroGraph> featuredRandomGraph(uint64_t seed) {
  auto g = std::make_shared<HeteroGraph>(test::randomHeteroGraph(3, seed));
  NodeStore& paper = g->node("paper");
  Generator gen(seed + 100);
  paper.x = Tensor::empty({paper.numNodes, 5});
  for (int64_t i = 0; i < paper.x.numel(); ++i) paper.x.data<float>()[i] = static_cast<float>(gen.nextBelow(100)) / 50;
  paper.y = Tensor::zeros({paper.numNodes}, DType::I64);
  return g;
}

HeteroHGTOptions optionsFor(const HeteroGraph& g) {
  HeteroHGTOptions o;
  for (const std::string& t : g.nodeTypes())
    o.nodeTypes.push_back({t, g.numNodes(t), g.node(t).x.defined() ? g.node(t).x.dim(1) : 0});
  o.edgeTypes = g.edgeTypes();
  o.targetType = "paper";
  o.hidden = 8;
  o.heads = 2;
  o.outChannels = 3;
  return o;
}

// A batch's seeds' logits: features of featured types, node ids of the others.
Tensor seedLogits(HeteroHGT& net, const HeteroBatch& b) {
  std::vector<Tensor> features, ids;
  for (const HeteroBatch::NodeRows& n : b.nodes) {
    features.push_back(n.x);
    ids.push_back(n.x.defined() ? Tensor() : n.nodeId);
  }
  return net.forward(features, ids, b.edgeIndexDict(), b.numSeeds).value();
}

TEST(HeteroHGT, BatchSeedLogitsDoNotChangeWithMorePadding) {
  auto g = featuredRandomGraph(2);
  Generator init(4);
  HeteroHGT net(optionsFor(*g), init);
  std::vector<int64_t> input;
  for (int64_t v = 0; v < 60; v += 3) input.push_back(v);
  auto loosen = [](HeteroBatchSizes s) {
    for (auto& [t, n] : s.numNodes) n += 11;
    for (auto& [e, n] : s.numEdges) n += 23;
    return s;
  };
  HeteroFixedSizeNeighborLoader::Options no;
  no.numNeighbors = {3, 3};
  no.batchSize = 6;
  auto sampler = std::make_shared<HeteroNeighborSampler>(*g);
  const auto tight = HeteroFixedSizeNeighborLoader::worstCase(*sampler, "paper", no);
  HeteroFixedSizeNeighborLoader na(g, sampler, "paper", input, no, tight), nb(g, sampler, "paper", input, no,
                                                                              loosen(tight));
  HeteroClusterLoader::Options co;
  co.clustersPerBatch = 2;
  auto clusters = std::make_shared<HeteroClusterData>(*g, 6);
  const auto ctight = HeteroClusterLoader::worstCase(*clusters, co);
  HeteroClusterLoader ca(g, clusters, "paper", input, co, ctight), cb(g, clusters, "paper", input, co,
                                                                     loosen(ctight));
  int64_t batches = 0;
  for (auto [a, b] : {std::pair<HeteroBatchLoader*, HeteroBatchLoader*>{&na, &nb}, {&ca, &cb}}) {
    a->startEpoch(1);
    b->startEpoch(1);
    for (HeteroBatch ba, bb; a->next(ba) && b->next(bb); ++batches) {
      ASSERT_EQ(ba.numSeeds, bb.numSeeds);
      EXPECT_TRUE(seedLogits(net, ba).bitEqual(seedLogits(net, bb))) << "batch " << batches;
    }
  }
  EXPECT_EQ(batches, 4 + 3);
}

TEST(HeteroHGT, ABatchOfTheWholeGraphGivesTheWholeModelsLogits) {
  auto g = featuredRandomGraph(3);
  Generator init(5);
  HeteroHGT net(optionsFor(*g), init);
  std::vector<int64_t> input;
  for (int64_t v = 0; v < 60; ++v) input.push_back(v);
  HeteroClusterLoader::Options o;
  o.clustersPerBatch = 4;
  o.prefetch = 0;
  auto clusters = std::make_shared<HeteroClusterData>(*g, 4);
  HeteroClusterLoader loader(g, clusters, "paper", input, o, HeteroClusterLoader::worstCase(*clusters, o));
  loader.startEpoch(0);
  const HeteroBatch b = loader.collateBatch(0);
  ASSERT_EQ(b.numSeeds, 60);
  EdgeDict whole;
  for (const EdgeType& e : g->edgeTypes()) whole.emplace_back(e, g->edge(e).edgeIndex);
  const Tensor all = net.forward({g->node("paper").x, Tensor(), Tensor()}, whole).value();
  const Tensor seeds = seedLogits(net, b);
  for (int64_t r = 0; r < 60; ++r)
    for (int64_t c = 0; c < 3; ++c)
      EXPECT_NEAR(seeds.data<float>()[r * 3 + c], all.data<float>()[b.node("paper").nodeId.data<int64_t>()[r] * 3 + c],
                  1e-5)
          << "paper " << b.node("paper").nodeId.data<int64_t>()[r];
}

}  // namespace
}  // namespace gnn
