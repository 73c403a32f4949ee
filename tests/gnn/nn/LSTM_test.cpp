// gnn/nn/LSTM against torch.nn.LSTM itself (tests/reference/torch_lstm.py: outputs and the gradients of the input
// and of every parameter, float64 and float32, from the same state_dict), torch's parameter names, shapes and
// default initialisation range, and rows that do not see each other (a sequence's bits are the same alone or in a
// larger batch, on 1 or 2 threads).
#include <gtest/gtest.h>

#include "PyGReference.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gnn/nn/Init.h"
#include "gnn/nn/LSTM.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using json = nlohmann::json;
using testing::readReference;
using testing::relativeError;

Tensor tensorOf(const json& e, DType dtype) {
  return Tensor::fromVector(e["values"].get<std::vector<double>>(), e["shape"].get<Shape>()).to(dtype);
}

LSTM fromReference(const json& ref, DType dtype, Generator& gen) {
  LSTMOptions o;
  o.bias = ref["kwargs"].value("bias", true);
  o.batchFirst = ref["kwargs"].value("batch_first", false);
  o.bidirectional = ref["kwargs"].value("bidirectional", false);
  return LSTM(ref["input_size"].get<int64_t>(), ref["hidden_size"].get<int64_t>(), gen, o, dtype);
}

class TorchLSTM : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchLSTM, MatchesTorch) {
  const json ref = readReference("lstm_" + GetParam());
  for (DType dt : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dt));
    Generator gen(5);
    LSTM lstm = fromReference(ref, dt, gen);
    // torch's state_dict: the same names, in torch's order, with its shapes.
    std::vector<std::string> names;
    for (auto& [name, p] : lstm.namedParameters()) {
      names.push_back(name);
      ASSERT_TRUE(ref["state_dict"].contains(name)) << name;
      Variable v = p;
      v.value() = tensorOf(ref["state_dict"][name], dt);
      EXPECT_EQ(p.shape(), v.shape());
    }
    std::vector<std::string> torchNames;
    for (const auto& [k, v] : ref["state_dict"].items()) torchNames.push_back(k);
    std::sort(torchNames.begin(), torchNames.end());
    std::vector<std::string> sorted = names;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, torchNames);

    Variable x(tensorOf(ref["x"], dt), true);
    Variable out = lstm.forward(x);
    const double tol = dt == DType::F64 ? 1e-12 : 1e-5;
    EXPECT_LE(relativeError(out.value(), tensorOf(ref["out"], dt)), tol);
    sum(mul(out, Variable(tensorOf(ref["out_weights"], dt)))).backward();
    EXPECT_LE(relativeError(x.grad(), tensorOf(ref["grad"]["x"], dt)), tol) << "x";
    for (auto& [name, p] : lstm.namedParameters()) {
      ASSERT_TRUE(p.hasGrad()) << name;
      EXPECT_LE(relativeError(p.grad(), tensorOf(ref["grad"][name], dt)), tol) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, TorchLSTM,
                         ::testing::Values("bidirectional_batch_first", "unidirectional_steps_first",
                                           "bidirectional_no_bias_two_steps", "one_step"),
                         [](const auto& info) { return info.param; });

TEST(LSTM, TorchsDefaultInitialisation) {
  Generator gen(3);
  LSTMOptions o;
  o.bidirectional = true;
  LSTM lstm(7, 16, gen, o);
  const double bound = 1.0 / std::sqrt(16.0);
  ASSERT_EQ(lstm.namedParameters().size(), 8u);
  for (auto& [name, p] : lstm.namedParameters()) {
    double largest = 0;
    for (int64_t i = 0; i < p.value().numel(); ++i) largest = std::max(largest, std::abs(p.value().at(i)));
    EXPECT_LE(largest, bound) << name;
    EXPECT_GT(largest, 0.8 * bound) << name;
  }
  EXPECT_THROW(LSTM(0, 4, gen), std::invalid_argument);
  EXPECT_THROW(lstm.forward(Variable(Tensor({2, 3, 6}))), std::invalid_argument);  // 6 features, not 7
}

// A sequence's outputs and its input's gradient have the same bits alone or among other rows (a fixed-size
// batch's padding), on 1 or 2 threads.
TEST(LSTM, RowsAreIndependentAndThreadCountFree) {
  Generator gen(9);
  LSTMOptions o;
  o.bidirectional = true;
  o.batchFirst = true;
  LSTM lstm(8, 12, gen, o);
  const Tensor big = init::uniform({700, 3, 8}, -1, 1, gen);
  auto run = [&](const Tensor& x) {
    Variable v(x.clone(), true);
    Variable out = lstm.forward(v);
    sum(mul(out, out)).backward();
    return std::make_pair(out.value(), v.grad());
  };
  auto [outBig, gradBig] = run(big);
  const int64_t rows = 5, from = 300, width = 3 * 8;
  Tensor part({rows, 3, 8});
  for (int64_t i = 0; i < rows * width; ++i) part.data<float>()[i] = big.data<float>()[from * width + i];
  auto [outPart, gradPart] = run(part);
  for (int64_t i = 0; i < rows * 3 * 24; ++i) ASSERT_EQ(outPart.data<float>()[i], outBig.data<float>()[from * 72 + i]);
  for (int64_t i = 0; i < rows * width; ++i)
    ASSERT_EQ(gradPart.data<float>()[i], gradBig.data<float>()[from * width + i]);
  setNumThreads(1);
  auto [outOne, gradOne] = run(big);
  setNumThreads(0);
  EXPECT_TRUE(outOne.bitEqual(outBig));
  EXPECT_TRUE(gradOne.bitEqual(gradBig));
}

}  // namespace
}  // namespace gnn
