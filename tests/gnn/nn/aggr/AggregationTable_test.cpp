// The aggregation modules PyG's `aggr` argument names (gnn/nn/aggr: SoftmaxAggregation, PowerMeanAggregation,
// MultiAggregation, LSTMAggregation, and the readouts AttentionalAggregation, Set2Set, SortAggregation): PyG
// 2.3.1's outputs and gradients from the same parameters (tests/reference/pyg_aggrs.py),
// finite-difference gradients of the messages and every parameter, destinations unchanged by messages to others
// (a padding row), the same bits on 1 and 2 threads, the spec round trip (clone, aggregationFromPyG(spec())), and
// what is refused.
#include <gtest/gtest.h>

#include <algorithm>

#include "../PyGReference.h"
#include "GradCheck.h"
#include "ParameterGradCheck.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/aggr/Aggregation.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"

namespace gnn::testing {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kCases = {"softmax",      "softmax_t",        "softmax_learn", "softmax_learn_channels",
                                         "softmax_semi_grad", "powermean", "powermean_p2", "powermean_p_half",
                                         "multi_cat",    "multi_sum",        "multi_mean_softmax", "multi_proj",
                                         "attentional",  "attentional_nn",   "set2set",       "sort",
                                         "sort_k5",      "lstm"};

class AggregationTable : public ::testing::TestWithParam<std::string> {};

Tensor indexOf(const json& ref) { return Tensor::fromVector(ref["index"].get<std::vector<int64_t>>()); }

TEST_P(AggregationTable, MatchesPyG) {
  const json ref = readReference("aggr_" + GetParam());
  for (DType dt : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dt));
    const double tol = dt == DType::F64 ? 1e-12 : 1e-5;
    Generator gen(1);
    std::unique_ptr<Aggregation> aggr = aggregationFromPyG(ref["aggr"], gen, dt);
    loadStateDict(*aggr, ref["state_dict"], dt);
    aggr->eval();
    Variable x(matrixOf(ref["x"], dt), true);
    Variable out = aggr->forward(x, indexOf(ref), ref["dim_size"]);
    EXPECT_LE(relativeError(out.value(), matrixOf(ref["out"], dt)), tol) << "output";
    sum(mul(out, Variable(matrixOf(ref["out_weights"], dt)))).backward();
    EXPECT_LE(relativeError(x.grad(), matrixOf(ref["grad"]["x"], dt)), tol) << "gradient of x";
    for (auto& [name, p] : aggr->namedParameters())
      EXPECT_LE(relativeError(p.grad(), flatOf(ref["grad"][name], p.shape(), dt)), tol) << "gradient of " << name;
  }
}

TEST_P(AggregationTable, GradientsMatchFiniteDifferences) {
  const json ref = readReference("aggr_" + GetParam());
  Generator gen(2);
  std::unique_ptr<Aggregation> aggr = aggregationFromPyG(ref["aggr"], gen, DType::F64);
  loadStateDict(*aggr, ref["state_dict"], DType::F64);
  // Messages away from PowerMean's clamp bounds (where the derivative jumps).
  Variable x(init::uniform({11, 4}, 0.1, 0.9, gen, DType::F64), true);
  const Tensor index = indexOf(ref);
  if (GetParam() == "softmax_semi_grad") GTEST_SKIP() << "semi_grad stops a gradient on purpose";
  expectParameterGradientsMatch(withInputs(*aggr, {{"x", x}}),
                                [&] { return projected(aggr->forward(x, index, 5)); }, 1 << 20, 0);
}

TEST_P(AggregationTable, OtherDestinationsChangeNoBit) {
  const json ref = readReference("aggr_" + GetParam());
  Generator gen(3);
  std::unique_ptr<Aggregation> aggr = aggregationFromPyG(ref["aggr"], gen, DType::F32);
  const Tensor x0 = matrixOf(ref["x"], DType::F32);
  const Tensor plain = aggr->forward(Variable(x0), indexOf(ref), 5).value();
  // Three more messages to a sixth destination, after the others (as a fixed-size batch pads): the real rows'
  // bits stay.
  std::vector<int64_t> idx = ref["index"].get<std::vector<int64_t>>();
  idx.insert(idx.end(), {5, 5, 5});
  Tensor x = Tensor::empty({14, 4});
  std::copy(x0.data<float>(), x0.data<float>() + 44, x.data<float>());
  for (int64_t k = 44; k < 56; ++k) x.data<float>()[k] = 1e3f;
  const Tensor padded = aggr->forward(Variable(x), Tensor::fromVector(idx), 6).value();
  EXPECT_TRUE(padded.slice(0, 5).bitEqual(plain));
}

