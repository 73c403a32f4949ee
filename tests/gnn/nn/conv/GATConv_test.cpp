// GATConv and GATv2Conv beyond the layer table: attention dropout (training only, the same bits for the same
// random key), the graph's own self-loops ignored when loops are added, PyG arguments refused, clones, and the
// header's usage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "gnn/nn/Init.h"
#include "gnn/nn/conv/GATConv.h"
#include "gnn/nn/conv/GATv2Conv.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "nn/SparseInputCheck.h"

namespace gnn {
namespace {

using json = nlohmann::json;

// 6 nodes: a duplicate edge, a self-loop on node 2, node 5 isolated.
Tensor graph() { return Tensor::fromVector<int64_t>({0, 0, 1, 1, 2, 3, 4, 4, 1, 1, 0, 2, 2, 4, 0, 3}, {2, 8}); }

// The same graph with two more self-loops (on 0 and on 3), appended.
Tensor graphWithLoops() {
  return Tensor::fromVector<int64_t>({0, 0, 1, 1, 2, 3, 4, 4, 0, 3, 1, 1, 0, 2, 2, 4, 0, 3, 0, 3}, {2, 10});
}

std::unique_ptr<Module> make(const std::string& cls, json args, Generator& gen) {
  if (cls == "GATConv") return GATConv::fromPyG(args, gen);
  return GATv2Conv::fromPyG(args, gen);
}

Variable run(const std::string& cls, Module& m, const Variable& x, const Tensor& ei, const Variable& e = Variable()) {
  if (cls == "GATConv") return static_cast<GATConv&>(m).forward(x, ei, e);
  return static_cast<GATv2Conv&>(m).forward(x, ei, e);
}

double maxAbsDiff(const Tensor& a, const Tensor& b) {
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    d = std::max(d, std::abs(static_cast<double>(a.data<float>()[i]) - static_cast<double>(b.data<float>()[i])));
  return d;
}

class GatLayers : public ::testing::TestWithParam<std::string> {};

TEST_P(GatLayers, DropoutIsDeterministicPerKeyAndOffInEvaluation) {
  const std::string cls = GetParam();
  Generator gen(1);
  auto layer = make(cls, {{"in_channels", 4}, {"out_channels", 3}, {"heads", 2}, {"dropout", 0.5}}, gen);
  Generator g2(1);
  auto plain = make(cls, {{"in_channels", 4}, {"out_channels", 3}, {"heads", 2}}, g2);  // same weights, no dropout
  Generator data(7);
  const Variable x(init::uniform({6, 4}, -1, 1, data));
  ExecutionContext& ctx = ExecutionContext::current();
  auto trainingRun = [&](uint64_t seed) {
    ctx.setRandomKey({seed, 0, 0});
    Variable xg(x.value().clone(), true);
    Variable y = run(cls, *layer, xg, graph());
    sum(mul(y, y)).backward();
    return std::pair{y.value(), xg.grad()};
  };
  const auto a = trainingRun(11), b = trainingRun(11), c = trainingRun(12);
  EXPECT_TRUE(a.first.bitEqual(b.first));
  EXPECT_TRUE(a.second.bitEqual(b.second));
  EXPECT_FALSE(a.first.bitEqual(c.first)) << "another key, another mask";
  const Tensor undropped = run(cls, *plain, x, graph()).value();
  EXPECT_FALSE(a.first.bitEqual(undropped));
  layer->eval();
  ctx.setRandomKey({13, 0, 0});
  EXPECT_TRUE(run(cls, *layer, x, graph()).value().bitEqual(undropped)) << "evaluation ignores dropout";
}

TEST_P(GatLayers, OwnSelfLoopsCarryNoWeightWhenLoopsAreAdded) {
  const std::string cls = GetParam();
  for (bool edges : {false, true}) {
    Generator gen(2);
    json args = {{"in_channels", 4}, {"out_channels", 3}, {"heads", 3}};
    if (edges) args["edge_dim"] = 2;
    auto layer = make(cls, args, gen);
    Generator data(8);
    const Variable x(init::uniform({6, 4}, -1, 1, data));
    const Tensor e10 = init::uniform({10, 2}, -1, 1, data);
    const Variable e8 = edges ? Variable(e10.slice(0, 8).clone()) : Variable();
    const Variable eAll = edges ? Variable(e10) : Variable();
    // PyG removes the graph's self-loops before adding one per node: extra ones change nothing, to the bit.
    EXPECT_TRUE(run(cls, *layer, x, graph(), e8).value().bitEqual(run(cls, *layer, x, graphWithLoops(), eAll).value()));
  }
}

// A fixed-size batch's padding (nodes after the real ones, self-loops on the first pad node after the real
// edges) leaves the real rows' bits alone, in training with attention dropout too (the masks' draws are by
// position, and padding only appends).
TEST_P(GatLayers, PaddingDoesNotMoveRealRowsUnderDropout) {
  const std::string cls = GetParam();
  Generator gen(5);
  auto layer = make(cls, {{"in_channels", 4}, {"out_channels", 3}, {"heads", 2}, {"dropout", 0.4}, {"edge_dim", 2}},
                    gen);
  Generator data(9);
  const Tensor x = init::uniform({6, 4}, -1, 1, data), e = init::uniform({8, 2}, -1, 1, data);
  Tensor xp = Tensor::full({9, 4}, 1e3), ep = Tensor::full({12, 2}, 1e3);
  std::copy(x.data<float>(), x.data<float>() + 24, xp.data<float>());
  std::copy(e.data<float>(), e.data<float>() + 16, ep.data<float>());
  const Tensor g = graph();
  std::vector<int64_t> padded(24, 6);  // sources then targets; pad edges 6 -> 6
  for (int64_t k = 0; k < 8; ++k) {
    padded[k] = g.data<int64_t>()[k];
    padded[12 + k] = g.data<int64_t>()[8 + k];
  }
  ExecutionContext& ctx = ExecutionContext::current();
  ctx.setRandomKey({21, 0, 0});
  const Tensor plain = run(cls, *layer, Variable(x), g, Variable(e)).value();
  ctx.setRandomKey({21, 0, 0});
  const Tensor pad = run(cls, *layer, Variable(xp), Tensor::fromVector(padded, {2, 12}), Variable(ep)).value();
  EXPECT_TRUE(pad.slice(0, 6).bitEqual(plain));
}

TEST_P(GatLayers, RefusesWhatItDoesNotOffer) {
  const std::string cls = GetParam();
  Generator gen(3);
  const json base = {{"in_channels", 4}, {"out_channels", 3}};
  for (const json& bad : {json{{"fill_value", "mul"}}, json{{"in_channels", json::array({4, 5})}},
                          json{{"in_channels", -1}}, json{{"dropout", 1.0}}, json{{"flow", "target_to_source"}}}) {
    if (cls == "GATConv" && bad.contains("in_channels") && bad.at("in_channels").is_array()) continue;  // GATConv's bipartite form
    json args = base;
    args.update(bad);
    EXPECT_THROW(make(cls, args, gen), std::invalid_argument) << bad.dump();
  }
}

TEST_P(GatLayers, CloneGivesTheSameOutputs) {
  const std::string cls = GetParam();
  Generator gen(4);
  auto layer = make(cls, {{"in_channels", 4}, {"out_channels", 2}, {"heads", 2}, {"edge_dim", 2},
                          {"fill_value", 0.25}, {"concat", false}},
                    gen);
  std::unique_ptr<Module> copy = layer->clone();
  Generator data(9);
  const Variable x(init::uniform({6, 4}, -1, 1, data)), e(init::uniform({8, 2}, -1, 1, data));
  EXPECT_TRUE(run(cls, *layer, x, graph(), e).value().bitEqual(run(cls, *copy, x, graph(), e).value()));
}

Variable runSparse(const std::string& cls, Module& m, const SparseMatrix& x, const Tensor& ei,
                   const Variable& e = Variable()) {
  if (cls == "GATConv") return static_cast<GATConv&>(m).forward(x, ei, e);
  return static_cast<GATv2Conv&>(m).forward(x, ei, e);
}

// Sparse input features (the projection as a sparse product) give the dense input's outputs and parameter
// gradients, in training with attention dropout too (the same key draws the same masks).
TEST_P(GatLayers, SparseInputGivesTheDenseOutputsAndGradients) {
  const std::string cls = GetParam();
  const json configs[] = {{{"heads", 2}},
                          {{"heads", 3}, {"concat", false}, {"edge_dim", 2}, {"dropout", 0.3}},
                          {{"heads", 2}, {"add_self_loops", false}, {"bias", false}},
                          {{"heads", 2}, {"share_weights", true}}};
  for (const json& extra : configs) {
    if (cls == "GATConv" && extra.contains("share_weights")) continue;
    SCOPED_TRACE(extra.dump());
    json args = {{"in_channels", 7}, {"out_channels", 3}};
    args.update(extra);
    Generator gen(6);
    auto layer = make(cls, args, gen);
    Generator data(12);
    const Tensor x = testing::sparseLooking(6, 7, data);
    const Variable e = extra.contains("edge_dim") ? Variable(init::uniform({8, 2}, -1, 1, data)) : Variable();
    const SparseMatrix xs = testing::sparseOf(x);
    ExecutionContext& ctx = ExecutionContext::current();
    ctx.setRandomKey({31, 0, 0});
    const auto dense = testing::outputsAndGrads(*layer, [&] { return run(cls, *layer, Variable(x), graph(), e); });
    ctx.setRandomKey({31, 0, 0});
    const auto sparse = testing::outputsAndGrads(*layer, [&] { return runSparse(cls, *layer, xs, graph(), e); });
    testing::expectClose(sparse, dense, 1e-5);
  }
  Generator gen(7);
  auto layer = make(cls, {{"in_channels", 7}, {"out_channels", 3}}, gen);
  Generator data(13);
  EXPECT_THROW(runSparse(cls, *layer, testing::sparseOf(testing::sparseLooking(6, 5, data)), graph()),
               std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Gat, GatLayers, ::testing::Values("GATConv", "GATv2Conv"));

TEST(GATConv, ParametersAsPyGNamedParameters) {
  Generator gen(5);
  GATConvOptions o;
  o.heads = 8;
  GATConv conv(1433, 8, gen, o);  // the header's usage
  std::vector<std::string> names;
  for (auto& [n, p] : conv.namedParameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"att_src", "att_dst", "bias", "lin_src.weight"}));
  Generator data(10);
  Variable h = conv.forward(Variable(init::uniform({6, 1433}, -1, 1, data)), graph());
  EXPECT_EQ(h.shape(), (Shape{6, 64}));
  std::vector<std::string> keys;
  for (auto& [n, p] : conv.namedStateEntries()) keys.push_back(n);
  EXPECT_EQ(keys, (std::vector<std::string>{"att_src", "att_dst", "bias", "lin_src.weight", "lin_dst.weight"}));
}

TEST(GATConv, BipartiteFormHasPyGsKeysAndRefusesSelfLoops) {
  Generator gen(5);
  GATConvOptions o;
  o.heads = 8;
  o.inDstChannels = 32;
  o.addSelfLoops = false;
  GATConv rel(1433, 8, gen, o);  // the header's usage
  std::vector<std::string> keys;
  for (auto& [n, p] : rel.namedStateEntries()) keys.push_back(n + shapeString(p.shape()));
  EXPECT_EQ(keys, (std::vector<std::string>{"att_src[1, 8, 8]", "att_dst[1, 8, 8]", "bias[64]",
                                            "lin_src.weight[64, 1433]", "lin_dst.weight[64, 32]"}));
  Generator data(10);
  const Variable xSrc(init::uniform({6, 1433}, -1, 1, data)), xDst(init::uniform({4, 32}, -1, 1, data));
  const Tensor ei = Tensor::fromVector<int64_t>({0, 5, 5, 2, 3, 0, 1, 1}, {2, 4});
  EXPECT_EQ(rel.forward(xSrc, xDst, ei).shape(), (Shape{4, 64}));
  EXPECT_THROW(rel.forward(xSrc, xSrc, ei), std::invalid_argument);  // targets 1433 wide, not 32
  // An edge from a source past the sources' rows.
  EXPECT_THROW(rel.forward(sliceRows(xSrc, 0, 5), xDst, ei), std::invalid_argument);
  o.addSelfLoops = true;
  GATConv loops(1433, 8, gen, o);
  try {
    loops.forward(xSrc, xDst, ei);
    ADD_FAILURE() << "a bipartite call with add_self_loops accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("add_self_loops=False"), std::string::npos) << e.what();
  }
}

// With one shared lin_src (an int in_channels) and no self-loops, (x, x[:T]) with edges into the first T rows gives
// the square form's first T rows, and (x[:S], x) with edges from the first S rows its every row: the same bits,
// whichever side the fused attention pads, and the same gradients.
TEST(GATConv, BipartiteFormOnOneNodeSetIsTheSquareForm) {
  Generator gen(7), data(12);
  GATConvOptions o;
  o.heads = 2;
  o.concat = false;
  o.addSelfLoops = false;
  GATConv conv(5, 3, gen, o);
  const Tensor x0 = init::uniform({6, 5}, -1, 1, data);
  const Tensor into4 = Tensor::fromVector<int64_t>({0, 5, 5, 2, 3, 4, 0, 1, 1, 3, 2, 0}, {2, 6});
  const Tensor from3 = Tensor::fromVector<int64_t>({0, 2, 2, 1, 0, 1, 0, 5, 5, 3, 4, 2}, {2, 6});
  for (const auto& [ei, S, T] : {std::tuple{into4, int64_t{6}, int64_t{4}}, std::tuple{from3, int64_t{3}, int64_t{6}}}) {
    Variable x(x0.clone(), true), xb(x0.clone(), true);
    const Variable square = sliceRows(conv.forward(x, ei), 0, T);
    const Variable bip = conv.forward(sliceRows(xb, 0, S), sliceRows(xb, 0, T), ei);
    EXPECT_TRUE(bip.value().bitEqual(square.value())) << S << " sources, " << T << " targets";
    sum(mul(square, square)).backward();
    sum(mul(bip, bip)).backward();
    EXPECT_LE(maxAbsDiff(x.grad(), xb.grad()), 1e-6) << S << " sources, " << T << " targets";
  }
}

TEST(GATv2Conv, SharedWeightsAndEdgeFeatures) {
  Generator gen(6);
  GATv2ConvOptions o;
  o.heads = 4;
  o.edgeDim = 3;
  GATv2Conv conv(64, 16, gen, o);  // the header's usage
  Generator data(11);
  Variable h = conv.forward(Variable(init::uniform({6, 64}, -1, 1, data)), graph(),
                            Variable(init::uniform({8, 3}, -1, 1, data)));
  EXPECT_EQ(h.shape(), (Shape{6, 64}));
  auto shared = GATv2Conv::fromPyG({{"in_channels", 4}, {"out_channels", 3}, {"share_weights", true}}, gen);
  std::vector<std::string> names;
  for (auto& [n, p] : shared->namedParameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"att", "bias", "lin_l.weight", "lin_l.bias"}));
  EXPECT_EQ(shared->namedStateEntries().size(), names.size() + 2);  // lin_r.weight and lin_r.bias: lin_l's
  // Edge features need edge_dim (PyG asserts).
  EXPECT_THROW(shared->forward(Variable(init::uniform({6, 4}, -1, 1, data)), graph(),
                               Variable(init::uniform({8, 3}, -1, 1, data))),
               std::invalid_argument);
}

}  // namespace
}  // namespace gnn
