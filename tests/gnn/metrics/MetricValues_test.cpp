// Every metric of gnn/metrics/Metrics.h against scikit-learn's value on fixed small vectors. The reference numbers
// were computed once with scikit-learn 1.2.1 (Debian's python3-sklearn) by this script, and written here:
//
//   from sklearn import metrics as M
//   y = [0, 1, 1, 0, 1, 0, 1, 1, 0, 0];  p = [0.1, 0.8, 0.35, 0.4, 0.9, 0.65, 0.5, 0.2, 0.3, 0.5]  (float32)
//   M.roc_auc_score(y, p)                       # 0.66
//   M.average_precision_score(y, p)             # 0.7453968253968253
//   pr, rc, _ = M.precision_recall_curve(y, p); M.auc(rc, pr)   # 0.7393650793650794 (Chemprop's prc)
//   h = p > 0.5                                  # 0.5 itself is a negative
//   M.accuracy_score(y, h), M.f1_score(y, h), M.matthews_corrcoef(y, h)   # 0.6, 0.5, 0.2182178902359924
//   t = [1.0, 2.5, -0.5, 3.0, 0.0];  q = [0.8, 2.0, 0.1, 3.5, -0.4]
//   M.r2_score(t, q), M.mean_squared_error(t, q, squared=False), M.mean_absolute_error(t, q)
//                                                # 0.886021505376344, 0.46043457732885357, 0.44
//   and per task on the labelled rows of the two-task tables below, averaged over the tasks.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gnn/metrics/Metrics.h"

