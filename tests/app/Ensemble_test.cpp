// Combining ensemble members' predictions (app/Ensemble.h) and the z-scaling calibration, against
// hand-computed values; the checkpoint metadata read back and refused when malformed.
#include "app/Ensemble.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gnn::app {
namespace {

MoleculePredictions rows(std::vector<float> pred, std::vector<float> target) {
  MoleculePredictions p;
  const auto n = static_cast<int64_t>(pred.size());
  for (int64_t i = 0; i < n; ++i) p.positions.push_back(i);
  p.pred = Tensor::zeros({n, 1});
  p.target = Tensor::zeros({n, 1});
  p.mask = Tensor::zeros({n, 1}, DType::U8);
  for (int64_t i = 0; i < n; ++i) {
    p.pred.matrix<float>()(i, 0) = pred[static_cast<size_t>(i)];
    p.target.matrix<float>()(i, 0) = target[static_cast<size_t>(i)];
    p.mask.matrix<uint8_t>()(i, 0) = 1;
  }
  p.score = p.pred.clone();
  return p;
}

TEST(Ensemble, MeanAndPopulationVarianceByHand) {
  // Row 0: members 1, 2, 6: mean 3, variance ((-2)^2 + (-1)^2 + 3^2) / 3 = 14 / 3. Row 1: all 5: variance 0.
  const MoleculePredictions p = combineEnsemble(
      {rows({1, 5}, {0, 0}), rows({2, 5}, {0, 0}), rows({6, 5}, {0, 0})}, MoleculeTask::Regression);
  EXPECT_EQ(p.pred.matrix<float>()(0, 0), 3.0f);
  EXPECT_EQ(p.uncertainty.matrix<float>()(0, 0), static_cast<float>(14.0 / 3));
  EXPECT_EQ(p.score.matrix<float>()(0, 0), 3.0f);
  EXPECT_EQ(p.uncertainty.matrix<float>()(1, 0), 0.0f);
  EXPECT_THROW(combineEnsemble({rows({1}, {0}), rows({1, 2}, {0, 0})}, MoleculeTask::Regression),
               std::invalid_argument);
}

TEST(Ensemble, ClassificationAveragesProbabilities) {
  // Probabilities 0.2 and 0.6: mean 0.4 (score: its logit, below 0), variance 0.04.
  const MoleculePredictions p =
      combineEnsemble({rows({0.2f}, {1}), rows({0.6f}, {1})}, MoleculeTask::Classification);
  EXPECT_NEAR(p.pred.matrix<float>()(0, 0), 0.4f, 1e-7);
  EXPECT_NEAR(p.uncertainty.matrix<float>()(0, 0), 0.04f, 1e-7);
  EXPECT_NEAR(p.score.matrix<float>()(0, 0), std::log(0.4 / 0.6), 1e-6);
}

TEST(Ensemble, ZScalingFitsOnLabelledRowsAndScalesVariances) {
  // Residuals 1 and 2 at variances 1 and 2 (the third row unlabelled): s^2 = (1 + 2) / 2.
  MoleculePredictions valid = rows({0, 0, 0}, {1, 2, 100});
  valid.uncertainty = Tensor::zeros({3, 1});
  valid.uncertainty.matrix<float>()(0, 0) = 1;
  valid.uncertainty.matrix<float>()(1, 0) = 2;
  valid.uncertainty.matrix<float>()(2, 0) = 1;
  valid.mask.matrix<uint8_t>()(2, 0) = 0;
  const UncertaintyCalibration c = fitZScaling(valid);
  ASSERT_EQ(c.varianceScale.size(), 1u);
  EXPECT_DOUBLE_EQ(c.varianceScale[0], 1.5);
  c.apply(valid);
  EXPECT_EQ(valid.uncertainty.matrix<float>()(1, 0), 3.0f);
  const UncertaintyCalibration back = UncertaintyCalibration::fromJson(c.toJson(), "x.ckpt");
  EXPECT_EQ(back.method, "zscaling");
  EXPECT_EQ(back.varianceScale, c.varianceScale);
  EXPECT_THROW(
      UncertaintyCalibration::fromJson({{"method", "zscaling"}, {"variance_scale", {-1.0}}}, "x.ckpt"),
      std::runtime_error);
  EXPECT_THROW(UncertaintyCalibration::fromJson({{"method", "platt"}}, "x.ckpt"), std::runtime_error);
  // The scores of the calibrated rows: the NLL of the two labelled rows, by hand.
  const nlohmann::json s = uncertaintyScores(valid, {"y"});
  const double nll = (0.5 * std::log(2 * M_PI * 1.5) + 1 / 3.0 + 0.5 * std::log(2 * M_PI * 3) + 4 / 6.0) / 2;
  EXPECT_NEAR(s.at("nll").get<double>(), nll, 1e-6);
  EXPECT_NEAR(s.at("per_target").at("y").at("spearman").get<double>(), 1.0, 1e-12);
}

TEST(Ensemble, PlattRecalibratesTheProbabilities) {
  // Mean probability 0.5 (logit 0) and 0.8 (logit log 4) under a = 2, b = -1: sigmoid(-1) and sigmoid(2 log 4
  // - 1).
  MoleculePredictions p = combineEnsemble({rows({0.5f, 0.8f}, {0, 1})}, MoleculeTask::Classification);
  UncertaintyCalibration c;
  c.method = "platt";
  c.plattA = {2};
  c.plattB = {-1};
  c.apply(p);
  EXPECT_NEAR(p.pred.matrix<float>()(0, 0), 1 / (1 + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(p.pred.matrix<float>()(1, 0), 1 / (1 + std::exp(-(2 * std::log(4.0) - 1))), 1e-6);
  EXPECT_EQ(p.uncertainty.matrix<float>()(0, 0), 0.0f);  // one member: no spread, and Platt leaves it
  const UncertaintyCalibration back = UncertaintyCalibration::fromJson(c.toJson(), "x.ckpt");
  EXPECT_EQ(back.plattA, c.plattA);
  EXPECT_EQ(back.plattB, c.plattB);
  // Binary NLL of the written probabilities, by hand.
  const nlohmann::json s = classificationUncertaintyScores(p, {"y"});
  const double p0 = 1 / (1 + std::exp(1.0)), p1 = 1 / (1 + std::exp(-(2 * std::log(4.0) - 1)));
  EXPECT_NEAR(s.at("nll").get<double>(), -(std::log(1 - p0) + std::log(p1)) / 2, 1e-6);
}

TEST(Ensemble, CheckpointMetadataIsCheckedWhenRead) {
  Checkpoint ck;
  ck.source = "e.ckpt";
  EXPECT_FALSE(EnsembleInfo::fromCheckpoint(ck).has_value());
  EnsembleInfo info;
  info.size = 2;
  info.seeds = {0, 1};
  ck.meta["ensemble"] = info.toJson();
  ck.tensors["member0.head.weight"] = Tensor::zeros({1, 1});
  try {
    EnsembleInfo::fromCheckpoint(ck);
    FAIL() << "a missing member was not refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("member 1 (member1.*)"), std::string::npos) << e.what();
  }
  ck.tensors["member1.head.weight"] = Tensor::zeros({1, 1});
  const std::optional<EnsembleInfo> back = EnsembleInfo::fromCheckpoint(ck);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->size, 2);
  EXPECT_EQ(back->seeds, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(back->calibration.method, "none");
}

}  // namespace
}  // namespace gnn::app
