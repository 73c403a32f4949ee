// molecule_property --uncertainty mc-dropout (app/McDropout.h): a short ESOL run with dropout writes the mean and
// the z-scaled variance of 5 MC dropout samples per test molecule; `predict` reproduces them bit for bit with
// other batch shapes (--eval-buckets 1 and 3) and for the test molecules alone in reverse order; training keeps
// its bits (the run without MC dropout trains the same parameters); and the refusals name their flag.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

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

const std::string kRun =
    "--data " + kEsolCsv +
    " --target-cols 'measured log solubility in mols per litre' --limit 300 --split random "
    "--epochs 2 --hidden 16 --layers 2 --batch-size 32 --seed 3 --threads 1 --quiet --json --dropout 0.2";

// A predictions CSV: its header and its rows by SMILES, each without its line and id (the first two fields).
struct Csv {
  std::string header;
  std::map<std::string, std::string> rows;  // smiles -> "smiles,prediction,uncertainty"
  std::vector<std::string> smiles;          // in file order
};
Csv readCsv(const std::string& path) {
  std::ifstream in(path);
  Csv c;
  std::getline(in, c.header);
  for (std::string line; std::getline(in, line);) {
    const std::string rest = line.substr(line.find(',', line.find(',') + 1) + 1);  // ESOL's SMILES have no comma
    const std::string smiles = rest.substr(0, rest.find(','));
    c.rows[smiles] = rest;
    c.smiles.push_back(smiles);
  }
  return c;
}

// Field k (0 = smiles) of a row as "smiles,prediction,uncertainty".
std::string field(const std::string& row, int k) {
  size_t at = 0;
  for (int i = 0; i < k; ++i) at = row.find(',', at) + 1;
  return row.substr(at, row.find(',', at) - at);
}

class McDropout : public gnn::testing::SuiteScratchFolderTest<McDropout> {
 protected:
  static void SetUpTestSuite() {
    makeFolder("mcdropout_test");
    ProgramResult r = runExample("molecule_property",
                                 kRun + " --uncertainty mc-dropout --mc-samples 5 --save " + path("mc.ckpt") +
                                     " --predict " + path("test.csv"),
                                 false);
    ASSERT_EQ(r.code, 0) << r.out;
    result_ = lastJson(r.out);
  }
  static nlohmann::json result_;
};
nlohmann::json McDropout::result_;

TEST_F(McDropout, WritesCalibratedUncertaintyAndScoresIt) {
  const nlohmann::json& u = result_.at("uncertainty");
  EXPECT_EQ(u.at("estimator"), "mc-dropout");
  EXPECT_EQ(u.at("mc_dropout"), nlohmann::json({{"samples", 5}, {"seed", 3}}));
  EXPECT_EQ(u.at("calibration").at("method"), "zscaling");
  for (const char* k : {"nll", "spearman", "miscalibration_area"}) {
    EXPECT_TRUE(u.at("test_uncertainty").at("uncalibrated").at(k).is_number()) << k << " " << u.dump();
    EXPECT_TRUE(u.at("test_uncertainty").at("calibrated").at(k).is_number()) << k;
  }
  std::cout << "MC dropout (5 samples): test miscalibration area "
            << u["test_uncertainty"]["uncalibrated"]["miscalibration_area"] << " uncalibrated, "
            << u["test_uncertainty"]["calibrated"]["miscalibration_area"] << " z-scaled (s^2 "
            << u["calibration"]["variance_scale"] << "); NLL " << u["test_uncertainty"]["uncalibrated"]["nll"]
            << " -> " << u["test_uncertainty"]["calibrated"]["nll"] << ", Spearman "
            << u["test_uncertainty"]["uncalibrated"]["spearman"] << "\n";
  const Csv test = readCsv(path("test.csv"));
  EXPECT_EQ(test.header, "line,id,smiles,prediction,uncertainty");
  ASSERT_EQ(static_cast<int64_t>(test.rows.size()), result_.at("test_graphs").get<int64_t>());
  for (const auto& [smiles, row] : test.rows) EXPECT_GT(std::stod(field(row, 2)), 0.0) << row;
  Checkpoint ck = Checkpoint::load(path("mc.ckpt"));
  EXPECT_EQ(ck.meta.at("mc_dropout"), nlohmann::json({{"samples", 5}, {"seed", 3}}));
  EXPECT_EQ(ck.meta.at("ensemble").at("size"), 1);
}