TEST_P(AggregationTable, SameBitsOnOneAndTwoThreads) {
  const json ref = readReference("aggr_" + GetParam());
  Generator g(4);
  const int64_t E = 60000, N = 5000;
  std::vector<int64_t> idx(E);
  for (auto& v : idx) v = static_cast<int64_t>(g.nextBelow(N));
  std::sort(idx.begin(), idx.end());  // a batch vector, as Set2Set and SortAggregation need
  const Tensor index = Tensor::fromVector(idx), x0 = init::uniform({E, 4}, 0, 1, g);
  std::vector<Tensor> runs;
  const int before = numThreads();
  for (int threads : {1, 2}) {
    setNumThreads(threads);
    Generator gen(5);
    std::unique_ptr<Aggregation> aggr = aggregationFromPyG(ref["aggr"], gen, DType::F32);
    Variable x(x0.clone(), true);
    Variable y = aggr->forward(x, index, N);
    sum(mul(y, y)).backward();
    runs.push_back(y.value());
    runs.push_back(x.grad());
  }
  setNumThreads(before);
  EXPECT_TRUE(runs[0].bitEqual(runs[2]));
  EXPECT_TRUE(runs[1].bitEqual(runs[3]));
}

TEST_P(AggregationTable, SpecBuildsTheSameAggregation) {
  const json ref = readReference("aggr_" + GetParam());
  Generator gen(6);
  std::unique_ptr<Aggregation> aggr = aggregationFromPyG(ref["aggr"], gen, DType::F64);
  loadStateDict(*aggr, ref["state_dict"], DType::F64);
  std::unique_ptr<Aggregation> again = aggregationFromPyG(aggr->spec(), gen, DType::F64);
  loadStateDict(*again, ref["state_dict"], DType::F64);
  std::unique_ptr<Module> copy = aggr->clone();
  const Variable x(matrixOf(ref["x"], DType::F64));
  const Tensor want = aggr->forward(x, indexOf(ref), 5).value();
  EXPECT_TRUE(again->forward(x, indexOf(ref), 5).value().bitEqual(want));
  EXPECT_TRUE(static_cast<Aggregation&>(*copy).forward(x, indexOf(ref), 5).value().bitEqual(want));
}

INSTANTIATE_TEST_SUITE_P(Aggregations, AggregationTable, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param; });

TEST(AggregationFromPyG, NamesListsAndRefusals) {
  Generator gen(1);
  EXPECT_STREQ(aggregationFromPyG("add", gen)->name(), "sum");
  EXPECT_STREQ(aggregationFromPyG("SoftmaxAggregation", gen)->name(), "softmax");
  EXPECT_STREQ(aggregationFromPyG("power_mean", gen)->name(), "powermean");
  EXPECT_STREQ(aggregationFromPyG(json::array({"mean", "max"}), gen)->name(), "multi");
  EXPECT_THROW(aggregationFromPyG("lstm", gen), std::invalid_argument);
  EXPECT_THROW(aggregationFromPyG(3, gen), std::invalid_argument);
  EXPECT_THROW(aggregationFromPyG({{"class", "PowerMeanAggregation"}, {"args", {{"learn", true}}}}, gen),
               std::invalid_argument);
  EXPECT_THROW(aggregationFromPyG({{"class", "SoftmaxAggregation"}, {"args", {{"tau", 2}}}}, gen),
               std::invalid_argument);
  EXPECT_THROW(aggregationFromPyG({{"class", "MultiAggregation"}, {"args", {{"aggrs", {"mean"}}, {"mode", "attn"}}}}, gen),
               std::invalid_argument);
  EXPECT_THROW(aggregationFromPyG({{"class", "SoftmaxAggregation"}, {"args", {{"channels", 4}}}}, gen),
               std::invalid_argument);  // channels > 1 needs learn, as PyG
}

}  // namespace
}  // namespace gnn::testing
