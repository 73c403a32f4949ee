#include "gnn/metrics/Metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gnn {
namespace {

TEST(Metrics, MaeRmseWithMasks) {
  Tensor p = Tensor::fromVector<float>({1, 2, 3, 100}, {4, 1});
  Tensor t = Tensor::fromVector<float>({2, 2, 5, 0}, {4, 1});
  Tensor m = Tensor::fromVector<uint8_t>({1, 1, 1, 0});
  EXPECT_DOUBLE_EQ(meanAbsoluteError(p, t, m), 1.0);
  EXPECT_DOUBLE_EQ(rootMeanSquaredError(p, t, m), std::sqrt(5.0 / 3.0));
  EXPECT_DOUBLE_EQ(meanAbsoluteError(p, t), 25.75);
}

TEST(Metrics, Accuracy) {
  Tensor logits = Tensor::fromVector<float>({0.1f, 0.9f, 0.8f, 0.2f, 0.3f, 0.7f}, {3, 2});
  Tensor labels = Tensor::fromVector<int64_t>({1, 0, 0});
  EXPECT_DOUBLE_EQ(accuracy(logits, labels), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(accuracy(logits, labels, Tensor::fromVector<uint8_t>({1, 1, 0})), 1.0);
  Tensor binary = Tensor::fromVector<float>({-1, 2, 3});
  EXPECT_DOUBLE_EQ(accuracy(binary, Tensor::fromVector<float>({0, 1, 0})), 2.0 / 3.0);
}

TEST(Metrics, RocAucMatchesMannWhitneyWithTies) {
  // sklearn.metrics.roc_auc_score([0, 0, 1, 1, 1], [0.1, 0.4, 0.35, 0.8, 0.4]) = 0.75
  Tensor s = Tensor::fromVector<float>({0.1f, 0.4f, 0.35f, 0.8f, 0.4f});
  Tensor y = Tensor::fromVector<float>({0, 0, 1, 1, 1});
  EXPECT_NEAR(rocAuc(s, y), 0.75, 1e-12);
  // Two tasks; the second has only positives under the mask and is left out (OGB's evaluator).
  Tensor s2 = Tensor::fromVector<float>({0.1f, 0.9f, 0.4f, 0.2f, 0.35f, 0.3f, 0.8f, 0.1f}, {4, 2});
  Tensor y2 = Tensor::fromVector<float>({0, 1, 0, 1, 1, 1, 1, 0}, {4, 2});
  Tensor m2 = Tensor::fromVector<uint8_t>({1, 1, 1, 1, 1, 1, 1, 0}, {4, 2});
  EXPECT_NEAR(rocAuc(s2, y2, m2), 0.75, 1e-12);  // task 0: positives 0.35, 0.8 vs negatives 0.1, 0.4
  EXPECT_TRUE(std::isnan(rocAuc(s, Tensor::fromVector<float>({1, 1, 1, 1, 1}))));
}

}  // namespace
}  // namespace gnn
