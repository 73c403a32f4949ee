// molecule_property --ensemble-size (app/Ensemble.h): three tiny GIN members on ESOL write a prediction and
// an uncertainty per test molecule, predict reproduces both bit for bit from the one checkpoint, z-scaling
// fitted on the validation set lowers the test set's miscalibration area, member 0 is the run of
// --ensemble-size 1 (which keeps today's output: no uncertainty column), and the refusals name their flag.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

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
using gnn::testing::PredictionCsv;
using gnn::testing::readPredictionCsv;

const std::string kRun =
    "--data " + kEsolCsv +
    " --target-cols 'measured log solubility in mols per litre' --limit 300 --split random "
    "--epochs 2 --hidden 16 --layers 2 --batch-size 32 --seed 3 --threads 1 --quiet --json";

class Ensemble : public gnn::testing::SuiteScratchFolderTest<Ensemble> {
 protected:
  static void SetUpTestSuite() {
    makeFolder("ensemble_test");
    ProgramResult r = runExample(
        "molecule_property",
        kRun + " --ensemble-size 3 --save " + path("ens.ckpt") + " --predict " + path("test.csv"), false);
    ASSERT_EQ(r.code, 0) << r.out;
    result_ = lastJson(r.out);
  }
  static nlohmann::json result_;
};
nlohmann::json Ensemble::result_;

TEST_F(Ensemble, ThreeMembersWriteUncertaintyAndPredictReproducesIt) {
  const nlohmann::json& e = result_.at("ensemble");
  EXPECT_EQ(e.at("size"), 3);
  EXPECT_EQ(e.at("seeds"), nlohmann::json({3, 4, 5}));
  ASSERT_EQ(e.at("members").size(), 3u);
  EXPECT_EQ(e.at("calibration").at("method"), "zscaling");
  ASSERT_TRUE(e.at("test_rmse").is_number()) << e.dump();
  // The members differ (another initialisation each), so their mean is another model than member 0.
  EXPECT_NE(e.at("members")[0].at("test_rmse"), e.at("members")[1].at("test_rmse"));

  const PredictionCsv test = readPredictionCsv(path("test.csv"));
  EXPECT_EQ(test.header, "line,id,smiles,prediction,uncertainty");
  ASSERT_EQ(static_cast<int64_t>(test.rows.size()), result_.at("test_graphs").get<int64_t>());
  for (const auto& [line, row] : test.rows) EXPECT_GT(std::stod(row.substr(row.rfind(',') + 1)), 0.0) << row;

  Checkpoint ck = Checkpoint::load(path("ens.ckpt"));
  EXPECT_EQ(ck.meta.at("ensemble").at("size"), 3);
  EXPECT_EQ(ck.meta.at("ensemble").at("calibration"),
            e.at("calibration").at("method") == "zscaling"
                ? nlohmann::json(
                      {{"method", "zscaling"}, {"variance_scale", e.at("calibration").at("variance_scale")}})
                : nlohmann::json());
  for (const char* member :
       {"member0.head.weight", "member1.head.weight", "member2.head.weight", "best.head.weight"})
    EXPECT_EQ(ck.tensors.count(member), 1u) << member;
  // Member 0's weights are the best weights the single-model part of the checkpoint keeps.
  EXPECT_EQ(std::memcmp(ck.tensors.at("member0.head.weight").raw(), ck.tensors.at("best.head.weight").raw(),
                        ck.tensors.at("best.head.weight").nbytes()),
            0);

  // predict over the whole file: each test molecule's row, prediction and uncertainty, as --predict wrote it.
  ProgramResult r = runExample("predict", "--checkpoint " + path("ens.ckpt") + " --input " + kEsolCsv +
                                              " --out " + path("all.csv") + " --threads 1 --quiet");
  ASSERT_EQ(r.code, 0) << r.out;
  const PredictionCsv all = readPredictionCsv(path("all.csv"));
  EXPECT_EQ(all.header, test.header);
  for (const auto& [line, row] : test.rows) {
    auto it = all.rows.find(line);
    ASSERT_NE(it, all.rows.end()) << "line " << line;
    EXPECT_EQ(it->second, row);
  }
}

