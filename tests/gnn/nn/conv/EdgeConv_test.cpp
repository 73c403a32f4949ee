// EdgeConv beyond the layer table: the node-side split of nn's first Linear against PyG's formula composed on
// the edges, refusals and clone().
#include <gtest/gtest.h>

#include "ErrorMessage.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/EdgeConv.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

using json = nlohmann::json;
using testing::messageOf;

json mlp(json args) { return {{"class", "MLP"}, {"args", std::move(args)}}; }

Tensor edges() { return Tensor::fromVector<int64_t>({0, 0, 1, 2, 3, 2, 1, 1, 2, 2, 2, 0}, {2, 6}); }

TEST(EdgeConv, IsTheAggregatedMlpOfEdgeFeatures) {
  for (const char* aggr : {"max", "mean", "add"})
    for (bool plainLast : {true, false}) {
      SCOPED_TRACE(aggr);
      Generator gen(2);
      auto conv = EdgeConv::fromPyG({{"nn", mlp({{"channel_list", {6, 5, 4}}, {"norm", nullptr},
                                                 {"plain_last", plainLast}})},
                                     {"aggr", aggr}},
                                    gen, DType::F64);
      const Variable x(init::uniform({5, 3}, -1, 1, gen, DType::F64));
      const Tensor ei = edges(), src = edgeRow(ei, 0), dst = edgeRow(ei, 1);
      const Variable xi = gatherRows(x, dst), xj = gatherRows(x, src);
      const Variable msg = conv->nn().forward(concatCols({xi, sub(xj, xi)}));
      const std::string a = aggr;
      const Variable ref = a == "max" ? scatterMax(msg, dst, 5) : a == "mean" ? scatterMean(msg, dst, 5)
                                                                           : scatterSum(msg, dst, 5);
      const Tensor out = conv->forward(x, ei).value();
      EXPECT_LT((out.matrix<double>() - ref.value().matrix<double>()).cwiseAbs().maxCoeff(), 1e-12);
    }
}

TEST(EdgeConv, RefusesWhatItDoesNotOffer) {
  Generator gen(3);
  EXPECT_NE(messageOf([&] { EdgeConv::fromPyG({{"nn", {{"class", "Linear"}}}}, gen); }).find("MLP"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { EdgeConv::fromPyG({{"nn", mlp({{"channel_list", {5, 2}}})}}, gen); }).find("odd"),
            std::string::npos);
}

TEST(EdgeConv, CloneHasTheSameOutputs) {
  Generator gen(4);
  auto conv = EdgeConv::fromPyG({{"nn", mlp({{"channel_list", {6, 8, 2}}, {"norm", nullptr}})}}, gen);
  std::unique_ptr<EdgeConv> copy = cloneModule(*conv);
  const Variable x(init::uniform({5, 3}, -1, 1, gen));
  EXPECT_TRUE(copy->forward(x, edges()).value().bitEqual(conv->forward(x, edges()).value()));
}

}  // namespace
}  // namespace gnn
