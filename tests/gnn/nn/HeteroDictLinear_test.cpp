// HeteroDictLinear: PyG's construction rules (in_channels a dict, or an int with types) and its forward, each type
// through its own Linear (PyG 2.3.1's forward without pyg_lib: {key: self.lins[key](x)}; Linear itself is checked
// against PyG in the layer table, HeteroLinear's rows).
#include <gtest/gtest.h>

#include "gnn/nn/HeteroDictLinear.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

TEST(HeteroDictLinear, KeysAndShapesArePyGs) {
  Generator gen(1);
  auto lin = HeteroDictLinear::fromPyG({{"in_channels", {{"paper", 5}, {"author", 3}}}, {"out_channels", 4}}, gen);
  std::map<std::string, Shape> shapes;
  for (auto& [name, p] : lin->namedParameters()) shapes[name] = p.shape();
  const std::map<std::string, Shape> expected = {{"lins.author.weight", {4, 3}}, {"lins.author.bias", {4}},
                                                 {"lins.paper.weight", {4, 5}}, {"lins.paper.bias", {4}}};
  EXPECT_EQ(shapes, expected);
  auto noBias = HeteroDictLinear::fromPyG(
      {{"in_channels", 6}, {"out_channels", 2}, {"types", {"b", "a"}}, {"bias", false}}, gen);
  ASSERT_EQ(noBias->namedParameters().size(), 2u);
  EXPECT_EQ(noBias->namedParameters()[0].first, "lins.b.weight");  // the order of `types`
  EXPECT_EQ(noBias->namedParameters()[1].second.shape(), (Shape{2, 6}));
}

TEST(HeteroDictLinear, RefusesWhatPyGRefuses) {
  Generator gen(1);
  EXPECT_THROW(HeteroDictLinear::fromPyG({{"in_channels", 4}, {"out_channels", 2}}, gen), std::invalid_argument);
  EXPECT_THROW(HeteroDictLinear::fromPyG({{"in_channels", {{"a", 4}}}, {"out_channels", 2}, {"types", {"b"}}}, gen),
               std::invalid_argument);
  EXPECT_THROW(HeteroDictLinear::fromPyG({{"in_channels", -1}, {"out_channels", 2}, {"types", {"a"}}}, gen),
               std::invalid_argument);
  auto lin = HeteroDictLinear::fromPyG({{"in_channels", 4}, {"out_channels", 2}, {"types", {"a"}}}, gen);
  EXPECT_THROW(lin->forward({{"b", Variable(Tensor::zeros({1, 4}))}}), std::invalid_argument);
}

TEST(HeteroDictLinear, EachTypeThroughItsLinear) {
  Generator gen(2);
  auto lin = HeteroDictLinear::fromPyG({{"in_channels", {{"paper", 3}, {"author", 2}}}, {"out_channels", 2}}, gen,
                                       DType::F64);
  // Weights set by hand, so the expected rows are written out: x W^T + b.
  for (auto& [name, p] : lin->namedParameters()) {
    Variable v = p;
    if (name == "lins.paper.weight") v.value() = Tensor::fromVector<double>({1, 0, 2, 0, -1, 1}, {2, 3});
    if (name == "lins.paper.bias") v.value() = Tensor::fromVector<double>({0.5, -0.5}, {2});
    if (name == "lins.author.weight") v.value() = Tensor::fromVector<double>({3, 1, -2, 4}, {2, 2});
    if (name == "lins.author.bias") v.value() = Tensor::fromVector<double>({1, 2}, {2});
  }
  Variable paper(Tensor::fromVector<double>({1, 2, 3, -1, 0, 1}, {2, 3}), true);
  Variable author(Tensor::fromVector<double>({2, -1}, {1, 2}), true);
  std::map<std::string, Variable> out = lin->forward({{"paper", paper}, {"author", author}});
  ASSERT_EQ(out.size(), 2u);
  const std::vector<double> p = {1 + 6 + 0.5, -2 + 3 - 0.5, -1 + 2 + 0.5, 0 + 1 - 0.5};
  const std::vector<double> a = {6 - 1 + 1, -4 - 4 + 2};
  for (size_t k = 0; k < p.size(); ++k) EXPECT_DOUBLE_EQ(out["paper"].value().at(static_cast<int64_t>(k)), p[k]);
  for (size_t k = 0; k < a.size(); ++k) EXPECT_DOUBLE_EQ(out["author"].value().at(static_cast<int64_t>(k)), a[k]);
  sum(add(sum(out["paper"]), sum(out["author"]))).backward();
  // d/dx of sum(x W^T) is each row the column sums of W.
  EXPECT_DOUBLE_EQ(paper.grad().at(0), 1.0);
  EXPECT_DOUBLE_EQ(paper.grad().at(2), 3.0);
  EXPECT_DOUBLE_EQ(author.grad().at(1), 5.0);
  std::unique_ptr<Module> copy = lin->clone();
  EXPECT_EQ(copy->namedParameters().size(), 4u);
}

}  // namespace
}  // namespace gnn