TEST_F(Ensemble, CalibrationLowersTheTestMiscalibrationArea) {
  const nlohmann::json& u = result_.at("ensemble").at("test_uncertainty");
  const double before = u.at("uncalibrated").at("miscalibration_area").get<double>();
  const double after = u.at("calibrated").at("miscalibration_area").get<double>();
  std::cout << "test miscalibration area: " << before << " uncalibrated, " << after
            << " after z-scaling (s^2 " << result_["ensemble"]["calibration"]["variance_scale"].dump()
            << "); NLL " << u["uncalibrated"]["nll"].dump() << " -> " << u["calibrated"]["nll"].dump()
            << ", Spearman " << u["uncalibrated"]["spearman"].dump() << "\n";
  EXPECT_LT(after, before);
  EXPECT_LT(u.at("calibrated").at("nll").get<double>(), u.at("uncalibrated").at("nll").get<double>());
  // One factor per target scales every variance alike: the ranking of the errors does not change.
  EXPECT_EQ(u.at("calibrated").at("spearman"), u.at("uncalibrated").at("spearman"));
}

TEST_F(Ensemble, SizeOneIsMemberZeroWithTodaysOutput) {
  ProgramResult r = runExample("molecule_property", kRun + " --predict " + path("one.csv"), false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json one = lastJson(r.out);
  EXPECT_FALSE(one.contains("ensemble"));
  EXPECT_EQ(one.at("test_metric"), result_.at("test_metric"));
  EXPECT_EQ(one.at("param_checksum"), result_.at("param_checksum"));
  EXPECT_EQ(one.at("test_metric"), result_.at("ensemble").at("members")[0].at("test_rmse"));
  EXPECT_EQ(readPredictionCsv(path("one.csv")).header, "line,id,smiles,prediction");
}

TEST_F(Ensemble, ClassificationWithPlattScaling) {
  // BBBP: two members; the mean probability recalibrated by Platt scaling fitted on validation is what
  // --predict and predict write (with the members' variance); a > 0 keeps the order, so ROC-AUC does not
  // change.
  const std::string& bbbp = gnn::testing::kBbbpCsv;
  ProgramResult r = runExample("molecule_property",
                               "--data " + bbbp +
                                   " --target-cols p_np --limit 300 --split random "
                                   "--epochs 2 --hidden 16 --layers 2 --batch-size 32 --threads 1 "
                                   "--quiet --json --ensemble-size 2 --calibration platt --save " +
                                   path("c.ckpt") + " --predict " + path("c.csv"),
                               false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json e = lastJson(r.out).at("ensemble");
  ASSERT_EQ(e.at("calibration").at("method"), "platt") << e.dump();
  const double a = e.at("calibration").at("a")[0].get<double>();
  std::cout << "Platt a " << a << ", b " << e["calibration"]["b"][0] << "; test NLL "
            << e["test_uncertainty"]["uncalibrated"]["nll"] << " -> "
            << e["test_uncertainty"]["calibrated"]["nll"] << "\n";
  if (a > 0) {
    EXPECT_EQ(e.at("test_calibrated_details").at("rocauc"), e.at("test_rocauc"));
  }
  const PredictionCsv test = readPredictionCsv(path("c.csv"));
  EXPECT_EQ(test.header, "line,id,smiles,prediction,uncertainty");
  r = runExample("predict",
                 "--checkpoint " + path("c.ckpt") + " --input " + bbbp + " --out " + path("call.csv") +
                     " --threads 1 --quiet",
                 false);
  ASSERT_EQ(r.code, 0) << r.out;
  const PredictionCsv all = readPredictionCsv(path("call.csv"));
  ASSERT_FALSE(test.rows.empty());
  for (const auto& [line, row] : test.rows) {
    auto it = all.rows.find(line);
    ASSERT_NE(it, all.rows.end()) << "line " << line;
    EXPECT_EQ(it->second, row);
  }
}

TEST_F(Ensemble, RefusalsNameTheirFlag) {
  expectUsageError(runExample("molecule_property", kRun + " --ensemble-size 0"), "--ensemble-size");
  expectUsageError(runExample("molecule_property", kRun + " --ensemble-size 2 --calibration isotonic"),
                   "--calibration");
  expectUsageError(runExample("molecule_property", kRun + " --ensemble-size 2 --calibration platt"),
                   "--calibration platt applies to classification, but the task is regression");
  expectUsageError(runExample("molecule_property", kRun + " --load " + path("ens.ckpt")),
                   "--ensemble-size 3");
  expectUsageError(runExample("predict", "--checkpoint " + path("ens.ckpt") + " --input " + kEsolCsv +
                                             " --out " + path("x.csv") + " --weights last"),
                   "--weights last");
}

}  // namespace
