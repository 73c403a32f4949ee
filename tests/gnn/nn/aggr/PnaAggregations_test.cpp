// PNA's aggregations (gnn/nn/aggr): min, var and std against a direct computation, with an empty destination
// and one holding equal messages (std's clamp), finite-difference gradients; DegreeScalerAggregation's scalers
// and averages against PyG's formulas.
#include <gtest/gtest.h>

#include <cmath>

#include "CloneCheck.h"
#include "GradCheck.h"
#include "gnn/nn/aggr/DegreeScalerAggregation.h"
#include "gnn/nn/aggr/MinAggregation.h"
#include "gnn/nn/aggr/StdAggregation.h"
#include "gnn/nn/aggr/VarAggregation.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

// Messages 0..5 to destinations 2, 0, 2, 2, 0, 4 of 5 rows: rows 1 and 3 receive nothing, row 4 one message.
Tensor index() { return Tensor::fromVector<int64_t>({2, 0, 2, 2, 0, 4}, {6}); }
Tensor messages() { return Tensor::fromVector<double>({1, -1, 2, 5, -3, 0, 4, 4, 0.5, 7, 0.25, 0.25}, {6, 2}); }

// Per destination and feature: the population variance of its messages by the two-pass formula, 0 if none.
std::vector<double> directVariance(const Tensor& x, const Tensor& idx, int64_t n) {
  std::vector<double> out(static_cast<size_t>(n * x.dim(1)), 0.0);
  for (int64_t s = 0; s < n; ++s)
    for (int64_t f = 0; f < x.dim(1); ++f) {
      double sum = 0, count = 0, sq = 0;
      for (int64_t e = 0; e < x.dim(0); ++e)
        if (idx.data<int64_t>()[e] == s) sum += x.at(e * x.dim(1) + f), ++count;
      if (count == 0) continue;
      for (int64_t e = 0; e < x.dim(0); ++e)
        if (idx.data<int64_t>()[e] == s) sq += std::pow(x.at(e * x.dim(1) + f) - sum / count, 2);
      out[s * x.dim(1) + f] = sq / count;
    }
  return out;
}

TEST(PnaAggregations, MinVarStdMatchDirectComputation) {
  const Variable x(messages());
  const Tensor min = MinAggregation().forward(x, index(), 5).value();
  const Tensor var = VarAggregation().forward(x, index(), 5).value();
  const Tensor sd = StdAggregation().forward(x, index(), 5).value();
  // Row 0: messages 1 and 4; row 2: messages 0, 2 and 3; row 4: message 5.
  const std::vector<double> wantMin = {0.5, 5, 0, 0, -3, -1, 0, 0, 0.25, 0.25};
  const std::vector<double> wantVar = directVariance(messages(), index(), 5);
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_DOUBLE_EQ(min.at(i), wantMin[i]) << i;
    EXPECT_NEAR(var.at(i), wantVar[i], 1e-12) << i;
    // PyG's clamp(min=1e-5) before the root: sqrt(1e-5) where nothing arrives or the messages are equal.
    EXPECT_NEAR(sd.at(i), std::sqrt(std::max(wantVar[i], 1e-5)), 1e-12) << i;
  }
  EXPECT_EQ(var.at(8), 0.0);  // one message: mean(x^2) - mean(x)^2 is exactly 0
  EXPECT_DOUBLE_EQ(sd.at(2), std::sqrt(1e-5));
}

