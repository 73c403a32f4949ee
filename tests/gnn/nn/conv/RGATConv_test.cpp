// RGATConv beyond the layer table: attention dropout (training only, the same bits for the same random key, real
// rows untouched by padding under it), finite-difference gradients and 1-vs-2-thread bits on every path (each
// attention mechanism, mode and mod, bases, blocks, edge features; the table runs one configuration of each
// entry), the arguments PyG refuses, clones, and the header's usage.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "ParameterGradCheck.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/RGATConv.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using json = nlohmann::json;

struct TypedGraph {
  Tensor edgeIndex, edgeType;
};

TypedGraph randomTypedGraph(int64_t n, int64_t e, int64_t relations, uint64_t seed) {
  Generator g(seed);
  std::vector<int64_t> ei(static_cast<size_t>(2 * e)), t(static_cast<size_t>(e));
  for (int64_t k = 0; k < e; ++k) {
    ei[static_cast<size_t>(k)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n)));
    ei[static_cast<size_t>(e + k)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n)));
    t[static_cast<size_t>(k)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(relations)));
  }
  return {Tensor::fromVector(ei, {2, e}), Tensor::fromVector(t)};
}

// Every path: each mechanism, mode and mod, bases, blocks, heads averaged, dim 2, edge features, dropout.
std::vector<json> layerArgs(int64_t scale) {
  const json base = {{"in_channels", 4 * scale}, {"out_channels", 3 * scale}, {"num_relations", 3}, {"heads", 2}};
  const json mult = {{"attention_mode", "multiplicative-self-attention"}, {"dim", 2}};
  const json within = {{"attention_mechanism", "within-relation"}};
  std::vector<json> patches = {json::object(), within, mult, {{"concat", false}}, {{"num_bases", 2}},
                               {{"num_blocks", 2}}, {{"edge_dim", 2}}, {{"dropout", 0.3}}};
  for (const char* mod : {"additive", "scaled", "f-additive", "f-scaled"}) {
    patches.push_back({{"mod", mod}});
    json m = mult;
    m.update(within);
    m["mod"] = mod;
    patches.push_back(m);
  }
  json multEdge = mult;
  multEdge["edge_dim"] = 2;
  patches.push_back(multEdge);
  std::vector<json> out;
  for (const json& p : patches) {
    json a = base;
    a.update(p);
    out.push_back(a);
  }
  return out;
}

Variable edgeFeatures(const json& args, int64_t edges, Generator& g, DType dt = DType::F32) {
  if (!args.contains("edge_dim")) return Variable();
  return Variable(init::uniform({edges, args["edge_dim"].get<int64_t>()}, -1, 1, g, dt), true);
}

// The mods' parameters a configuration does not read (PyG registers all five whatever the mod).
bool unread(const json& args, const std::string& name) {
  const std::string mod = args.value("mod", "");
  if (name == "w") return mod != "additive";
  if (name == "l1" || name == "b1" || name == "l2" || name == "b2") return mod != "scaled";
  return false;
}

TEST(RGATConv, GradientsMatchCentralDifferencesOnEveryPath) {
  const TypedGraph g = randomTypedGraph(7, 30, 3, 3);
  for (const json& args : layerArgs(1)) {
    SCOPED_TRACE(args.dump());
    Generator gen(4);
    auto conv = RGATConv::fromPyG(args, gen, DType::F64);
    for (auto& p : conv->parameters()) p.value() = init::uniform(p.shape(), -1, 1, gen, DType::F64);
    Variable x(init::uniform({7, 4}, -1, 1, gen, DType::F64), true);
    const Variable e = edgeFeatures(args, 30, gen, DType::F64);
    std::vector<std::pair<std::string, Variable>> vars = {{"x", x}};
    if (e.defined()) vars.push_back({"edge_attr", e});
    for (auto& [name, p] : conv->namedParameters())
      if (!unread(args, name)) vars.push_back({name, p});
    // Dropout is part of the function: every evaluation draws the same masks from the same key.
    ExecutionContext& ctx = ExecutionContext::current();
    testing::expectParameterGradientsMatch(
        vars,
        [&] {
          ctx.setRandomKey({5, 0, 0});
          return testing::projected(conv->forward(x, g.edgeIndex, g.edgeType, e));
        },
        1 << 20, 0);
  }
}

