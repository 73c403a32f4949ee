#include "data/DatasetSplit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

#include "data/MoleculeDatasetBuilder.h"
#include "data/NpzDataset.h"

namespace gnn {
namespace {

void expectPartition(const DatasetSplit& s, int64_t n) {
  std::vector<int64_t> all;
  for (const auto* v : {&s.train, &s.valid, &s.test}) all.insert(all.end(), v->begin(), v->end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(static_cast<int64_t>(all.size()), n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(all[static_cast<size_t>(i)], i);
}

TEST(DatasetSplit, RandomIsSeededSizedAndAPartition) {
  DatasetSplit a = randomSplit(1003, 7), b = randomSplit(1003, 7), c = randomSplit(1003, 8);
  expectPartition(a, 1003);
  EXPECT_EQ(a.train.size(), 802u);  // floor(0.8 n)
  EXPECT_EQ(a.valid.size(), 100u);  // floor(0.1 n)
  EXPECT_EQ(a.test.size(), 101u);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_NE(a.valid, c.valid);
  EXPECT_EQ(a.toJson()["seed"], 7);
}

TEST(DatasetSplit, MurckoScaffoldsAsRdkitGivesThem) {
  EXPECT_EQ(murckoScaffold("Cc1ccccc1"), "c1ccccc1");
  EXPECT_EQ(murckoScaffold("OCc1ccccc1"), "c1ccccc1");
  EXPECT_EQ(murckoScaffold("CCO"), "");
  EXPECT_EQ(murckoScaffold("c1ccccc1CCc1ccncc1"), "c1ccc(CCc2ccncc2)cc1");
  // Chirality is dropped (includeChirality=False).
  EXPECT_EQ(murckoScaffold("C[C@H]1CC[C@@H](C)C1"), murckoScaffold("CC1CCC(C)C1"));
  EXPECT_THROW(murckoScaffold("C1CC"), std::runtime_error);
}

TEST(DatasetSplit, ScaffoldGroupsStayTogetherLargestFirst) {
  // 10 molecules: 5 benzenes, 2 pyridines, 2 acyclic, 1 cyclohexane. Cutoffs: train <= 8, train+valid <= 9.
  std::vector<std::string> smiles = {"Cc1ccccc1", "CCO",        "c1ccncc1C", "Oc1ccccc1", "CCCN",
                                     "Nc1ccccc1", "C1CCCCC1",   "Clc1ccccc1", "c1ccncc1O", "Fc1ccccc1"};
  DatasetSplit s = scaffoldSplit(smiles);
  expectPartition(s, 10);
  // Groups by (size, first index) descending: benzene (5) -> train, then pyridine (2, first 2) and acyclic
  // (2, first 1): pyridine first (larger first index) -> train (7), acyclic would make 9 > 8 -> valid? 7+2 = 9
  // exceeds 8 and train+valid 0+9 = 9 <= 9 -> valid; cyclohexane: 7+1 = 8 -> train.
  EXPECT_EQ(s.train, (std::vector<int64_t>{0, 2, 3, 5, 6, 7, 8, 9}));
  EXPECT_EQ(s.valid, (std::vector<int64_t>{1, 4}));
  EXPECT_TRUE(s.test.empty());
}

TEST(DatasetSplit, ScaffoldSplitOfBbbpSharesNoScaffoldAcrossSets) {
  namespace fs = std::filesystem;
  const std::string npz = (fs::temp_directory_path() / ("gnn_split_bbbp_" + std::to_string(getpid()) + ".npz")).string();
  BuildOptions o;
  o.source.path = std::string(GNN_SOURCE_DIR) + "/examples/data/moleculenet/BBBP.csv.gz";
  o.source.targetColumns = {"p_np"};
  o.threads = 2;
  o.outPath = npz;
  MoleculeDatasetBuilder(o).run();
  NpzDataset ds(npz);
  std::vector<std::string> smiles;
  for (size_t i = 0; i < ds.size(); ++i) smiles.push_back(ds.smiles(i));
  DatasetSplit s = scaffoldSplit(smiles);
  expectPartition(s, static_cast<int64_t>(ds.size()));
  std::set<std::string> train, valid, test;
  for (int64_t i : s.train) train.insert(murckoScaffold(smiles[static_cast<size_t>(i)]));
  for (int64_t i : s.valid) valid.insert(murckoScaffold(smiles[static_cast<size_t>(i)]));
  for (int64_t i : s.test) test.insert(murckoScaffold(smiles[static_cast<size_t>(i)]));
  for (const auto& sc : valid) EXPECT_EQ(train.count(sc), 0u) << sc;
  for (const auto& sc : test) EXPECT_EQ(train.count(sc) + valid.count(sc), 0u) << sc;
  EXPECT_NEAR(static_cast<double>(s.train.size()) / static_cast<double>(ds.size()), 0.8, 0.01);
  fs::remove(npz);
}

TEST(DatasetSplit, FilesInOgbLayoutMapSourceIndicesAndRejectBadLines) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gnn_split_files_" + std::to_string(getpid()));
  fs::create_directories(dir / "split");
  std::ofstream(dir / "m.csv") << "smiles,y\nCCO,1\nC1CC,2\nCCN,3\nCCC,4\nc1ccccc1,5\n";
  BuildOptions o;
  o.source.path = (dir / "m.csv").string();
  o.source.targetColumns = {"y"};
  o.outPath = (dir / "m.npz").string();
  MoleculeDatasetBuilder(o).run();
  NpzDataset ds(o.outPath);
  ASSERT_EQ(ds.size(), 4u);  // C1CC (index 1) is rejected
  EXPECT_EQ(ds.smiles(1), "CCN");
  EXPECT_EQ(ds.targetNames(), std::vector<std::string>{"y"});
  std::ofstream(dir / "split" / "train.csv") << "0\n2\n1\n";
  std::ofstream(dir / "split" / "valid.csv") << "3\n";
  std::ofstream(dir / "split" / "test.csv") << "4\n";
  DatasetSplit s = splitFromFiles((dir / "split").string(), ds);
  EXPECT_EQ(s.train, (std::vector<int64_t>{0, 1}));  // sources 0 and 2 -> positions 0 and 1
  EXPECT_EQ(s.valid, (std::vector<int64_t>{2}));
  EXPECT_EQ(s.test, (std::vector<int64_t>{3}));
  EXPECT_EQ(s.droppedRejected, 1);
  std::ofstream(dir / "split" / "test.csv") << "4\n0\n";
  try {
    splitFromFiles((dir / "split").string(), ds);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("test.csv:2: index 0 is already in train"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "split" / "test.csv") << "4\n9\n";
  EXPECT_THROW(splitFromFiles((dir / "split").string(), ds), std::runtime_error);
  std::ofstream(dir / "split" / "test.csv") << "x\n";
  EXPECT_THROW(splitFromFiles((dir / "split").string(), ds), std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gnn
