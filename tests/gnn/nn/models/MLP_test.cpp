// MLP (PyG 2.3.1's torch_geometric.nn.models.MLP): its state_dict keys and shapes for each way of giving the
// widths, its forward against the layers composed by hand, dropout only in training, PyG's argument errors, and
// clone(). Parity with PyG's own numbers runs through GINConv's and EdgeConv's references in the layer table.
#include <gtest/gtest.h>

#include <map>

#include "ErrorMessage.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/models/MLP.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

using json = nlohmann::json;
using testing::messageOf;

std::map<std::string, Shape> keysOf(const Module& m) {
  std::map<std::string, Shape> out;
  for (const auto& [name, p] : m.namedParameters()) out[name] = p.shape();
  return out;
}

TEST(MLP, KeysWithoutNorm) {
  Generator gen(1);
  auto mlp = MLP::fromPyG({{"channel_list", {4, 8, 6, 3}}, {"norm", nullptr}, {"bias", {true, false, true}}}, gen);
  const std::map<std::string, Shape> expected = {{"lins.0.weight", {8, 4}}, {"lins.0.bias", {8}},
                                                 {"lins.1.weight", {6, 8}}, {"lins.2.weight", {3, 6}},
                                                 {"lins.2.bias", {3}}};
  EXPECT_EQ(keysOf(*mlp), expected);
  EXPECT_EQ(mlp->numLayers(), 3);
  EXPECT_EQ(mlp->inChannels(), 4);
  EXPECT_EQ(mlp->outChannels(), 3);
}

TEST(MLP, BatchNormKeysFollowPlainLast) {
  Generator gen(1);
  // PyG's default norm is batch_norm: one per hidden layer, and on the last too when plain_last=False.
  auto plain = MLP::fromPyG({{"in_channels", 4}, {"hidden_channels", 5}, {"out_channels", 3}, {"num_layers", 3}}, gen);
  auto keys = keysOf(*plain);
  for (const char* k : {"norms.0.module.weight", "norms.0.module.bias", "norms.0.module.running_mean",
                        "norms.0.module.running_var", "norms.1.module.weight"})
    EXPECT_TRUE(keys.count(k)) << k;
  EXPECT_FALSE(keys.count("norms.2.module.weight"));
  EXPECT_EQ(keys["norms.1.module.weight"], (Shape{5}));
  auto notPlain = MLP::fromPyG({{"channel_list", {4, 5, 3}}, {"plain_last", false}}, gen);
  EXPECT_EQ(keysOf(*notPlain)["norms.1.module.running_var"], (Shape{3}));
}

TEST(MLP, CountsFormEqualsChannelList) {
  Generator g1(7), g2(7), g3(7);
  auto a = MLP::fromPyG({{"channel_list", {4, 6, 6, 2}}, {"norm", nullptr}}, g1);
  auto b = MLP::fromPyG({{"in_channels", 4}, {"hidden_channels", 6}, {"out_channels", 2}, {"num_layers", 3},
                         {"norm", nullptr}}, g2);
  // An int channel_list is in_channels, as in PyG.
  auto c = MLP::fromPyG({{"channel_list", 4}, {"hidden_channels", 6}, {"out_channels", 2}, {"num_layers", 3},
                         {"norm", nullptr}}, g3);
  EXPECT_EQ(a->options().channelList, b->options().channelList);
  EXPECT_EQ(a->options().channelList, c->options().channelList);
  Tensor x = init::uniform({5, 4}, -1, 1, g1);
  EXPECT_TRUE(a->forward(Variable(x)).value().bitEqual(b->forward(Variable(x)).value()));
}