// Large enough for every parallel loop to split; in training (dropout drawn from the same key on both).
TEST(RGATConv, SameBitsOnOneAndTwoThreadsOnEveryPath) {
  const TypedGraph g = randomTypedGraph(3000, 30000, 3, 7);
  const int before = numThreads();
  for (const json& args : layerArgs(8)) {
    std::vector<Tensor> runs;
    for (int threads : {1, 2}) {
      setNumThreads(threads);
      ExecutionContext::current().setRandomKey({9, 0, 0});
      Generator gen(4), xg(2);
      auto conv = RGATConv::fromPyG(args, gen);
      Variable x(init::uniform({3000, 32}, -1, 1, xg), true);
      const Variable e = edgeFeatures(args, 30000, xg);
      const Variable y = conv->forward(x, g.edgeIndex, g.edgeType, e);
      sum(mul(y, y)).backward();
      runs.push_back(y.value());
      runs.push_back(x.grad());
      if (e.defined()) runs.push_back(e.grad());
      for (auto& p : conv->parameters()) runs.push_back(p.grad());
    }
    const size_t half = runs.size() / 2;
    for (size_t k = 0; k < half; ++k) EXPECT_TRUE(runs[k].bitEqual(runs[half + k])) << args.dump() << " tensor " << k;
  }
  setNumThreads(before);
}

// 6 nodes, edge e of type e % 3 (node 5 isolated).
TypedGraph smallGraph() {
  return {Tensor::fromVector<int64_t>({0, 0, 1, 1, 2, 3, 4, 4, 1, 1, 0, 2, 2, 4, 0, 3}, {2, 8}),
          Tensor::fromVector<int64_t>({0, 1, 2, 0, 1, 2, 0, 1})};
}

TEST(RGATConv, DropoutIsDeterministicPerKeyAndOffInEvaluation) {
  const json args = {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}};
  json dropped = args;
  dropped["dropout"] = 0.5;
  Generator gen(1), g2(1);
  auto layer = RGATConv::fromPyG(dropped, gen);
  auto plain = RGATConv::fromPyG(args, g2);  // the same weights, no dropout
  Generator data(7);
  const Variable x(init::uniform({6, 4}, -1, 1, data));
  const TypedGraph g = smallGraph();
  ExecutionContext& ctx = ExecutionContext::current();
  auto trainingRun = [&](uint64_t seed) {
    ctx.setRandomKey({seed, 0, 0});
    Variable xg(x.value().clone(), true);
    Variable y = layer->forward(xg, g.edgeIndex, g.edgeType);
    sum(mul(y, y)).backward();
    return std::pair{y.value(), xg.grad()};
  };
  const auto a = trainingRun(11), b = trainingRun(11), c = trainingRun(12);
  EXPECT_TRUE(a.first.bitEqual(b.first));
  EXPECT_TRUE(a.second.bitEqual(b.second));
  EXPECT_FALSE(a.first.bitEqual(c.first)) << "another key, another mask";
  const Tensor undropped = plain->forward(x, g.edgeIndex, g.edgeType).value();
  EXPECT_FALSE(a.first.bitEqual(undropped));
  layer->eval();
  ctx.setRandomKey({13, 0, 0});
  EXPECT_TRUE(layer->forward(x, g.edgeIndex, g.edgeType).value().bitEqual(undropped)) << "evaluation ignores dropout";
}

// A fixed-size batch's padding (nodes after the real ones, edges between them after the real edges) leaves the
// real rows' bits alone, in training with attention dropout too, for both mechanisms.
TEST(RGATConv, PaddingDoesNotMoveRealRowsUnderDropout) {
  for (const char* mechanism : {"across-relation", "within-relation"}) {
    SCOPED_TRACE(mechanism);
    Generator gen(5);
    auto layer = RGATConv::fromPyG({{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2},
                                    {"dropout", 0.4}, {"edge_dim", 2}, {"attention_mechanism", mechanism}},
                                   gen);
    Generator data(9);
    const Tensor x = init::uniform({6, 4}, -1, 1, data), e = init::uniform({8, 2}, -1, 1, data);
    Tensor xp = Tensor::full({9, 4}, 1e3), ep = Tensor::full({12, 2}, 1e3);
    std::copy(x.data<float>(), x.data<float>() + 24, xp.data<float>());
    std::copy(e.data<float>(), e.data<float>() + 16, ep.data<float>());
    const TypedGraph g = smallGraph();
    std::vector<int64_t> padded(24), types(12);
    for (int64_t k = 0; k < 12; ++k) {
      padded[k] = k < 8 ? g.edgeIndex.data<int64_t>()[k] : 6 + k % 3;  // pad edges among pad nodes 6, 7, 8
      padded[12 + k] = k < 8 ? g.edgeIndex.data<int64_t>()[8 + k] : 6 + (k + 1) % 3;
      types[k] = k < 8 ? g.edgeType.data<int64_t>()[k] : k % 3;
    }
    ExecutionContext& ctx = ExecutionContext::current();
    ctx.setRandomKey({21, 0, 0});
    const Tensor plain = layer->forward(Variable(x), g.edgeIndex, g.edgeType, Variable(e)).value();
    ctx.setRandomKey({21, 0, 0});
    const Tensor pad = layer->forward(Variable(xp), Tensor::fromVector(padded, {2, 12}), Tensor::fromVector(types),
                                      Variable(ep)).value();
    EXPECT_TRUE(pad.slice(0, 6).bitEqual(plain));
  }
}

