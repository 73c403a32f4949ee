#include "gnn/metrics/Evaluation.h"

#include <gtest/gtest.h>

namespace gnn {
namespace {

TEST(Evaluation, RegressionScoresMaePerTargetAndStdMaeOverThem) {
  // Two molecules, two targets; the second molecule's second target is unlabelled.
  const Tensor pred = Tensor::fromVector<float>({1.0f, 10.0f, 3.0f, 99.0f}, {2, 2});
  const Tensor target = Tensor::fromVector<float>({2.0f, 14.0f, 3.0f, 0.0f}, {2, 2});
  const Tensor mask = Tensor::fromVector<uint8_t>({1, 1, 1, 0}, {2, 2});
  Evaluation e = scoreTargets(pred, target, mask, false, {"gap", "homo"}, {0.5, 2.0});
  EXPECT_DOUBLE_EQ(e.details["mae_per_target"]["gap"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(e.details["mae_per_target"]["homo"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(e.metric, (0.5 / 0.5 + 4.0 / 2.0) / 2);  // std_mae
  // Without standard deviations every target counts in its own units; one target's metric is its MAE.
  EXPECT_DOUBLE_EQ(scoreTargets(pred, target, mask, false, {"gap", "homo"}).metric, (0.5 + 4.0) / 2);
  const Evaluation unnamed = scoreTargets(pred, target, mask, false, {"gap"});
  EXPECT_TRUE(unnamed.details["mae_per_target"].contains("target1"));  // unnamed targets: target<t>
  const Tensor p1 = Tensor::fromVector<float>({1.0f, 3.0f}, {2, 1}), y1 = Tensor::fromVector<float>({2.0f, 5.0f}, {2, 1});
  const Tensor m1 = Tensor::fromVector<uint8_t>({1, 1}, {2, 1});
  EXPECT_DOUBLE_EQ(scoreTargets(p1, y1, m1, false, {"gap"}, {10.0}).metric, 1.5);
}

TEST(Evaluation, ClassificationScoresRocAucPerTargetAndTheirMean) {
  const Tensor logits = Tensor::fromVector<float>({-2.0f, 1.0f, 0.5f, -1.0f, 3.0f, 0.0f}, {3, 2});
  const Tensor labels = Tensor::fromVector<float>({0.0f, 1.0f, 1.0f, 0.0f, 1.0f, 1.0f}, {3, 2});
  const Tensor mask = Tensor::fromVector<uint8_t>({1, 1, 1, 1, 1, 1}, {3, 2});
  Evaluation e = scoreTargets(logits, labels, mask, true, {"a", "b"});
  EXPECT_DOUBLE_EQ(e.details["rocauc_per_target"]["a"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(e.details["rocauc_per_target"]["b"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(e.metric, 1.0);
  EXPECT_FALSE(e.details.contains("mae_per_target"));
}

// --metric rmse,mae,r2: the first one is the metric (the selection), every one is in the details with its values
// per target; regression values per target on the labelled rows, then averaged over targets as sklearn's
// multioutput="uniform_average" (sklearn per target: rmse 0.4330127018922193, 1.1902380714238083; r2
// 0.8878504672897196, 0.5096153846153846; mae 0.375, 1.1666666666666667).
TEST(Evaluation, MetricListSelectsTheFirstAndReportsEveryOne) {
  const Tensor t = Tensor::fromVector<float>({1.0f, 10.0f, 2.0f, 0.0f, 3.0f, 14.0f, 4.5f, 11.0f}, {4, 2});
  const Tensor q = Tensor::fromVector<float>({1.5f, 9.0f, 2.0f, 0.0f, 2.5f, 13.0f, 4.0f, 12.5f}, {4, 2});
  const Tensor m = Tensor::fromVector<uint8_t>({1, 1, 1, 0, 1, 1, 1, 1}, {4, 2});
  Evaluation e = scoreTargets(q, t, m, parseMetrics("rmse,mae,r2"), {"a", "b"});
  EXPECT_NEAR(e.metric, 0.8116253866580139, 1e-12);
  EXPECT_NEAR(e.details["rmse"].get<double>(), 0.8116253866580139, 1e-12);
  EXPECT_NEAR(e.details["mae"].get<double>(), 0.7708333333333334, 1e-12);
  EXPECT_NEAR(e.details["r2"].get<double>(), 0.6987329259525521, 1e-12);
  EXPECT_NEAR(e.details["rmse_per_target"]["b"].get<double>(), 1.1902380714238083, 1e-12);
  EXPECT_NEAR(e.details["r2_per_target"]["a"].get<double>(), 0.8878504672897196, 1e-12);
  EXPECT_NEAR(e.details["mae_per_target"]["b"].get<double>(), 1.1666666666666667, 1e-12);
  // The order decides the selection only.
  EXPECT_NEAR(scoreTargets(q, t, m, parseMetrics("r2,rmse"), {"a", "b"}).metric, 0.6987329259525521, 1e-12);
}

TEST(Evaluation, DefaultsAreTodaysMetrics) {
  EXPECT_EQ(defaultMetric(true, 12), Metric::RocAuc);
  EXPECT_EQ(defaultMetric(false, 1), Metric::Mae);
  EXPECT_EQ(defaultMetric(false, 3), Metric::StdMae);
  EXPECT_EQ(metricName(Metric::RocAuc), "rocauc");
  EXPECT_TRUE(higherIsBetter(Metric::Prc));
  EXPECT_FALSE(higherIsBetter(Metric::Rmse));
  EXPECT_TRUE(higherIsBetter(Metric::R2));
  EXPECT_TRUE(isClassificationMetric(Metric::Mcc));
  EXPECT_FALSE(isClassificationMetric(Metric::StdMae));
}

TEST(Evaluation, MetricNamesParseAsTheFlagSpellsThem) {
  EXPECT_EQ(parseMetrics("roc,prc,accuracy,f1,mcc"),
            (std::vector<Metric>{Metric::RocAuc, Metric::Prc, Metric::Accuracy, Metric::F1, Metric::Mcc}));
  EXPECT_EQ(parseMetrics("rocauc,ap"), (std::vector<Metric>{Metric::RocAuc, Metric::Prc}));
  EXPECT_EQ(parseMetrics("std_mae"), std::vector<Metric>{Metric::StdMae});
  for (const char* bad : {"", "rmse,", "auc", "mae,mae", "RMSE"}) EXPECT_THROW(parseMetrics(bad), std::invalid_argument) << bad;
  try {
    parseMetrics("mae,bogus");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown metric 'bogus' (known: mae, rmse, r2, std_mae, roc, prc, accuracy"),
              std::string::npos)
        << e.what();
  }
}

TEST(Evaluation, NoRowsScoreNaN) {
  Evaluation e = scoreTargets(Tensor::zeros({0, 1}), Tensor::zeros({0, 1}), Tensor::zeros({0, 1}, DType::U8), false,
                              {"gap"});
  EXPECT_TRUE(std::isnan(e.metric));
  EXPECT_TRUE(e.details.empty());
}

}  // namespace
}  // namespace gnn