TEST(PnaAggregations, GradientsMatchFiniteDifferences) {
  for (const char* name : {"min", "var", "std"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Aggregation> aggr = aggregationFromName(name);
    EXPECT_STREQ(aggr->name(), name);
    testing::expectGradientsMatch([&](const std::vector<Variable>& v) { return aggr->forward(v[0], index(), 5); },
                                  {testing::randomTensor({6, 3}, 12)});
  }
}

TEST(PnaAggregations, StdPassesNoGradientWhereClamped) {
  // Destination 4's single message has variance 0 < 1e-5: torch's clamp stops the gradient there.
  Variable x(messages(), true);
  sum(StdAggregation().forward(x, index(), 5)).backward();
  EXPECT_EQ(x.grad().at(10), 0.0);
  EXPECT_EQ(x.grad().at(11), 0.0);
  EXPECT_NE(x.grad().at(0), 0.0);
}

TEST(PnaAggregations, SideBySideGiveEachReductionsOwnBits) {
  // scatterMultiAggregate (what DegreeScalerAggregation runs) against the reductions one by one.
  const std::vector<std::string> names = {"mean", "min", "max", "std", "var", "sum"};
  for (DType dt : {DType::F64, DType::F32}) {
    Variable x(testing::randomTensor({40, 3}, 14).to(dt), true);
    Variable y(x.value().clone(), true);
    const Tensor idx = Tensor::fromVector<int64_t>(std::vector<int64_t>(40, 0), {40});
    Tensor index = idx.clone();
    for (int64_t e = 0; e < 40; ++e) index.data<int64_t>()[e] = (e * 7) % 9 == 3 ? 8 : (e * 5) % 7;  // 9: none
    const Tensor g = testing::randomTensor({10, 18}, 15).to(dt);
    Variable all = scatterMultiAggregate(x, index, 10, names);
    std::vector<Variable> parts;
    for (const std::string& n : names) parts.push_back(aggregationFromName(n)->forward(y, index, 10));
    Variable one = concatCols(parts);
    EXPECT_TRUE(all.value().bitEqual(one.value()));
    sum(mul(all, Variable(g))).backward();
    sum(mul(one, Variable(g))).backward();
    for (int64_t i = 0; i < x.grad().numel(); ++i)
      EXPECT_NEAR(x.grad().at(i), y.grad().at(i), dt == DType::F64 ? 1e-12 : 1e-5) << i;
  }
}

TEST(DegreeScalerAggregation, AveragesAsPyG) {
  // deg[k] nodes of in-degree k: 1 of 0, 3 of 1, 6 of 2, 2 of 3, 1 of 4 (13 nodes).
  const std::vector<int64_t> deg = {1, 3, 6, 2, 1};
  EXPECT_NEAR(DegreeScalerAggregation::averageDegreeLinear(deg), (3 + 12 + 6 + 4) / 13.0, 1e-7);
  const double logs = 3 * std::log(2.0) + 6 * std::log(3.0) + 2 * std::log(4.0) + std::log(5.0);
  EXPECT_NEAR(DegreeScalerAggregation::averageDegreeLog(deg), logs / 13, 1e-6);
  EXPECT_THROW(DegreeScalerAggregation({"mean"}, {"identity"}, {0, 0}), std::invalid_argument);
  EXPECT_THROW(DegreeScalerAggregation({"mean"}, {"quadratic"}, deg), std::invalid_argument);
  EXPECT_THROW(DegreeScalerAggregation({"median"}, {"identity"}, deg), std::invalid_argument);
}

TEST(DegreeScalerAggregation, ScalesEachAggregatorByDegree) {
  const std::vector<int64_t> deg = {1, 3, 6, 2, 1};
  DegreeScalerAggregation aggr({"sum", "max"},
                               {"identity", "amplification", "attenuation", "linear", "inverse_linear"}, deg,
                               false, DType::F64);
  const Tensor out = aggr.forward(Variable(messages()), index(), 5).value();
  ASSERT_EQ(out.shape(), (Shape{5, 5 * 2 * 2}));
  const Tensor sum = scatterSum(Variable(messages()), index(), 5).value();
  const Tensor max = scatterMax(Variable(messages()), index(), 5).value();
  const double lin = aggr.avgDegLin().value().at(0), lg = aggr.avgDegLog().value().at(0);
  EXPECT_EQ(lin, static_cast<double>(static_cast<float>(DegreeScalerAggregation::averageDegreeLinear(deg))));
  const double degree[] = {2, 0, 3, 0, 1};
  for (int64_t s = 0; s < 5; ++s) {
    const double d = degree[s], d1 = std::max(d, 1.0);
    const double factor[] = {1, std::log(d + 1) / lg, lg / std::log(d1 + 1), d / lin, lin / d1};
    for (int k = 0; k < 5; ++k)  // scaler-major, then aggregator, then feature: PyG's column order
      for (int a = 0; a < 2; ++a)
        for (int64_t f = 0; f < 2; ++f)
          EXPECT_NEAR(out.at(s * 20 + k * 4 + a * 2 + f), (a == 0 ? sum : max).at(s * 2 + f) * factor[k], 1e-12)
              << "node " << s << " scaler " << k << " aggregator " << a;
  }
  testing::expectDeepCopy(aggr, *aggr.clone());
  EXPECT_FALSE(aggr.avgDegLin().requiresGrad());  // a buffer unless train_norm
}

TEST(DegreeScalerAggregation, TrainNormGradientsMatchFiniteDifferences) {
  const std::vector<int64_t> deg = {1, 3, 6, 2, 1};
  auto f = [&](const std::vector<Variable>& v) {
    DegreeScalerAggregation aggr({"mean", "std"}, {"amplification", "attenuation", "linear", "inverse_linear"}, deg,
                                 true, DType::F64);
    aggr.avgDegLin() = v[1];
    aggr.avgDegLog() = v[2];
    return aggr.forward(v[0], index(), 5);
  };
  testing::expectGradientsMatch(f, {testing::randomTensor({6, 3}, 13), Tensor::fromVector<double>({1.7}),
                                    Tensor::fromVector<double>({0.9})});
}

}  // namespace
}  // namespace gnn
