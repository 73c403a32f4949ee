// app/MoleculeResults.h: --json prints the results object itself on one line; the summary gives the selection
// metric and every other --metric at the best epoch, a set without labels as such, the test set's selection metric
// per target only when there are several targets, and the training speed.
#include "app/MoleculeResults.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gnn::app {
namespace {

MoleculeResults results() {
  MoleculeResults r;
  r.json = {{"valid_metric", 0.51234567}, {"test_metric", 0.6}, {"valid_rmse", 0.7}, {"test_rmse", 0.8},
            {"param_l2", 12.5}};
  r.summary = {{"train_samples_per_s", 1234.4},
               {"test_details", {{"mae_per_target", {{"homo", 0.25}, {"lumo", 0.5}}}}}};
  r.metrics = {Metric::Mae, Metric::Rmse};
  r.bestEpoch = 7;
  r.epochs = 9;
  return r;
}

std::string written(const MoleculeResults& r, bool asJson) {
  std::ostringstream os;
  writeMoleculeResults(os, r, asJson);
  return os.str();
}

TEST(MoleculeResults, JsonIsTheResultsObjectOnOneLine) {
  const MoleculeResults r = results();
  const std::string out = written(r, true);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.find('\n'), out.size() - 1) << out;
  EXPECT_EQ(nlohmann::json::parse(out), r.json);
}

TEST(MoleculeResults, SummaryGivesEveryMetricAtTheBestEpochAndTheSpeed) {
  const std::string out = written(results(), false);
  EXPECT_NE(out.find("best epoch 7 of 9: valid mae 0.51235, test mae 0.6\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  valid rmse 0.7, test rmse 0.8\n"), std::string::npos) << out;
  EXPECT_NE(out.find("1234 molecules/s in training, param_l2 12.500000\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("homo"), std::string::npos) << "per-target lines with one target";
}

TEST(MoleculeResults, SeveralTargetsGetTheirTestScoresAndAMissingScoreSaysSo) {
  MoleculeResults r = results();
  r.targets = 2;
  r.json["valid_rmse"] = nullptr;  // a validation set without labels
  const std::string out = written(r, false);
  EXPECT_NE(out.find("  test mae homo 0.25\n  test mae lumo 0.5\n"), std::string::npos) << out;
  EXPECT_NE(out.find("valid rmse n/a (no labels)"), std::string::npos) << out;
}

}  // namespace
}  // namespace gnn::app
