// molecule_property --model dmpnn end to end on the shipped ESOL file: Chemprop's defaults in the JSON and the
// checkpoint, the same bits for a rerun and for 1 or 2 threads, `predict` reproducing --predict bit for bit from
// the checkpoint (the SMILES in reverse order), and flags of other models refused in flag terms.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "PredictionsFile.h"
#include "RunProgram.h"
#include "ScratchFolder.h"
#include "ShippedFiles.h"

namespace {
namespace fs = std::filesystem;
using Result = gnn::testing::ProgramResult;
using gnn::testing::expectUsageError;
using gnn::testing::runExample;
using gnn::testing::lastJson;
using gnn::testing::kEsolCsv;
using Row = gnn::testing::PredictionRow;
using gnn::testing::readPredictions;

// A small ESOL run: 300 molecules, random 80/10/10 split, Chemprop's model defaults, a narrower FFN to keep it
// quick.
const std::string kRun = "--model dmpnn --data " + kEsolCsv +
                         " --target-cols 'measured log solubility in mols per litre' --limit 300 --split random "
                         "--batch-size 50 --epochs 2 --quiet --json";

class MoleculePropertyDmpnn : public gnn::testing::ScratchFolderTest {
 protected:
};

TEST_F(MoleculePropertyDmpnn, TrainsWithChempropsDefaultsAndPredictReproducesItsPredictions) {
  const std::string ck = path("dmpnn.ckpt"), pred = path("test.csv");
  Result r = runExample("molecule_property", kRun + " --threads 2 --save " + ck + " --predict " + pred, false);
  ASSERT_EQ(r.code, 0) << r.out;
  nlohmann::json j = lastJson(r.out);
  EXPECT_EQ(j["model"], "dmpnn");
  EXPECT_EQ(j["depth"], 3);
  EXPECT_EQ(j["hidden"], 300);
  EXPECT_EQ(j["aggregation"], "norm");
  EXPECT_EQ(j["ffn_hidden_dim"], 300);
  EXPECT_EQ(j["task"], "regression");
  EXPECT_TRUE(std::isfinite(j["final_loss"].get<double>()));
  // W_i (174 atom + 13 bond categories) x 300, W_h 300 x 300, W_o (174 + 300) x 300 + 300, FFN 300 x 300 + 300,
  // 300 x 1 + 1.
  EXPECT_EQ(j["parameters"], 187 * 300 + 300 * 300 + 474 * 300 + 300 + 300 * 300 + 300 + 300 + 1);

  std::vector<Row> rows = readPredictions(pred);
  ASSERT_EQ(static_cast<int64_t>(rows.size()), j["test_graphs"].get<int64_t>());
  ASSERT_GT(rows.size(), 10u);
  std::reverse(rows.begin(), rows.end());
  gnn::testing::expectPredictReproduces(ck, rows, path("test.smi"), path("again.csv"), "--threads 1");
}

TEST_F(MoleculePropertyDmpnn, SameBitsForARerunAndForOneOrTwoThreads) {
  Result a = runExample("molecule_property", kRun + " --threads 1 --seed 3", false);
  Result b = runExample("molecule_property", kRun + " --threads 1 --seed 3", false);
  Result c = runExample("molecule_property", kRun + " --threads 2 --seed 3", false);
  ASSERT_EQ(a.code, 0) << a.out;
  ASSERT_EQ(b.code, 0) << b.out;
  ASSERT_EQ(c.code, 0) << c.out;
  nlohmann::json ja = lastJson(a.out), jb = lastJson(b.out), jc = lastJson(c.out);
  for (const char* k : {"loss_checksum", "param_checksum", "valid_metric", "test_metric"}) {
    ASSERT_TRUE(ja.contains(k)) << k << " in " << ja.dump();
    EXPECT_EQ(ja[k], jb[k]) << k << " (rerun)";
    EXPECT_EQ(ja[k], jc[k]) << k << " (2 threads)";
  }
  Result d = runExample("molecule_property", kRun + " --threads 2 --seed 4", false);
  ASSERT_EQ(d.code, 0) << d.out;
  EXPECT_NE(lastJson(d.out)["param_checksum"], ja["param_checksum"]);
}

TEST_F(MoleculePropertyDmpnn, HelpListsItAndFlagsOfOtherModelsAreRefused) {
  Result h = runExample("molecule_property", "--help");
  EXPECT_EQ(h.code, 0);
  for (const char* s : {"dmpnn", "--depth", "--aggregation", "--ffn-hidden-dim", "--ffn-num-layers"})
    EXPECT_NE(h.out.find(s), std::string::npos) << s << " missing in --help";
  expectUsageError(runExample("molecule_property", "--model dmpnn --layers 4"), "--depth");
  expectUsageError(runExample("molecule_property", "--model dmpnn --pool sum"), "--aggregation");
  expectUsageError(runExample("molecule_property", "--model gin --depth 4"), "--depth applies to --model dmpnn");
  expectUsageError(runExample("molecule_property", "--model dmpnn --aggregation max"),
                   "--aggregation 'max': must be one of");
  expectUsageError(runExample("molecule_property", "--model dmpnn --depth 0"), "--depth");
}

}  // namespace
