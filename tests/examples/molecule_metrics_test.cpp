// molecule_property's scoring end to end: --metric (the first one selects the best epoch, every one reported,
// the defaults as before), values that equal the metrics recomputed from the --predict file, missing labels
// left out per target, --class-balance, and evaluation-only runs (--load, --epochs 0) that may change the
// batching and the metrics but not the model.
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
#include "gnn/metrics/Metrics.h"

namespace {
namespace fs = std::filesystem;
using gnn::testing::expectUsageError;
using gnn::testing::runExample;
using gnn::testing::kBbbpCsv;

const std::string kLipo = std::string(GNN_SOURCE_DIR) + "/examples/data/moleculenet/Lipophilicity.csv.gz";
// Small and quick: every run here trains a 2x16 GIN for one epoch.
const std::string kSmall = " --layers 2 --hidden 16 --epochs 1 --threads 2 --quiet --json";

nlohmann::json lastJson(const gnn::testing::ProgramResult& r) {
  EXPECT_EQ(r.code, 0) << r.out;
  const size_t at = r.out.rfind("\n{");
  return nlohmann::json::parse(r.out.substr(at == std::string::npos ? r.out.find('{') : at + 1));
}

class MoleculeMetrics : public gnn::testing::ScratchFolderTest {
 protected:
};

TEST_F(MoleculeMetrics, TheFirstMetricSelectsAndEveryOneIsReported) {
  nlohmann::json j = lastJson(
      runExample("molecule_property",
                 "--data " + kLipo + " --target-cols exp --limit 400 --metric rmse,mae,r2" + kSmall, false));
  EXPECT_EQ(j["selection_metric"], "rmse");
  EXPECT_EQ(j["metrics"], (nlohmann::json{"rmse", "mae", "r2"}));
  EXPECT_EQ(j["valid_metric_name"], "rmse");
  EXPECT_EQ(j["valid_metric"], j["valid_rmse"]);
  for (const char* k : {"valid_rmse", "valid_mae", "valid_r2", "test_rmse", "test_mae", "test_r2"})
    EXPECT_TRUE(j[k].is_number()) << k << " in " << j.dump();
  EXPECT_GE(j["valid_rmse"].get<double>(), j["valid_mae"].get<double>());  // RMSE >= MAE always
  EXPECT_TRUE(j["test_details"]["r2_per_target"].contains("exp")) << j.dump();

  // The defaults: a CSV regression target is scored as Chemprop and MoleculeNet do (RMSE) and trained with MSE, the
  // PCQM4Mv2 layout as OGB-LSC (MAE, L1), classification by ROC-AUC.
  const nlohmann::json lipo =
      lastJson(runExample("molecule_property", "--data " + kLipo + " --target-cols exp --limit 300" + kSmall, false));
  EXPECT_EQ(lipo["selection_metric"], "rmse");
  EXPECT_EQ(lipo["loss"], "mse");
  EXPECT_TRUE(lipo.contains("test_rmse")) << lipo.dump();
  const nlohmann::json pcq = lastJson(runExample("molecule_property", "--limit 300" + kSmall, false));
  EXPECT_EQ(pcq["selection_metric"], "mae");
  EXPECT_EQ(pcq["loss"], "l1");
  nlohmann::json c = lastJson(
      runExample("molecule_property", "--data " + kBbbpCsv + " --target-cols p_np --limit 300" + kSmall, false));
  EXPECT_EQ(c["selection_metric"], "rocauc");
  EXPECT_EQ(c["metrics"], nlohmann::json{"rocauc"});

  expectUsageError(
      runExample("molecule_property", "--data " + kLipo + " --target-cols exp --limit 300 --metric roc"),
      "--metric roc: rocauc scores classification, but the task is regression");
  expectUsageError(runExample("molecule_property", "--metric mae,auc"), "unknown metric 'auc'");
}

// The reported test metrics are the metrics of the predictions the run writes, on the labelled values only.
// Two targets, a third of each unlabelled (different molecules for each).
TEST_F(MoleculeMetrics, ReportedMetricsAreThoseOfThePredictionsOnLabelledValuesPerTarget) {
  const std::string csv = path("two.csv"), pred = path("pred.csv");
  std::map<int64_t, std::pair<std::string, std::string>> labels;  // line -> the two label fields
  std::ofstream out(csv);
  out << "smiles,p_np,small\n";
  const char* smiles[] = {"CCO",
                          "c1ccccc1O",
                          "CC(=O)Nc1ccc(O)cc1",
                          "CCN(CC)CC",
                          "OC(=O)c1ccccc1OC(C)=O",
                          "CN1CCC[C@H]1c1cccnc1",
                          "Clc1ccc(cc1)C(c1ccccc1)N1CCN(CC1)CCOCC(=O)O",
                          "CCCCCCCCO",
                          "c1ccc2ccccc2c1",
                          "NC(=O)c1cccnc1",
                          "CC(C)Cc1ccc(cc1)C(C)C(=O)O",
                          "O=C(O)CCc1ccccc1"};
  int64_t line = 2;  // the header is line 1
  for (int rep = 0; rep < 25; ++rep)
    for (size_t k = 0; k < 12; ++k, ++line) {
      // Made-up labels; a third of each target unlabelled, never both targets of one molecule.
      const std::string a = line % 3 == 0 ? "" : std::to_string((line / 2 + static_cast<int64_t>(k)) % 2);
      const std::string b =
          line % 3 == 1 ? "" : std::string(std::string(smiles[k]).size() < 12 || rep % 4 == 0 ? "1" : "0");
      out << smiles[k] << "," << a << "," << b << "\n";
      labels[line] = {a, b};
    }
  out.close();
  nlohmann::json j = lastJson(runExample("molecule_property",
                                         "--data " + csv +
                                             " --target-cols p_np,small --split random"
                                             " --metric roc,accuracy,mcc --predict " +
                                             pred + kSmall,
                                         false));
  ASSERT_EQ(j["task"], "classification");
  // Rebuild the test molecules' probabilities and labels from the predictions file.
  std::ifstream in(pred);
  std::string header, row;
  std::getline(in, header);
  EXPECT_EQ(header, "line,id,smiles,prediction_p_np,prediction_small");
  std::vector<float> prob, y;
  std::vector<uint8_t> mask;
  while (std::getline(in, row)) {
    std::vector<std::string> f;
    std::stringstream ss(row);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 5u) << row;
    const auto& [a, b] = labels.at(std::stoll(f[0]));
    for (const std::string* field : {&a, &b}) {
      y.push_back(field->empty() ? 0.0f : std::stof(*field));
      mask.push_back(field->empty() ? 0 : 1);
    }
    prob.push_back(std::stof(f[3]));
    prob.push_back(std::stof(f[4]));
  }
  const int64_t n = static_cast<int64_t>(prob.size() / 2);
  ASSERT_EQ(n, j["test_graphs"].get<int64_t>());
  std::vector<float> logit;
  for (float p : prob) logit.push_back(static_cast<float>(std::log(p / (1.0 - p))));
  const gnn::Tensor P = gnn::Tensor::fromVector<float>(prob, {n, 2}),
                    Z = gnn::Tensor::fromVector<float>(logit, {n, 2});
  const gnn::Tensor Y = gnn::Tensor::fromVector<float>(y, {n, 2}),
                    M = gnn::Tensor::fromVector<uint8_t>(mask, {n, 2});
  // Probabilities are printed with 9 digits: ranks and decisions at 0.5 survive, so these agree exactly.
  EXPECT_NEAR(j["test_rocauc"].get<double>(), gnn::rocAuc(P, Y, M), 1e-12);
  EXPECT_NEAR(j["test_accuracy"].get<double>(), gnn::binaryAccuracy(Z, Y, M), 1e-12);
  EXPECT_NEAR(j["test_mcc"].get<double>(), gnn::matthewsCorrelation(Z, Y, M), 1e-12);
  // Scored on every value, the unlabelled ones (stored as 0) would change the accuracy.
  EXPECT_NE(j["test_accuracy"].get<double>(), gnn::binaryAccuracy(Z, Y));
}