TEST_F(McDropout, PredictReproducesItInAnyBatching) {
  const Csv test = readCsv(path("test.csv"));
  ASSERT_FALSE(test.rows.empty());
  for (const char* buckets : {"1", "3"}) {
    ProgramResult r = runExample("predict", "--checkpoint " + path("mc.ckpt") + " --input " + kEsolCsv + " --out " +
                                                path("all.csv") + " --eval-buckets " + buckets + " --threads 1 --quiet");
    ASSERT_EQ(r.code, 0) << r.out;
    const Csv all = readCsv(path("all.csv"));
    EXPECT_EQ(all.header, test.header);
    for (const auto& [smiles, row] : test.rows) {
      auto it = all.rows.find(smiles);
      ASSERT_NE(it, all.rows.end()) << smiles;
      EXPECT_EQ(it->second, row) << "--eval-buckets " << buckets;
    }
  }
  // The test molecules alone, in reverse order: other neighbours, positions and lines, the same bits.
  {
    std::ofstream out(path("reversed.csv"));
    out << "smiles\n";
    for (auto it = test.smiles.rbegin(); it != test.smiles.rend(); ++it) out << *it << "\n";
  }
  ProgramResult r = runExample("predict", "--checkpoint " + path("mc.ckpt") + " --input " + path("reversed.csv") +
                                              " --out " + path("reversed_out.csv") + " --threads 1 --quiet");
  ASSERT_EQ(r.code, 0) << r.out;
  const Csv reversed = readCsv(path("reversed_out.csv"));
  ASSERT_EQ(reversed.rows.size(), test.rows.size());
  for (const auto& [smiles, row] : test.rows) EXPECT_EQ(reversed.rows.at(smiles), row);
}

TEST_F(McDropout, TrainingKeepsItsBitsAndSamplesAreNotThePlainPass) {
  ProgramResult r = runExample("molecule_property",
                               kRun + " --save " + path("plain.ckpt") + " --predict " + path("plain.csv"), false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json plain = lastJson(r.out);
  EXPECT_FALSE(plain.contains("uncertainty"));
  EXPECT_EQ(plain.at("param_checksum"), result_.at("param_checksum"));
  EXPECT_EQ(plain.at("test_metric"), result_.at("test_metric"));
  const Csv mc = readCsv(path("test.csv")), one = readCsv(path("plain.csv"));
  EXPECT_EQ(one.header, "line,id,smiles,prediction");
  int64_t differ = 0;
  for (const auto& [smiles, row] : mc.rows) differ += field(row, 1) != field(one.rows.at(smiles), 1);
  EXPECT_GT(differ, static_cast<int64_t>(mc.rows.size()) / 2) << "the MC mean should not be the plain prediction";
  // predict --uncertainty mc-dropout on the plain run's checkpoint: the same samples (seed 3, 5 passes), so the same
  // means; the variances are not z-scaled (that run fitted no calibration).
  r = runExample("predict", "--checkpoint " + path("plain.ckpt") + " --input " + kEsolCsv + " --out " +
                                path("plain_mc.csv") + " --uncertainty mc-dropout --mc-samples 5 --threads 1 --quiet");
  ASSERT_EQ(r.code, 0) << r.out;
  const Csv asked = readCsv(path("plain_mc.csv"));
  EXPECT_EQ(asked.header, "line,id,smiles,prediction,uncertainty");
  for (const auto& [smiles, row] : mc.rows) EXPECT_EQ(field(asked.rows.at(smiles), 1), field(row, 1)) << smiles;
}

TEST_F(McDropout, RefusalsNameTheirFlag) {
  const std::string noDropout = "--data " + kEsolCsv +
                                " --target-cols 'measured log solubility in mols per litre' --limit 300 --epochs 1 "
                                "--hidden 16 --layers 2 --threads 1 --quiet";
  expectUsageError(runExample("molecule_property", noDropout + " --uncertainty mc-dropout"),
                   "train with --dropout > 0");
  expectUsageError(runExample("molecule_property", kRun + " --uncertainty mc-dropout --ensemble-size 2"),
                   "--ensemble-size 2");
  expectUsageError(runExample("molecule_property", kRun + " --mc-samples 4"), "--mc-samples applies to");
  expectUsageError(runExample("molecule_property", kRun + " --uncertainty mc-dropout --mc-samples 0"),
                   "--mc-samples");
  expectUsageError(runExample("molecule_property", kRun + " --uncertainty bayes"), "--uncertainty");
  expectUsageError(runExample("molecule_property", kRun + " --uncertainty mc-dropout --task regression-mve"),
                   "regression-mve");
  // predict: a model without dropout, and --mc-samples for a checkpoint without MC dropout.
  ProgramResult r = runExample("molecule_property", noDropout + " --save " + path("nodrop.ckpt"));
  ASSERT_EQ(r.code, 0) << r.out;
  expectUsageError(runExample("predict", "--checkpoint " + path("nodrop.ckpt") + " --input " + kEsolCsv + " --out " +
                                             path("x.csv") + " --uncertainty mc-dropout"),
                   "train with --dropout > 0");
  expectUsageError(runExample("predict", "--checkpoint " + path("nodrop.ckpt") + " --input " + kEsolCsv + " --out " +
                                             path("x.csv") + " --mc-samples 3"),
                   "--mc-samples applies to MC dropout");
}

}  // namespace
