// JumpingKnowledge (PyG's modes cat, max, lstm, and last): PyG's state_dict keys and sizes for lstm, the cat and
// max formulas, finite-difference gradients of the lstm mode's inputs and parameters in float64, clones, and the
// modes and shapes it refuses. Parity with PyG itself: the BasicGNN references with jk='lstm'
// (tests/gnn/nn/models/BasicGNN_test.cpp).
#include <gtest/gtest.h>

#include "ParameterGradCheck.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/models/JumpingKnowledge.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

std::vector<Variable> layerOutputs(int64_t layers, int64_t n, int64_t c, DType dt, bool grad, uint64_t seed = 4) {
  Generator g(seed);
  std::vector<Variable> xs;
  for (int64_t l = 0; l < layers; ++l) xs.emplace_back(init::uniform({n, c}, -1, 1, g, dt), grad);
  return xs;
}

TEST(JumpingKnowledge, LstmHasPyGsKeysAndSizes) {
  Generator gen(1);
  JumpingKnowledge jk("LSTM", 6, 3, gen);  // hidden (3 * 6) // 2 = 9
  std::vector<std::pair<std::string, Shape>> want = {
      {"lstm.weight_ih_l0", {36, 6}},         {"lstm.weight_hh_l0", {36, 9}},
      {"lstm.bias_ih_l0", {36}},              {"lstm.bias_hh_l0", {36}},
      {"lstm.weight_ih_l0_reverse", {36, 6}}, {"lstm.weight_hh_l0_reverse", {36, 9}},
      {"lstm.bias_ih_l0_reverse", {36}},      {"lstm.bias_hh_l0_reverse", {36}},
      {"att.weight", {1, 18}},                {"att.bias", {1}}};
  std::vector<std::pair<std::string, Shape>> got;
  for (const auto& [name, p] : jk.namedParameters()) got.emplace_back(name, p.shape());
  EXPECT_EQ(got, want);
  EXPECT_EQ(jk.mode(), "lstm");
  EXPECT_EQ(jk.forward(layerOutputs(3, 11, 6, DType::F32, false)).shape(), (Shape{11, 6}));
}

TEST(JumpingKnowledge, CatMaxAndLastAreTheirFormulas) {
  Generator gen(1);
  const auto xs = layerOutputs(3, 7, 4, DType::F32, false);
  JumpingKnowledge cat("cat", 4, 3, gen), mx("max", 4, 3, gen), last("last", 4, 3, gen);
  EXPECT_TRUE(cat.namedParameters().empty() && mx.namedParameters().empty());
  EXPECT_TRUE(cat.forward(xs).value().bitEqual(concatCols(xs).value()));
  EXPECT_EQ(cat.outChannels(4), 12);
  EXPECT_TRUE(last.forward(xs).value().bitEqual(xs.back().value()));
  const Tensor m = mx.forward(xs).value();
  for (int64_t i = 0; i < 7 * 4; ++i)
    EXPECT_EQ(m.at(i), std::max({xs[0].value().at(i), xs[1].value().at(i), xs[2].value().at(i)}));
}

TEST(JumpingKnowledge, LstmGradientsMatchFiniteDifferences) {
  Generator gen(2);
  JumpingKnowledge jk("lstm", 3, 3, gen, DType::F64);  // hidden 4
  const auto xs = layerOutputs(3, 5, 3, DType::F64, true);
  std::vector<std::pair<std::string, Variable>> inputs;
  for (size_t l = 0; l < xs.size(); ++l) inputs.emplace_back("x" + std::to_string(l), xs[l]);
  testing::expectParameterGradientsMatch(testing::withInputs(jk, inputs),
                                         [&] { return testing::projected(jk.forward(xs)); }, 100, 0);
}

TEST(JumpingKnowledge, ClonesAndRefuses) {
  Generator gen(3);
  JumpingKnowledge jk("lstm", 4, 2, gen);
  const auto xs = layerOutputs(2, 9, 4, DType::F32, false);
  std::unique_ptr<JumpingKnowledge> copy = cloneModule(jk);
  EXPECT_TRUE(copy->forward(xs).value().bitEqual(jk.forward(xs).value()));
  EXPECT_THROW(JumpingKnowledge("sum", 4, 2, gen), std::invalid_argument);
  EXPECT_THROW(JumpingKnowledge("lstm", 1, 1, gen), std::invalid_argument);  // hidden (1 * 1) // 2 = 0
  EXPECT_THROW(jk.forward(layerOutputs(2, 9, 5, DType::F32, false)), std::invalid_argument);
  EXPECT_THROW(jk.forward({}), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
