#include "gnn/Evaluation.h"

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

TEST(Evaluation, NoRowsScoreNaN) {
  Evaluation e = scoreTargets(Tensor::zeros({0, 1}), Tensor::zeros({0, 1}), Tensor::zeros({0, 1}, DType::U8), false,
                              {"gap"});
  EXPECT_TRUE(std::isnan(e.metric));
  EXPECT_TRUE(e.details.empty());
}

}  // namespace
}  // namespace gnn