void expectRefusal(const std::function<void()>& f, const std::string& words) {
  try {
    f();
    ADD_FAILURE() << "accepted; expected an error with \"" << words << "\"";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(RGATConv, RefusesEdgeTypesOutOfRangeAndWhatPyGRefuses) {
  Generator gen(3);
  auto conv = RGATConv::fromPyG({{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}}, gen);
  const TypedGraph g = smallGraph();
  const Variable x(Tensor::zeros({6, 4}));
  const Tensor badType = Tensor::fromVector<int64_t>({0, 1, 2, 3, 1, 2, 0, 1});
  expectRefusal([&] { conv->forward(x, g.edgeIndex, badType); }, "edge 3 has type 3, not in [0, 3)");
  const Tensor negative = Tensor::fromVector<int64_t>({0, 1, 2, 0, 1, -1, 0, 1});
  expectRefusal([&] { conv->forward(x, g.edgeIndex, negative); }, "edge 5 has type -1");
  expectRefusal([&] { conv->forward(x, g.edgeIndex, Tensor()); }, "edge_type must be int64 [8]");
  expectRefusal([&] { conv->forward(x, g.edgeIndex, g.edgeType, Variable(Tensor::zeros({8, 2}))); },
                "set edge_dim");
  expectRefusal([&] { conv->forward(Variable(Tensor::zeros({6, 5})), g.edgeIndex, g.edgeType); }, "[6, 5]");
  const json base = {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}};
  const std::vector<std::pair<json, std::string>> bad = {
      {{{"dim", 2}}, "Use \"multiplicative-self-attention\""},
      {{{"mod", "scaled"}, {"dropout", 0.1}}, "mod must be None with dropout"},
      {{{"mod", "mean"}}, "mod must be None, \"additive\""},
      {{{"attention_mechanism", "across"}}, "attention mechanism must either be"},
      {{{"attention_mode", "dot"}}, "attention mode must either be"},
      {{{"num_bases", 2}, {"num_blocks", 2}}, "can not apply both"},
      {{{"num_blocks", 3}}, "must be multiple of 'num_blocks'"},
      {{{"aggr", "mean"}}, "aggr"},
  };
  for (const auto& [patch, words] : bad) {
    json a = base;
    a.update(patch);
    expectRefusal([&] { RGATConv::fromPyG(a, gen); }, words);
  }
}

TEST(RGATConv, CloneComputesTheSame) {
  Generator gen(6);
  auto conv = RGATConv::fromPyG({{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2},
                                 {"num_bases", 2}, {"edge_dim", 2}, {"mod", "scaled"}},
                                gen);
  const TypedGraph g = smallGraph();
  Generator data(2);
  const Variable x(init::uniform({6, 4}, -1, 1, data)), e(init::uniform({8, 2}, -1, 1, data));
  std::unique_ptr<Module> copy = conv->clone();
  EXPECT_TRUE(static_cast<RGATConv&>(*copy)
                  .forward(x, g.edgeIndex, g.edgeType, e)
                  .value()
                  .bitEqual(conv->forward(x, g.edgeIndex, g.edgeType, e).value()));
}

// The header's usage, as written there.
TEST(RGATConv, HeaderUsage) {
  Generator gen(1);
  const TypedGraph g = smallGraph();
  const Variable x(init::uniform({6, 16}, -1, 1, gen));
  const Tensor edgeIndex = g.edgeIndex, edgeType = g.edgeType;
  auto conv = RGATConv::fromPyG({{"in_channels", 16}, {"out_channels", 8}, {"num_relations", 3},
                                 {"heads", 2}}, gen);
  Variable h = conv->forward(x, edgeIndex, edgeType);                  // [N, 16] -> [N, 16]
  EXPECT_EQ(h.shape(), (Shape{6, 16}));
}

}  // namespace
}  // namespace gnn