// Linear, activation, dropout; the plain last Linear: composed by hand from the MLP's own weights.
TEST(MLP, ForwardIsThePyGLoop) {
  Generator gen(3);
  for (bool actFirst : {false, true}) {
    auto mlp = MLP::fromPyG({{"channel_list", {4, 8, 3}}, {"norm", nullptr}, {"act", "leaky_relu"},
                             {"act_kwargs", {{"negative_slope", 0.2}}}, {"act_first", actFirst}},
                            gen, DType::F64);
    mlp->eval();
    Variable x(init::uniform({6, 4}, -1, 1, gen, DType::F64));
    Variable h = leakyRelu(linear(x, mlp->lin(0).weight(), *mlp->lin(0).bias()), 0.2);
    Variable ref = linear(h, mlp->lin(1).weight(), *mlp->lin(1).bias());
    EXPECT_TRUE(mlp->forward(x).value().bitEqual(ref.value()));
  }
  auto notPlain = MLP::fromPyG({{"channel_list", {4, 3}}, {"norm", nullptr}, {"act", "tanh"}, {"plain_last", false}},
                               gen, DType::F64);
  Variable x(init::uniform({6, 4}, -1, 1, gen, DType::F64));
  Variable ref = gnn::tanh(linear(x, notPlain->lin(0).weight(), *notPlain->lin(0).bias()));
  EXPECT_TRUE(notPlain->forward(x).value().bitEqual(ref.value()));
}

TEST(MLP, DropoutOnlyInTraining) {
  Generator gen(4);
  auto mlp = MLP::fromPyG({{"channel_list", {16, 64, 64}}, {"norm", nullptr}, {"dropout", 0.5}, {"plain_last", false}},
                          gen);
  EXPECT_EQ(mlp->options().dropout, (std::vector<double>{0.5, 0.5}));
  Variable x(init::uniform({50, 16}, -1, 1, gen));
  mlp->eval();
  const Tensor a = mlp->forward(x).value(), b = mlp->forward(x).value();
  EXPECT_TRUE(a.bitEqual(b));
  mlp->train();
  const Tensor t = mlp->forward(x).value();
  EXPECT_FALSE(t.bitEqual(a));
  // A single float with plain_last (the default): the last layer gets no dropout, as PyG's.
  auto plain = MLP::fromPyG({{"channel_list", {16, 8, 4}}, {"norm", nullptr}, {"dropout", 0.3}}, gen);
  EXPECT_EQ(plain->options().dropout, (std::vector<double>{0.3, 0.0}));
}

TEST(MLP, CloneHasTheSameOutputs) {
  Generator gen(5);
  auto mlp = MLP::fromPyG({{"channel_list", {4, 8, 3}}, {"norm", nullptr}}, gen);
  mlp->eval();
  std::unique_ptr<MLP> copy = cloneModule(*mlp);
  Variable x(init::uniform({6, 4}, -1, 1, gen));
  EXPECT_TRUE(copy->forward(x).value().bitEqual(mlp->forward(x).value()));
  EXPECT_EQ(keysOf(*copy), keysOf(*mlp));
}

TEST(MLP, RefusesWhatPyGRefuses) {
  Generator gen(6);
  EXPECT_NE(messageOf([&] { MLP::fromPyG({{"in_channels", 4}, {"out_channels", 2}}, gen); }).find("num_layers"),
            std::string::npos);
  EXPECT_NE(messageOf([&] {
              MLP::fromPyG({{"in_channels", 4}, {"out_channels", 2}, {"num_layers", 2}}, gen);
            }).find("hidden_channels"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { MLP::fromPyG({{"channel_list", {4, 2}}, {"dropout", {0.1, 0.2}}}, gen); }).find("dropout"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { MLP::fromPyG({{"channel_list", {4, 2}}, {"batch_norm", true}}, gen); }).find("batch_norm"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { MLP::fromPyG({{"channel_list", {4}}}, gen); }).find("channel_list"), std::string::npos);
  EXPECT_NE(messageOf([&] { mlpFromPyGSpec({{"class", "Sequential"}}, "GINConv", gen); }).find("GINConv"),
            std::string::npos);
}

}  // namespace
}  // namespace gnn
