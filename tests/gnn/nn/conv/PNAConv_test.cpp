// PNAConv: PyG 2.3.1's state_dict keys in PyG's order, its argument checks, clones, and what the layer table
// does not look at (no self-loops added, a node with no incoming edge reads only itself). Outputs and gradients
// against PyG are the layer table's (tests/gnn/nn/LayerTable.cpp: PNAConv, PNAConv_edge).
#include <gtest/gtest.h>

#include "CloneCheck.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/PNAConv.h"

namespace gnn {
namespace {

using json = nlohmann::json;

json fullArgs() {
  return {{"in_channels", 4},
          {"out_channels", 6},
          {"aggregators", {"mean", "min", "max", "std", "var", "sum"}},
          {"scalers", {"identity", "amplification", "attenuation", "linear", "inverse_linear"}},
          {"deg", {1, 2, 3, 1}},
          {"edge_dim", 3},
          {"towers", 2},
          {"pre_layers", 2},
          {"post_layers", 2},
          {"divide_input", true}};
}

TEST(PNAConv, StateDictKeysAreTorchGeometrics) {
  Generator gen(1);
  auto conv = PNAConv::fromPyG(fullArgs(), gen);
  // Printed from PyG 2.3.1: PNAConv(4, 6, <all six>, <all five>, torch.tensor([1, 2, 3, 1]), edge_dim=3,
  // towers=2, pre_layers=2, post_layers=2, divide_input=True).state_dict().
  const std::vector<std::pair<std::string, Shape>> want = {
      {"aggr_module.avg_deg_lin", {1}}, {"aggr_module.avg_deg_log", {1}}, {"edge_encoder.weight", {2, 3}},
      {"edge_encoder.bias", {2}},       {"pre_nns.0.0.weight", {2, 6}},  {"pre_nns.0.0.bias", {2}},
      {"pre_nns.0.2.weight", {2, 2}},   {"pre_nns.0.2.bias", {2}},       {"pre_nns.1.0.weight", {2, 6}},
      {"pre_nns.1.0.bias", {2}},        {"pre_nns.1.2.weight", {2, 2}},  {"pre_nns.1.2.bias", {2}},
      {"post_nns.0.0.weight", {3, 62}}, {"post_nns.0.0.bias", {3}},      {"post_nns.0.2.weight", {3, 3}},
      {"post_nns.0.2.bias", {3}},       {"post_nns.1.0.weight", {3, 62}}, {"post_nns.1.0.bias", {3}},
      {"post_nns.1.2.weight", {3, 3}},  {"post_nns.1.2.bias", {3}},      {"lin.weight", {6, 6}},
      {"lin.bias", {6}}};
  auto named = conv->namedParameters();
  ASSERT_EQ(named.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(named[i].first, want[i].first);
    EXPECT_EQ(named[i].second.shape(), want[i].second) << want[i].first;
  }
  // PyG's printed values (float32): avg_deg_lin 1.5714, avg_deg_log 0.8669; buffers, not trained.
  EXPECT_NEAR(named[0].second.value().at(0), 11.0 / 7, 1e-6);
  EXPECT_NEAR(named[1].second.value().at(0), 0.8669, 1e-4);
  EXPECT_FALSE(named[0].second.requiresGrad());
}

TEST(PNAConv, RefusesWhatPyGRefuses) {
  Generator gen(1);
  auto with = [](json args, const std::string& key, json value) {
    args[key] = std::move(value);
    return args;
  };
  EXPECT_THROW(PNAConv::fromPyG(with(fullArgs(), "out_channels", 5), gen), std::invalid_argument);  // towers 2
  EXPECT_THROW(PNAConv::fromPyG(with(fullArgs(), "in_channels", 5), gen), std::invalid_argument);   // divided
  EXPECT_THROW(PNAConv::fromPyG(with(fullArgs(), "in_channels", -1), gen), std::invalid_argument);  // lazy
  EXPECT_THROW(PNAConv::fromPyG(with(fullArgs(), "aggr", "add"), gen), std::invalid_argument);
  EXPECT_THROW(PNAConv::fromPyG(with(fullArgs(), "scalers", {"cubic"}), gen), std::invalid_argument);
  EXPECT_THROW(PNAConv::fromPyG(with(fullArgs(), "deg", json::array()), gen), std::invalid_argument);
  json noDeg = fullArgs();
  noDeg.erase("deg");
  EXPECT_THROW(PNAConv::fromPyG(noDeg, gen), std::invalid_argument);
  // edge_dim and edge_attr go together.
  auto conv = PNAConv::fromPyG(fullArgs(), gen, DType::F64);
  const Tensor ei = Tensor::fromVector<int64_t>({0, 1, 1, 0}, {2, 2});
  Variable x(init::uniform({2, 4}, -1, 1, gen, DType::F64));
  EXPECT_THROW(conv->forward(x, ei), std::invalid_argument);
  json plain = fullArgs();
  plain.erase("edge_dim");
  auto noEdges = PNAConv::fromPyG(plain, gen, DType::F64);
  EXPECT_THROW(noEdges->forward(x, ei, Variable(init::uniform({2, 3}, -1, 1, gen, DType::F64))),
               std::invalid_argument);
}

TEST(PNAConv, CloneIsADeepCopyWithTheSameOutputs) {
  Generator gen(2);
  json args = fullArgs();
  args["train_norm"] = true;
  auto conv = PNAConv::fromPyG(args, gen, DType::F64);
  auto copy = conv->clone();
  testing::expectDeepCopy(*conv, *copy);
  const Tensor ei = Tensor::fromVector<int64_t>({0, 1, 2, 2, 1, 0, 0, 1}, {2, 4});
  Variable x(init::uniform({3, 4}, -1, 1, gen, DType::F64));
  Variable e(init::uniform({4, 3}, -1, 1, gen, DType::F64));
  EXPECT_TRUE(conv->forward(x, ei, e).value().bitEqual(static_cast<PNAConv&>(*copy).forward(x, ei, e).value()));
}

TEST(PNAConv, AddsNoSelfLoopsAndANodeWithoutEdgesReadsOnlyItself) {
  Generator gen(3);
  json args = fullArgs();
  args.erase("edge_dim");
  auto conv = PNAConv::fromPyG(args, gen, DType::F64);
  // Node 2 receives nothing.
  const Tensor ei = Tensor::fromVector<int64_t>({0, 1, 2, 1, 0, 0}, {2, 3});
  Tensor x0 = init::uniform({3, 4}, -1, 1, gen, DType::F64);
  const Tensor y0 = conv->forward(Variable(x0), ei).value();
  Tensor x1 = x0.clone();
  for (int64_t k = 0; k < 8; ++k) x1.data<double>()[k] += 0.5;  // nodes 0 and 1 change
  const Tensor y1 = conv->forward(Variable(x1), ei).value();
  for (int64_t f = 0; f < 6; ++f) EXPECT_EQ(y0.at(2 * 6 + f), y1.at(2 * 6 + f));
  // A self-loop on node 2 is an ordinary edge: it changes node 2 (PNA adds none of its own).
  const Tensor loop = Tensor::fromVector<int64_t>({0, 1, 2, 2, 1, 0, 0, 2}, {2, 4});
  const Tensor y2 = conv->forward(Variable(x0), loop).value();
  double diff = 0;
  for (int64_t f = 0; f < 6; ++f) diff += std::abs(y2.at(2 * 6 + f) - y0.at(2 * 6 + f));
  EXPECT_GT(diff, 1e-6);
}

}  // namespace
}  // namespace gnn
