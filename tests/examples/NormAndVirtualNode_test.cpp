// molecule_property --norm batch --virtual-node end to end on a small slice of ESOL: the same bits at 1 and 2
// threads, the running statistics kept in checkpoints (an evaluation-only --load scores the best epoch's weights
// as the run did; a run continued from epoch 1 ends with the bits of an uninterrupted one; predict reproduces
// --predict bit for bit), and the refusals name their flag.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "RunProgram.h"
#include "ScratchFolder.h"
#include "ShippedFiles.h"
#include "gnn/io/Checkpoint.h"

namespace {
namespace fs = std::filesystem;
using gnn::testing::expectUsageError;
using gnn::testing::ProgramResult;
using gnn::testing::runExample;
using gnn::testing::kEsolCsv;

const std::string kRun = "--data " + kEsolCsv +
                         " --target-cols 'measured log solubility in mols per litre' --limit 300 --split scaffold "
                         "--hidden 16 --layers 3 --batch-size 32 --dropout 0.2 --seed 5 --quiet --json "
                         "--norm batch --virtual-node";

nlohmann::json lastJson(const ProgramResult& r) {
  EXPECT_EQ(r.code, 0) << r.out;
  const size_t at = r.out.rfind("\n{");
  return nlohmann::json::parse(r.out.substr(at == std::string::npos ? r.out.find('{') : at + 1));
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class NormAndVirtualNode : public gnn::testing::ScratchFolderTest {
 protected:
};

TEST_F(NormAndVirtualNode, SameBitsAtOneAndTwoThreads) {
  nlohmann::json one = lastJson(runExample("molecule_property", kRun + " --epochs 2 --threads 1", false));
  nlohmann::json two = lastJson(runExample("molecule_property", kRun + " --epochs 2 --threads 2", false));
  for (const char* key : {"final_loss", "param_l2", "valid_metric", "test_metric"})
    EXPECT_EQ(one[key].get<double>(), two[key].get<double>()) << key;
  EXPECT_EQ(one["model"], "gin");
}

TEST_F(NormAndVirtualNode, CheckpointsCarryTheRunningStatistics) {
  const std::string ckpt = path("run.ckpt");
  nlohmann::json whole = lastJson(runExample(
      "molecule_property", kRun + " --epochs 2 --threads 1 --save " + ckpt + " --predict " + path("p.csv"), false));
  gnn::Checkpoint ck = gnn::Checkpoint::load(ckpt);
  for (const char* t : {"model.norms.0.running_mean", "model.convs.1.mlp.1.running_var",
                        "model.virtual_node.mlp_virtualnode_list.0.4.running_mean",
                        "best.norms.2.running_var", "model.virtual_node.virtualnode_embedding.weight"})
    EXPECT_EQ(ck.tensors.count(t), 1u) << t;
  // Evaluation only: the best epoch's weights and running statistics score as they did in the run.
  nlohmann::json loaded = lastJson(runExample("molecule_property", "--load " + ckpt + " --epochs 0 --threads 1 "
                                                                   "--quiet --json", false));
  EXPECT_EQ(loaded["valid_metric"].get<double>(), whole["valid_metric"].get<double>());
  EXPECT_EQ(loaded["test_metric"].get<double>(), whole["test_metric"].get<double>());
  // Continued after epoch 1: the running statistics were saved with it, so epoch 2 ends with the same bits.
  const std::string half = path("half.ckpt");
  lastJson(runExample("molecule_property", kRun + " --epochs 1 --threads 1 --save " + half, false));
  nlohmann::json resumed =
      lastJson(runExample("molecule_property", "--load " + half + " --epochs 2 --threads 1 --quiet --json", false));
  for (const char* key : {"final_loss", "param_l2", "valid_metric", "test_metric"})
    EXPECT_EQ(resumed[key].get<double>(), whole[key].get<double>()) << key;
  // predict applies the checkpoint as --predict did.
  ProgramResult r = runExample("predict", "--checkpoint " + ckpt + " --input " + kEsolCsv + " --out " +
                                              path("all.csv") + " --threads 1 --quiet");
  ASSERT_EQ(r.code, 0) << r.out;
  std::istringstream test(slurp(path("p.csv")));
  std::string header, line;
  std::getline(test, header);
  const std::string everything = slurp(path("all.csv"));
  int rows = 0;
  for (; std::getline(test, line); ++rows) EXPECT_NE(everything.find("\n" + line + "\n"), std::string::npos) << line;
  EXPECT_GT(rows, 10);
}

TEST_F(NormAndVirtualNode, RefusalsNameTheFlag) {
  expectUsageError(runExample("molecule_property", kRun + " --epochs 1 --norm group"), "--norm");
  expectUsageError(runExample("molecule_property", "--data " + kEsolCsv +
                                                       " --target-cols 'measured log solubility in mols per litre' "
                                                       "--model dmpnn --norm batch --epochs 1"),
                   "--norm");
  expectUsageError(runExample("molecule_property", kRun + " --epochs 1 --device ipu --replicas 2"), "--norm batch");
}

}  // namespace