namespace gnn {
namespace {

const std::vector<float> kLabels = {0, 1, 1, 0, 1, 0, 1, 1, 0, 0};
const std::vector<float> kProbabilities = {0.1f, 0.8f, 0.35f, 0.4f, 0.9f, 0.65f, 0.5f, 0.2f, 0.3f, 0.5f};

// Logits of the probabilities: the threshold metrics take what a model outputs.
Tensor logitsOf(const std::vector<float>& p, std::vector<int64_t> shape) {
  std::vector<float> z;
  for (float v : p)
    z.push_back(static_cast<float>(std::log(static_cast<double>(v) / (1.0 - static_cast<double>(v)))));
  return Tensor::fromVector<float>(z, std::move(shape));
}

TEST(MetricValues, RankingMetricsEqualScikitLearns) {
  const Tensor y = Tensor::fromVector<float>(kLabels, {10, 1}),
               p = Tensor::fromVector<float>(kProbabilities, {10, 1});
  EXPECT_NEAR(rocAuc(p, y), 0.66, 1e-12);
  EXPECT_NEAR(averagePrecision(p, y), 0.7453968253968253, 1e-12);
  // Not Chemprop's trapezoidal area under the precision-recall curve (0.7393650793650794).
  EXPECT_GT(std::abs(averagePrecision(p, y) - 0.7393650793650794), 1e-3);
  // Any increasing transform of the scores (logits instead of probabilities) ranks alike.
  EXPECT_NEAR(averagePrecision(logitsOf(kProbabilities, {10, 1}), y), 0.7453968253968253, 1e-12);
  // One class only: undefined, as OGB's evaluator leaves such a task out.
  EXPECT_TRUE(std::isnan(averagePrecision(p, Tensor::zeros({10, 1}))));
}

TEST(MetricValues, ThresholdMetricsEqualScikitLearnsAtHalf) {
  const Tensor y = Tensor::fromVector<float>(kLabels, {10, 1});
  const Tensor z = logitsOf(kProbabilities, {10, 1});
  EXPECT_NEAR(binaryAccuracy(z, y), 0.6, 1e-12);
  EXPECT_NEAR(f1Score(z, y), 0.5, 1e-12);
  EXPECT_NEAR(matthewsCorrelation(z, y), 0.2182178902359924, 1e-12);
  // sklearn's conventions at the edges: F1 with no positive at all, MCC with a constant prediction, are 0.
  const Tensor none = Tensor::fromVector<float>({-1, -2, -3}, {3, 1});
  EXPECT_EQ(f1Score(none, Tensor::zeros({3, 1})), 0.0);
  EXPECT_EQ(matthewsCorrelation(Tensor::fromVector<float>({1, 1, 1}, {3, 1}),
                                Tensor::fromVector<float>({0, 1, 1}, {3, 1})),
            0.0);
}

TEST(MetricValues, RegressionMetricsEqualScikitLearns) {
  const Tensor t = Tensor::fromVector<float>({1.0f, 2.5f, -0.5f, 3.0f, 0.0f}, {5, 1});
  const Tensor q = Tensor::fromVector<float>({0.8f, 2.0f, 0.1f, 3.5f, -0.4f}, {5, 1});
  // float32 inputs: 0.8f, 0.1f, -0.4f are a few 1e-8 off their decimals.
  EXPECT_NEAR(r2Score(q, t), 0.886021505376344, 1e-6);
  EXPECT_NEAR(rootMeanSquaredError(q, t), 0.46043457732885357, 1e-6);
  EXPECT_NEAR(meanAbsoluteError(q, t), 0.44, 1e-6);
  // Constant targets (sklearn's force_finite): 1 when predicted exactly, else 0; one row: undefined.
  const Tensor c = Tensor::fromVector<float>({2, 2, 2}, {3, 1});
  EXPECT_EQ(r2Score(c, c), 1.0);
  EXPECT_EQ(r2Score(Tensor::fromVector<float>({2, 2, 2.5f}, {3, 1}), c), 0.0);
  EXPECT_TRUE(
      std::isnan(r2Score(Tensor::fromVector<float>({1}, {1, 1}), Tensor::fromVector<float>({2}, {1, 1}))));
}

// Two tasks, each with an unlabelled value (mask 0): each task is scored on its labelled rows, then the tasks
// are averaged. sklearn, task by task on the rows whose label is not NaN:
//   task 0: roc 0.8333333333333333, ap 0.9166666666666665, accuracy 0.6, f1 0.6666666666666666, mcc
//   0.16666666666666666 task 1: roc 0.8333333333333334, ap 0.8333333333333333, accuracy 0.8, f1 0.8, mcc
//   0.6666666666666666
TEST(MetricValues, MissingLabelsAreLeftOutPerTask) {
  const Tensor y = Tensor::fromVector<float>({1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0}, {6, 2});
  const Tensor mask = Tensor::fromVector<uint8_t>({1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1}, {6, 2});
  const std::vector<float> probabilities = {0.7f,  0.2f, 0.4f, 0.9f, 0.6f,  0.8f,
                                            0.55f, 0.3f, 0.1f, 0.6f, 0.45f, 0.7f};
  const Tensor p = Tensor::fromVector<float>(probabilities, {6, 2}), z = logitsOf(probabilities, {6, 2});
  EXPECT_NEAR(rocAuc(p, y, mask), 0.8333333333333333, 1e-12);
  EXPECT_NEAR(averagePrecision(p, y, mask), 0.8749999999999999, 1e-12);
  EXPECT_NEAR(binaryAccuracy(z, y, mask), 0.7, 1e-12);
  EXPECT_NEAR(f1Score(z, y, mask), 0.7333333333333334, 1e-12);
  EXPECT_NEAR(matthewsCorrelation(z, y, mask), 0.41666666666666663, 1e-12);
  // Unmasked, the 0 stored where molecule 1's second label is missing (scored 0.9) would count as a false
  // positive.
  EXPECT_NE(binaryAccuracy(z, y), binaryAccuracy(z, y, mask));

  // Regression, 4 molecules x 2 targets, the second target of molecule 2 unlabelled (sklearn per target:
  // r2 0.8878504672897196 and 0.5096153846153846, rmse 0.4330127018922193 and 1.1902380714238083).
  const Tensor t = Tensor::fromVector<float>({1.0f, 10.0f, 2.0f, 0.0f, 3.0f, 14.0f, 4.5f, 11.0f}, {4, 2});
  const Tensor q = Tensor::fromVector<float>({1.5f, 9.0f, 2.0f, 0.0f, 2.5f, 13.0f, 4.0f, 12.5f}, {4, 2});
  const Tensor m = Tensor::fromVector<uint8_t>({1, 1, 1, 0, 1, 1, 1, 1}, {4, 2});
  EXPECT_NEAR(r2Score(q, t, m), 0.6987329259525521, 1e-12);
  const Tensor firstTarget = Tensor::fromVector<uint8_t>({1, 0, 1, 0, 1, 0, 1, 0}, {4, 2});
  EXPECT_NEAR(rootMeanSquaredError(q, t, firstTarget), 0.4330127018922193, 1e-12);
}

}  // namespace
}  // namespace gnn
