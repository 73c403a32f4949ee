// GINConv beyond the layer table: eps is a parameter with train_eps and a buffer without (both in the
// state_dict, as PyG's), the output against nn((1 + eps) x + A x) composed by hand (and the bipartite form's
// nn((1 + eps) x_dst + A x_src)), the norms given the batch,
// refusals and clone().
#include <gtest/gtest.h>

#include "ErrorMessage.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/GINConv.h"
#include "gnn/ops/Ops.h"
#include "nn/SparseInputCheck.h"

namespace gnn {
namespace {

using json = nlohmann::json;
using testing::messageOf;

json mlp(json args) { return {{"class", "MLP"}, {"args", std::move(args)}}; }

Tensor edges() { return Tensor::fromVector<int64_t>({0, 0, 1, 2, 3, 2, 1, 1, 2, 2, 2, 0}, {2, 6}); }

TEST(GINConv, EpsIsAParameterOnlyWhenTrained) {
  Generator gen(1);
  for (bool train : {false, true}) {
    auto conv = GINConv::fromPyG({{"nn", mlp({{"channel_list", {3, 4}}, {"norm", nullptr}})}, {"eps", 0.25},
                                  {"train_eps", train}},
                                 gen);
    bool found = false;
    for (const auto& [name, p] : conv->namedParameters())
      if (name == "eps") {
        found = true;
        EXPECT_EQ(p.shape(), (Shape{1}));
        EXPECT_EQ(p.value().at(0), 0.25);
        EXPECT_EQ(p.requiresGrad(), train);
      }
    EXPECT_TRUE(found) << "PyG's state_dict holds eps with or without train_eps";
  }
}

TEST(GINConv, IsTheMlpOfTheSelfWeightedSum) {
  Generator gen(2);
  for (bool train : {false, true}) {
    auto conv = GINConv::fromPyG({{"nn", mlp({{"channel_list", {3, 5, 2}}, {"norm", nullptr}})}, {"eps", -0.3},
                                  {"train_eps", train}},
                                 gen, DType::F64);
    const Tensor x = init::uniform({5, 3}, -1, 1, gen, DType::F64);
    const Tensor ei = edges();
    Variable sum = add(scale(Variable(x), 0.7), scatterSum(gatherRows(Variable(x), edgeRow(ei, 0)), edgeRow(ei, 1), 5));
    const Tensor ref = conv->nn().forward(sum).value();
    const Tensor out = conv->forward(Variable(x), ei).value();
    EXPECT_LT((out.matrix<double>() - ref.matrix<double>()).cwiseAbs().maxCoeff(), 1e-12);
  }
}

// The bipartite form: nn((1 + eps) x_dst + sum x_src) composed by hand, with fewer sources than targets and more;
// (x, x) is the square form's bits; mismatched widths and edges outside the sources are refused.
TEST(GINConv, BipartiteFormIsTheMlpOfTheSelfWeightedSourceSum) {
  Generator gen(3);
  auto conv = GINConv::fromPyG({{"nn", mlp({{"channel_list", {3, 5, 2}}, {"norm", nullptr}})}, {"eps", 0.4}}, gen,
                               DType::F64);
  for (const auto& [S, T] : {std::pair{int64_t{4}, int64_t{6}}, std::pair{int64_t{7}, int64_t{3}}}) {
    const Tensor xs = init::uniform({S, 3}, -1, 1, gen, DType::F64), xd = init::uniform({T, 3}, -1, 1, gen, DType::F64);
    const Tensor ei = Tensor::fromVector<int64_t>({0, 0, 1, S - 1, 2, S - 1, 1, 1, 2, 0, T - 1, 0}, {2, 6});
    Variable sum = add(scale(Variable(xd), 1.4), scatterSum(gatherRows(Variable(xs), edgeRow(ei, 0)), edgeRow(ei, 1), T));
    const Tensor ref = conv->nn().forward(sum).value();
    const Tensor out = conv->forward(Variable(xs), Variable(xd), ei).value();
    ASSERT_EQ(out.shape(), (Shape{T, 2}));
    EXPECT_LT((out.matrix<double>() - ref.matrix<double>()).cwiseAbs().maxCoeff(), 1e-12);
  }
  const Tensor x = init::uniform({5, 3}, -1, 1, gen, DType::F64);
  EXPECT_TRUE(conv->forward(Variable(x), Variable(x), edges()).value().bitEqual(
      conv->forward(Variable(x), edges()).value()));
  EXPECT_THROW(conv->forward(Variable(x), Variable(init::uniform({5, 4}, -1, 1, gen, DType::F64)), edges()),
               std::invalid_argument);
  EXPECT_THROW(conv->forward(Variable(sliceRows(Variable(x), 0, 3).value()), Variable(x), edges()),
               std::invalid_argument);
}

// Sparse input features (the MLP's first Linear before the neighbour sum, x W^T a sparse product) give the dense
// input's outputs and parameter gradients (eps's too when it trains), with batch_norm in training.
TEST(GINConv, SparseInputGivesTheDenseOutputsAndGradients) {
  for (bool train : {false, true})
    for (const json& channels : {json{6, 4}, json{6, 5, 3}}) {
      SCOPED_TRACE(channels.dump() + (train ? " train_eps" : ""));
      Generator gen(6);
      auto conv = GINConv::fromPyG({{"nn", mlp({{"channel_list", channels}, {"norm", "batch_norm"}})},
                                    {"eps", 0.4}, {"train_eps", train}},
                                   gen);
      const Tensor x = testing::sparseLooking(5, 6, gen);
      const SparseMatrix xs = testing::sparseOf(x);
      const auto dense = testing::outputsAndGrads(*conv, [&] { return conv->forward(Variable(x), edges()); });
      const auto sparse = testing::outputsAndGrads(*conv, [&] { return conv->forward(xs, edges()); });
      // A Linear's bias before batch_norm has no gradient in training: its values are rounding noise, compared
      // at the scale of the run's numbers rather than their own.
      testing::expectClose(sparse, dense, 1e-5, testing::largestMagnitude(dense));
    }
  Generator gen(7);
  auto conv = GINConv::fromPyG({{"nn", mlp({{"channel_list", {6, 4}}})}}, gen);
  EXPECT_THROW(conv->forward(testing::sparseOf(testing::sparseLooking(5, 4, gen)), edges()), std::invalid_argument);
}

TEST(GINConv, RefusesOtherModules) {
  Generator gen(3);
  EXPECT_NE(messageOf([&] { GINConv::fromPyG({{"nn", {{"class", "Sequential"}}}}, gen); }).find("MLP"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { GINConv::fromPyG({{"eps", 0.1}}, gen); }).find("nn"), std::string::npos);
  EXPECT_NE(messageOf([&] { GINConv::fromPyG({{"nn", mlp({{"channel_list", {3, 2}}})}, {"aggr", "mean"}}, gen); })
                .find("aggr"),
            std::string::npos);
}

TEST(GINConv, CloneHasTheSameOutputs) {
  Generator gen(4);
  auto conv = GINConv::fromPyG({{"nn", mlp({{"channel_list", {3, 6, 2}}})}, {"train_eps", true}}, gen);
  conv->eval();  // batch_norm with its running statistics
  std::unique_ptr<GINConv> copy = cloneModule(*conv);
  const Variable x(init::uniform({5, 3}, -1, 1, gen));
  EXPECT_TRUE(copy->forward(x, edges()).value().bitEqual(conv->forward(x, edges()).value()));
  EXPECT_EQ(copy->namedParameters().size(), conv->namedParameters().size());
}

// With batch_norm in training, padding rows (masked out in NormBatch) do not change the real rows.
TEST(GINConv, NormsSeeOnlyRealRows) {
  Generator gen(5);
  auto conv = GINConv::fromPyG({{"nn", mlp({{"channel_list", {3, 6, 2}}})}}, gen);
  const Tensor x = init::uniform({5, 3}, -1, 1, gen);
  Tensor padded = Tensor::full({7, 3}, 1e3);
  for (int64_t i = 0; i < 15; ++i) padded.data<float>()[i] = x.data<float>()[i];
  // Two pad nodes (5, 6) with a pad self-loop on the first.
  const Tensor ei = edges();
  std::vector<int64_t> e(ei.data<int64_t>(), ei.data<int64_t>() + 12);
  e.insert(e.begin() + 6, 5);
  e.push_back(5);
  const Tensor eiPadded = Tensor::fromVector(e, {2, 7});
  Tensor mask = Tensor::full({7}, 1.0, DType::U8);
  mask.data<uint8_t>()[5] = mask.data<uint8_t>()[6] = 0;
  const Tensor plain = conv->forward(Variable(x), ei).value();
  const Tensor withPad = conv->forward(Variable(padded), eiPadded, {Tensor(), 1, mask}).value();
  EXPECT_LT((withPad.slice(0, 5).matrix<float>() - plain.matrix<float>()).cwiseAbs().maxCoeff(), 1e-5);
}

}  // namespace
}  // namespace gnn