TEST_F(MoleculeMetrics, ClassBalanceTrainsOnAsManyPositivesAsNegatives) {
  nlohmann::json j = lastJson(runExample(
      "molecule_property",
      "--data " + kBbbpCsv + " --target-cols p_np --class-balance --strategy stream" + kSmall, false));
  EXPECT_EQ(j["class_balance"], true);
  const int64_t p = j["class_balance_positives"], n = j["class_balance_negatives"];
  EXPECT_EQ(p + n, j["train_graphs"].get<int64_t>());
  EXPECT_GT(p, n);  // BBBP: about three quarters permeate
  // One epoch's padding report: 2 min(P, N) molecules trained on, not the whole training split.
  EXPECT_EQ(j["real_graphs"].get<int64_t>(), 2 * std::min(p, n));
  expectUsageError(
      runExample("molecule_property", "--data " + kLipo + " --target-cols exp --limit 300 --class-balance"),
      "--class-balance balances the classes of a classification task");
}

TEST_F(MoleculeMetrics, EvaluationOnlyRunsMayChangeBatchingAndMetricsButNotTheModel) {
  const std::string ck = path("bbbp.ckpt");
  const std::string data = "--data " + kBbbpCsv + " --target-cols p_np --limit 600";
  nlohmann::json trained = lastJson(runExample("molecule_property", data + " --save " + ck + kSmall, false));
  ASSERT_TRUE(fs::exists(ck));
  // Another packing, batch size and metric list: accepted, and the same weights give the same scores.
  nlohmann::json again =
      lastJson(runExample("molecule_property",
                          "--load " + ck +
                              " --epochs 0 --strategy stream --batch-size 16 --metric prc,roc --threads 2 "
                              "--json --quiet",
                          false));
  EXPECT_EQ(again["evaluation_only"], true);
  EXPECT_EQ(again["strategy"], "stream");
  EXPECT_EQ(again["batch_size"], 16);
  EXPECT_EQ(again["selection_metric"], "prc");
  EXPECT_EQ(again["changed_from_checkpoint"], (nlohmann::json{"strategy", "batch-size", "metric"}));
  EXPECT_EQ(again["param_l2"].get<double>(), trained["param_l2"].get<double>());
  EXPECT_EQ(again["valid_rocauc"].get<double>(), trained["valid_rocauc"].get<double>());
  EXPECT_EQ(again["test_rocauc"].get<double>(), trained["test_rocauc"].get<double>());
  EXPECT_TRUE(again["valid_prc"].is_number());
  // What makes the model is still the checkpoint's.
  expectUsageError(runExample("molecule_property", "--load " + ck + " --epochs 0 --hidden 64"),
                   "--hidden 64 contradicts " + ck + " (hidden 16)");
  expectUsageError(runExample("molecule_property", "--load " + ck + " --epochs 0 --model gcn"),
                   "--model gcn contradicts " + ck + " (model gin)");
  // A run that trains on must keep the batching it trained with.
  expectUsageError(runExample("molecule_property", "--load " + ck + " --epochs 2 --strategy stream"),
                   "--strategy stream contradicts " + ck + " (strategy plan)");
}

}  // namespace
