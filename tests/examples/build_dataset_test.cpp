// build_dataset end to end: a split column and --jsonl targets through the program, the --jsonl file put in
// place only at the end (no temp file left), and the help naming the split flag. Interrupted builds are
// tested by build_dataset_interrupt.sh (ctest -R build_dataset_interrupted).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "RunProgram.h"
#include "ScratchFolder.h"
#include "data/DatasetSplit.h"
#include "data/NpzDataset.h"

namespace {
namespace fs = std::filesystem;

const std::string kBin = std::string(GNN_BINARY_DIR) + "/examples/build_dataset";

class BuildDataset : public gnn::testing::ScratchFolderTest {
 protected:
};

}  // namespace

TEST_F(BuildDataset, SplitColumnAndJsonlTargets) {
  std::ofstream(dir_ / "m.csv") << "smiles,logS,fold\n"
                                   "CCO,0.5,train\n"
                                   "c1ccccc1,-2.25,val\n"
                                   "CCN,,test\n"
                                   "CCC,1,other\n";
  const std::string npz = (dir_ / "m.npz").string(), jsonl = (dir_ / "m.jsonl").string();
  auto r = gnn::testing::runProgram(kBin + " --input " + (dir_ / "m.csv").string() +
                                    " --target-cols logS --split-col fold --no-progress --out " + npz +
                                    " --jsonl " + jsonl + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("m.csv:5: rejected 'CCC': split column 'fold' holds 'other'"), std::string::npos) << r.out;
  // Only the two outputs and the input: the temp files are gone.
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"m.csv", "m.jsonl", "m.npz"}));
  gnn::NpzDataset ds(npz);
  gnn::DatasetSplit s = gnn::storedSplit(ds);
  EXPECT_EQ(s.kind, "column");
  EXPECT_EQ(s.train, (std::vector<int64_t>{0}));
  EXPECT_EQ(s.valid, (std::vector<int64_t>{1}));
  EXPECT_EQ(s.test, (std::vector<int64_t>{2}));
  EXPECT_EQ(ds.smiles(1), "c1ccccc1");
  EXPECT_EQ(ds.targetNames(), (std::vector<std::string>{"logS"}));
  std::ifstream in(jsonl);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1]["y"], nlohmann::json::parse("[-2.25]"));
  EXPECT_TRUE(lines[2]["y"][0].is_null());
  EXPECT_TRUE(lines[3].contains("error"));
}

TEST_F(BuildDataset, TempFilesOfAKilledBuildGoAtTheNextBuild) {
  // What a build killed with SIGKILL while writing leaves: the .npz's temp file and its per-array parts, the
  // --jsonl temp file. Their process (pid 999999999) is gone and they are two minutes old.
  std::ofstream(dir_ / "m.smi") << "CCO\nCCN\n";
  const std::vector<std::string> stale = {"m.npz.tmp-999999999", "m.npz.tmp-999999999.3.0", "m.jsonl.tmp-999999999"};
  for (const std::string& name : stale) {
    std::ofstream(dir_ / name) << "partial";
    fs::last_write_time(dir_ / name, fs::file_time_type::clock::now() - std::chrono::minutes(2));
  }
  // A fresh one may belong to a build still writing on another machine: kept.
  std::ofstream(dir_ / "other.npz.tmp-999999998") << "partial";
  auto r = gnn::testing::runProgram(kBin + " --input " + (dir_ / "m.smi").string() + " --no-progress --out " +
                                    (dir_ / "m.npz").string() + " --jsonl " + (dir_ / "m.jsonl").string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"m.jsonl", "m.npz", "m.smi", "other.npz.tmp-999999998"}));
}

TEST_F(BuildDataset, HelpNamesTheSplitColumn) {
  auto r = gnn::testing::runProgram(kBin + " --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--split-col NAME"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--limit N (=all)"), std::string::npos) << r.out;
}

TEST_F(BuildDataset, SplitColumnOnNonCsvInputIsAnError) {
  std::ofstream(dir_ / "m.smi") << "CCO\n";
  auto r = gnn::testing::runProgram(kBin + " --input " + (dir_ / "m.smi").string() + " --split-col fold --out " +
                                    (dir_ / "m.npz").string() + " --jsonl " + (dir_ / "m.jsonl").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("applies to CSV input"), std::string::npos) << r.out;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path().filename().string());
  EXPECT_EQ(files, (std::vector<std::string>{"m.smi"}));  // no dataset, no jsonl, no temp file
}
