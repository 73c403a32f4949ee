// Mean-variance estimation (molecule_property --task regression-mve) and isotonic calibration of
// probabilities (--calibration isotonic): a short ESOL run writes a positive uncertainty per test molecule and
// scores it before and after z-scaling, predict reproduces --predict bit for bit (also in one batch shape), an
// ensemble of mean-variance D-MPNNs combines the members' variances with their spread, a BBBP classifier's
// isotonic probabilities are what --predict and predict write, and the refusals name their flag.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "RunProgram.h"
#include "ScratchFolder.h"
#include "ShippedFiles.h"
#include "gnn/io/Checkpoint.h"

namespace {
namespace fs = std::filesystem;
using namespace gnn;
using gnn::testing::expectUsageError;
using gnn::testing::ProgramResult;
using gnn::testing::runExample;
using gnn::testing::lastJson;
using gnn::testing::kEsolCsv;
using gnn::testing::kBbbpCsv;
using gnn::testing::PredictionCsv;
using gnn::testing::readPredictionCsv;

const std::string kRun =
    "--data " + kEsolCsv +
    " --target-cols 'measured log solubility in mols per litre' --limit 300 --split random "
    "--epochs 4 --hidden 16 --layers 2 --batch-size 32 --seed 3 --threads 1 --quiet --json --task regression-mve";

class MveUncertainty : public gnn::testing::SuiteScratchFolderTest<MveUncertainty> {
 protected:
  static void SetUpTestSuite() {
    makeFolder("mve_test");
    ProgramResult r = runExample("molecule_property",
                                 kRun + " --save " + path("mve.ckpt") + " --predict " + path("test.csv"), false);
    ASSERT_EQ(r.code, 0) << r.out;
    result_ = lastJson(r.out);
  }
  // predict over the whole input must give each row of `expected` (a --predict file) exactly.
  static void expectPredictReproduces(const std::string& ckpt, const std::string& input, const PredictionCsv& expected,
                                      const std::string& extra = "") {
    const std::string out = path("all.csv");
    ProgramResult r = runExample(
        "predict", "--checkpoint " + ckpt + " --input " + input + " --out " + out + " --threads 1 --quiet " + extra,
        false);
    ASSERT_EQ(r.code, 0) << r.out;
    const PredictionCsv all = readPredictionCsv(out);
    EXPECT_EQ(all.header, expected.header);
    ASSERT_FALSE(expected.rows.empty());
    for (const auto& [line, row] : expected.rows) {
      auto it = all.rows.find(line);
      ASSERT_NE(it, all.rows.end()) << "line " << line;
      EXPECT_EQ(it->second, row) << extra;
    }
  }
  static nlohmann::json result_;
};
nlohmann::json MveUncertainty::result_;

TEST_F(MveUncertainty, WritesPositiveVariancesThatPredictReproduces) {
  EXPECT_EQ(result_.at("task"), "regression-mve");
  EXPECT_EQ(result_.at("loss"), "gaussian_nll");
  EXPECT_FALSE(result_.contains("ensemble"));
  const nlohmann::json& u = result_.at("uncertainty");
  EXPECT_EQ(u.at("estimator"), "mve");
  EXPECT_EQ(u.at("size"), 1);
  // The block scores the same model as the top level: the metric is the mean's.
  EXPECT_EQ(u.at("test_rmse"), result_.at("test_metric"));
  EXPECT_EQ(u.at("calibration").at("method"), "zscaling");

  const PredictionCsv test = readPredictionCsv(path("test.csv"));
  EXPECT_EQ(test.header, "line,id,smiles,prediction,uncertainty");
  ASSERT_EQ(static_cast<int64_t>(test.rows.size()), result_.at("test_graphs").get<int64_t>());
  for (const auto& [line, row] : test.rows) EXPECT_GT(std::stod(row.substr(row.rfind(',') + 1)), 0.0) << row;

  // The head gives two numbers per target: a mean and a variance (16 inputs each).
  Checkpoint ck = Checkpoint::load(path("mve.ckpt"));
  EXPECT_EQ(ck.tensors.at("best.head.weight").numel(), 2 * 16);
  EXPECT_EQ(ck.meta.at("config").at("derived").at("task"), "regression-mve");
  EXPECT_EQ(ck.meta.at("ensemble").at("calibration").at("variance_scale"),
            u.at("calibration").at("variance_scale"));

  expectPredictReproduces(path("mve.ckpt"), kEsolCsv, test);
  expectPredictReproduces(path("mve.ckpt"), kEsolCsv, test, "--eval-buckets 1");  // other batches, same bits
}

TEST_F(MveUncertainty, ScoresTheVarianceBeforeAndAfterZScaling) {
  const nlohmann::json& u = result_.at("uncertainty").at("test_uncertainty");
  for (const char* k : {"uncalibrated", "calibrated"})
    for (const char* score : {"nll", "spearman", "miscalibration_area"})
      ASSERT_TRUE(u.at(k).at(score).is_number()) << k << " " << score << ": " << u.dump();
  const double before = u.at("uncalibrated").at("miscalibration_area").get<double>();
  const double after = u.at("calibrated").at("miscalibration_area").get<double>();
  std::cout << "MVE test miscalibration area " << before << " -> " << after << " after z-scaling (s^2 "
            << result_["uncertainty"]["calibration"]["variance_scale"].dump() << "), NLL " << u["uncalibrated"]["nll"]
            << " -> " << u["calibrated"]["nll"] << "\n";
  EXPECT_GE(after, 0.0);
  EXPECT_LE(after, 0.5);
  // One factor per target: the ranking of the errors by the variance does not change.
  EXPECT_EQ(u.at("calibrated").at("spearman"), u.at("uncalibrated").at("spearman"));
}

TEST_F(MveUncertainty, RerunGivesTheSameBits) {
  ProgramResult r = runExample("molecule_property", kRun + " --predict " + path("again.csv"), false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json again = lastJson(r.out);
  EXPECT_EQ(again.at("loss_checksum"), result_.at("loss_checksum"));
  const PredictionCsv a = readPredictionCsv(path("again.csv")), b = readPredictionCsv(path("test.csv"));
  EXPECT_EQ(a.rows, b.rows);
}

TEST_F(MveUncertainty, EnsembleOfMveDmpnnsThatPredictReproduces) {
  ProgramResult r = runExample("molecule_property",
                               "--data " + kEsolCsv +
                                   " --target-cols 'measured log solubility in mols per litre' --limit 300 --split "
                                   "random --epochs 2 --model dmpnn --hidden 16 --depth 2 --ffn-hidden-dim 16 "
                                   "--batch-size 32 --seed 3 --threads 1 --quiet --json --task regression-mve "
                                   "--ensemble-size 2 --save " +
                                   path("ens.ckpt") + " --predict " + path("ens.csv"),
                               false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json e = lastJson(r.out).at("ensemble");
  EXPECT_EQ(e.at("estimator"), "ensemble+mve");
  EXPECT_EQ(e.at("size"), 2);
  EXPECT_TRUE(e.at("test_uncertainty").at("calibrated").at("miscalibration_area").is_number()) << e.dump();
  const PredictionCsv test = readPredictionCsv(path("ens.csv"));
  EXPECT_EQ(test.header, "line,id,smiles,prediction,uncertainty");
  expectPredictReproduces(path("ens.ckpt"), kEsolCsv, test);
}

TEST_F(MveUncertainty, IsotonicClassifierThatPredictReproduces) {
  ProgramResult r = runExample("molecule_property",
                               "--data " + kBbbpCsv +
                                   " --target-cols p_np --limit 300 --split random --epochs 2 --hidden 16 --layers 2 "
                                   "--batch-size 32 --threads 1 --quiet --json --calibration isotonic --save " +
                                   path("iso.ckpt") + " --predict " + path("iso.csv"),
                               false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json u = lastJson(r.out).at("uncertainty");
  ASSERT_EQ(u.at("calibration").at("method"), "isotonic") << u.dump();
  const nlohmann::json& fit = u.at("calibration").at("thresholds").at(0);
  ASSERT_FALSE(fit.at("y").empty());
  EXPECT_TRUE(u.at("test_calibrated_details").at("rocauc").is_number());
  EXPECT_TRUE(u.at("test_uncertainty").at("calibrated").at("nll").is_number());
  // One classifier: the calibrated probability, no uncertainty column; every probability is a value of the fit
  // between its lowest and highest y.
  const PredictionCsv test = readPredictionCsv(path("iso.csv"));
  EXPECT_EQ(test.header, "line,id,smiles,prediction");
  for (const auto& [line, row] : test.rows) {
    const double q = std::stod(row.substr(row.rfind(',') + 1));
    EXPECT_GE(q, fit.at("y").front().get<double>() - 1e-7) << row;
    EXPECT_LE(q, fit.at("y").back().get<double>() + 1e-7) << row;
  }
  expectPredictReproduces(path("iso.ckpt"), kBbbpCsv, test);
}

TEST_F(MveUncertainty, RefusalsNameTheirFlag) {
  expectUsageError(runExample("molecule_property", kRun + " --loss mse"), "--loss mse");
  expectUsageError(runExample("molecule_property", kRun + " --calibration isotonic"), "--calibration isotonic");
  expectUsageError(runExample("molecule_property", kRun + " --calibration platt"), "--calibration platt");
  expectUsageError(runExample("molecule_property", kRun + " --class-balance"), "--class-balance");
  expectUsageError(runExample("molecule_property", kRun + " --task regression-mvee"), "--task");
  // --calibration isotonic on a regression task derived from the labels.
  const std::string regression = "--data " + kEsolCsv +
                                 " --target-cols 'measured log solubility in mols per litre' --limit 50 --epochs 1 "
                                 "--threads 1 --quiet --calibration isotonic";
  expectUsageError(runExample("molecule_property", regression), "--calibration isotonic applies to classification");
}

}  // namespace
