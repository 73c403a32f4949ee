// Mean-variance members combined (app/Ensemble.h: the mean of their variances plus the variance of their
// means) and the isotonic calibration of probabilities (fit, apply, and its checkpoint JSON read back or
// refused), against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "app/Ensemble.h"

namespace gnn::app {
namespace {

MoleculePredictions rows(std::vector<float> pred, std::vector<float> target, std::vector<float> var = {}) {
  MoleculePredictions p;
  const auto n = static_cast<int64_t>(pred.size());
  for (int64_t i = 0; i < n; ++i) p.positions.push_back(i);
  p.pred = Tensor::zeros({n, 1});
  p.target = Tensor::zeros({n, 1});
  p.mask = Tensor::zeros({n, 1}, DType::U8);
  if (!var.empty()) p.uncertainty = Tensor::zeros({n, 1});
  for (int64_t i = 0; i < n; ++i) {
    p.pred.matrix<float>()(i, 0) = pred[static_cast<size_t>(i)];
    p.target.matrix<float>()(i, 0) = target[static_cast<size_t>(i)];
    p.mask.matrix<uint8_t>()(i, 0) = 1;
    if (!var.empty()) p.uncertainty.matrix<float>()(i, 0) = var[static_cast<size_t>(i)];
  }
  p.score = p.pred.clone();
  return p;
}

TEST(MveEnsemble, AleatoricPlusEpistemicByHand) {
  // Row 0: means 1, 2, 6 (mean 3, population variance 14/3) and variances 0.5, 1, 3 (mean 1.5): 1.5 + 14/3.
  // Row 1: means alike, variances 2, 2, 2: 2.
  const MoleculePredictions p =
      combineEnsemble({rows({1, 5}, {0, 0}, {0.5f, 2}), rows({2, 5}, {0, 0}, {1, 2}), rows({6, 5}, {0, 0}, {3, 2})},
                      MoleculeTask::RegressionMve);
  EXPECT_EQ(p.pred.matrix<float>()(0, 0), 3.0f);
  EXPECT_EQ(p.uncertainty.matrix<float>()(0, 0), static_cast<float>(1.5 + 14.0 / 3));
  EXPECT_EQ(p.uncertainty.matrix<float>()(1, 0), 2.0f);
  // One member: its own variance, unchanged.
  const MoleculePredictions one = combineEnsemble({rows({1.25f}, {0}, {0.7f})}, MoleculeTask::RegressionMve);
  EXPECT_EQ(one.pred.matrix<float>()(0, 0), 1.25f);
  EXPECT_EQ(one.uncertainty.matrix<float>()(0, 0), 0.7f);
  // A member without variances is refused.
  EXPECT_THROW(combineEnsemble({rows({1}, {0}, {1}), rows({1}, {0})}, MoleculeTask::RegressionMve),
               std::invalid_argument);
}

TEST(IsotonicCalibration, FitsLabelledRowsAndRewritesProbabilities) {
  // Validation probabilities 0.1 .. 0.5 with labels 0 1 0 1 1 (a sixth row unlabelled): the fit 0, .5, .5, 1, 1.
  MoleculePredictions valid = rows({0.3f, 0.1f, 0.5f, 0.2f, 0.4f, 0.45f}, {0, 0, 1, 1, 1, 0});
  valid.mask.matrix<uint8_t>()(5, 0) = 0;
  const UncertaintyCalibration c = fitIsotonic(valid);
  ASSERT_EQ(c.isotonic.size(), 1u);
  EXPECT_EQ(c.isotonic[0].y, (std::vector<double>{0, 0.5, 0.5, 1, 1}));
  MoleculePredictions test = rows({0.15f, 0.05f, 0.9f}, {0, 0, 1});
  c.apply(test);
  EXPECT_NEAR(test.pred.matrix<float>()(0, 0), 0.25f, 1e-7);  // between 0.1 -> 0 and 0.2 -> 0.5
  EXPECT_EQ(test.pred.matrix<float>()(1, 0), 0.0f);
  EXPECT_EQ(test.pred.matrix<float>()(2, 0), 1.0f);
  // The score is the calibrated probability's logit (finite at 0 and 1).
  EXPECT_NEAR(test.score.matrix<float>()(0, 0), std::log(0.25 / 0.75), 1e-6);
  EXPECT_TRUE(std::isfinite(test.score.matrix<float>()(1, 0)));
  EXPECT_LT(test.score.matrix<float>()(1, 0), -15.0f);
}

TEST(IsotonicCalibration, JsonRoundTripAndRefusals) {
  UncertaintyCalibration c;
  c.method = "isotonic";
  c.isotonic.push_back(IsotonicFit{{0.1, 0.30000000000000004, 0.7}, {0, 1.0 / 3, 1}});
  const UncertaintyCalibration back = UncertaintyCalibration::fromJson(nlohmann::json::parse(c.toJson().dump()), "x");
  ASSERT_EQ(back.isotonic.size(), 1u);
  EXPECT_EQ(back.isotonic[0].x, c.isotonic[0].x);  // bit for bit through the text
  EXPECT_EQ(back.isotonic[0].y, c.isotonic[0].y);
  auto refused = [](const char* text) {
    try {
      UncertaintyCalibration::fromJson(nlohmann::json::parse(text), "run.ckpt");
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("run.ckpt: ensemble calibration"), std::string::npos) << e.what();
      return true;
    }
    return false;
  };
  EXPECT_TRUE(refused(R"({"method": "isotonic"})"));
  EXPECT_TRUE(refused(R"({"method": "isotonic", "thresholds": [{"x": [0.1, 0.2]}]})"));
  EXPECT_TRUE(refused(R"({"method": "isotonic", "thresholds": [{"x": [0.2, 0.1], "y": [0, 1]}]})"));
  EXPECT_TRUE(refused(R"({"method": "isotonic", "thresholds": [{"x": [0.1, 0.2], "y": [1, 0]}]})"));
  EXPECT_TRUE(refused(R"({"method": "isotonic", "thresholds": [{"x": [0.1, 0.2], "y": [0, 1.5]}]})"));
  EXPECT_TRUE(refused(R"({"method": "isotonic", "thresholds": [{"x": [0.1], "y": [0, 1]}]})"));
  EXPECT_FALSE(refused(R"({"method": "isotonic", "thresholds": [{"x": [], "y": []}]})"));
}

}  // namespace
}  // namespace gnn::app
