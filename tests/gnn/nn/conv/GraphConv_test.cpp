// GraphConv's bipartite form (PyG's (x_src, x_dst) call and (source, target) in_channels; the layer itself is in the
// layer table): on one node set it is the layer for every aggregation, lin_rel reads the sources and lin_root the
// targets, and edges outside the two sets are refused.
#include <gtest/gtest.h>

#include "ErrorMessage.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/GraphConv.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

using json = nlohmann::json;
using testing::messageOf;

Tensor edges() { return Tensor::fromVector<int64_t>({0, 0, 1, 2, 3, 2, 1, 1, 2, 2, 2, 0}, {2, 6}); }

TEST(GraphConv, BipartiteFormOnOneNodeSetIsTheLayer) {
  for (const json& aggr : {json("add"), json("mean"), json("max"), json({{"class", "SoftmaxAggregation"},
                                                                         {"args", {{"learn", true}}}})}) {
    for (int64_t out : {2, 5}) {  // narrower than the input (product after the projection) and wider
      Generator gen(4);
      auto conv = GraphConv::fromPyG({{"in_channels", 3}, {"out_channels", out}, {"aggr", aggr}}, gen, DType::F64);
      const Variable x(init::uniform({5, 3}, -1, 1, gen, DType::F64));
      const Tensor a = conv->forward(x, edges()).value(), b = conv->forward(x, x, edges()).value();
      for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(a.at(i), b.at(i), 1e-12) << aggr.dump() << " " << out;
    }
  }
}

TEST(GraphConv, SourceAndTargetWidths) {
  Generator gen(5);
  auto conv = GraphConv::fromPyG({{"in_channels", {3, 4}}, {"out_channels", 2}}, gen, DType::F64);
  std::map<std::string, Shape> shapes;
  for (auto& [name, p] : conv->namedParameters()) shapes[name] = p.shape();
  EXPECT_EQ(shapes, (std::map<std::string, Shape>{{"lin_rel.weight", {2, 3}}, {"lin_rel.bias", {2}},
                                                  {"lin_root.weight", {2, 4}}}));
  // Two sources, three targets: target t gets x_src[0] + x_src[1] for t = 0, x_src[1] for t = 2, nothing for t = 1.
  const Tensor ei = Tensor::fromVector<int64_t>({0, 1, 1, 0, 0, 2}, {2, 3});
  const Variable xs(init::uniform({2, 3}, -1, 1, gen, DType::F64)), xd(init::uniform({3, 4}, -1, 1, gen, DType::F64));
  const Tensor y = conv->forward(xs, xd, ei).value();
  ASSERT_EQ(y.shape(), (Shape{3, 2}));
  const Tensor wRel = conv->namedParameters()[0].second.value(), bRel = conv->namedParameters()[1].second.value();
  const Tensor wRoot = conv->namedParameters()[2].second.value();
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t o = 0; o < 2; ++o) {
      double want = bRel.at(o);
      for (int64_t k = 0; k < 4; ++k) want += wRoot.at(o * 4 + k) * xd.value().at(t * 4 + k);
      for (int64_t s : t == 0 ? std::vector<int64_t>{0, 1} : t == 2 ? std::vector<int64_t>{1} : std::vector<int64_t>{})
        for (int64_t k = 0; k < 3; ++k) want += wRel.at(o * 3 + k) * xs.value().at(s * 3 + k);
      EXPECT_NEAR(y.at(t * 2 + o), want, 1e-12);
    }
  EXPECT_NE(messageOf([&] { conv->forward(xs, edges()); }).find("x_src, x_dst"), std::string::npos);
  EXPECT_NE(messageOf([&] { conv->forward(xs, sliceRows(xd, 0, 2), ei); }).find("edge 2"), std::string::npos);
}

}  // namespace
}  // namespace gnn
