// train_molecules end to end: one epoch on the shipped ESOL set writes a predictions CSV with its header and
// one row per test molecule; bad arguments stop with exit code 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "RunProgram.h"
#include "ScratchFolder.h"
#include "ShippedFiles.h"

namespace {
using gnn::testing::kEsolCsv;
namespace fs = std::filesystem;

const std::string kBin = std::string(GNN_BINARY_DIR) + "/examples/train_molecules";
const std::string kTarget = "'measured log solubility in mols per litre'";

class TrainMolecules : public gnn::testing::ScratchFolderTest {
 protected:
};

TEST_F(TrainMolecules, OneEpochWritesTheTestPredictions) {
  const std::string csv = (dir_ / "predictions.csv").string();
  gnn::testing::ProgramResult r = gnn::testing::runProgram(kBin + " " + kEsolCsv + " " + kTarget + " 1 " + csv);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("1128 molecules, 0 rejected"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("test MAE "), std::string::npos) << r.out;
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "line,id,smiles,prediction");
  // randomSplit's test share of 1128 molecules: 1128 - floor(0.8 n) - floor(0.1 n).
  EXPECT_EQ(lines.size() - 1, 1128u - 902u - 112u);
  for (size_t k = 1; k < lines.size(); ++k)
    EXPECT_EQ(std::count(lines[k].begin(), lines[k].end(), ','), 3) << lines[k];
}

TEST_F(TrainMolecules, BadArgumentsExitWithCodeOne) {
  EXPECT_EQ(gnn::testing::runProgram(kBin + " " + kEsolCsv + " " + kTarget + " zero").code, 1);
  gnn::testing::ProgramResult r =
      gnn::testing::runProgram(kBin + " " + (dir_ / "missing.csv").string() + " y 1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("train_molecules: "), std::string::npos) << r.out;
}

}  // namespace
