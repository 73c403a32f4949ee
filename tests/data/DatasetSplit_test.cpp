#include "data/DatasetSplit.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

#include "data/MoleculeDatasetBuilder.h"
#include "data/MoleculeTestUtil.h"
#include "data/NpzDataset.h"
#include "gnn/system/Parallel.h"

using namespace gnn;

namespace {

// Every position 0..n-1 in exactly one set, each set ascending.
void expectPartition(const DatasetSplit& s, int64_t n) {
  std::vector<int64_t> all;
  for (const auto* v : {&s.train, &s.valid, &s.test}) {
    EXPECT_TRUE(std::is_sorted(v->begin(), v->end()));
    all.insert(all.end(), v->begin(), v->end());
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(static_cast<int64_t>(all.size()), n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(all[static_cast<size_t>(i)], i);
}

void writeGz(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

// BBBP (2050 molecules, 11 rejected) built once per test process, removed when the process ends.
struct BuiltBbbp {
  std::filesystem::path dir = gnn::testing::tempDir("split_bbbp");
  std::string path = (dir / "bbbp.npz").string();
  BuiltBbbp() {
    BuildOptions o;
    o.source.path = gnn::testing::moleculeData("moleculenet/BBBP.csv.gz");
    o.source.targetColumns = {"p_np"};
    o.threads = 2;
    o.outPath = path;
    MoleculeDatasetBuilder(o).run();
  }
  ~BuiltBbbp() { std::filesystem::remove_all(dir); }
};
const std::string& bbbpDataset() {
  static const BuiltBbbp built;
  return built.path;
}

}  // namespace

TEST(DatasetSplit, HeaderExampleCompiles) {
  const auto dir = gnn::testing::tempDir("split_header");
  std::filesystem::create_directories(dir / "split" / "scaffold");
  for (const char* f : {"train", "valid", "test"}) std::ofstream(dir / "split" / "scaffold" / (std::string(f) + ".csv"));
  std::ofstream(dir / "split" / "scaffold" / "train.csv") << "0\n";
  NpzDataset ds(bbbpDataset());
  DatasetSplit s = randomSplit(static_cast<int64_t>(ds.size()), /*seed=*/0);
  std::vector<std::string> smiles;
  for (size_t i = 0; i < ds.size(); ++i) smiles.push_back(ds.smiles(i));
  DatasetSplit t = scaffoldSplit(smiles);
  DatasetSplit u = splitFromFiles((dir / "split" / "scaffold").string(), ds);
  DatasetSplit v = storedSplit(ds);
  EXPECT_EQ(s.kind, "random");
  EXPECT_EQ(t.kind, "scaffold");
  EXPECT_EQ(u.train, (std::vector<int64_t>{0}));
  EXPECT_EQ(v.kind, "none");  // BBBP has no split of its own
  std::filesystem::remove_all(dir);
}

TEST(DatasetSplit, RandomSizesPartitionAndSeeds) {
  for (int64_t n : {0, 1, 2, 9, 10, 11, 2039}) {
    DatasetSplit s = randomSplit(n, 7);
    EXPECT_EQ(static_cast<int64_t>(s.train.size()), static_cast<int64_t>(0.8 * static_cast<double>(n))) << n;
    EXPECT_EQ(static_cast<int64_t>(s.valid.size()), static_cast<int64_t>(0.1 * static_cast<double>(n))) << n;
    expectPartition(s, n);
  }
  DatasetSplit a = randomSplit(1000, 3), b = randomSplit(1000, 3), c = randomSplit(1000, 4);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_EQ(a.test, b.test);
  EXPECT_NE(a.valid, c.valid);
  // The split a seed gives is part of the documented behaviour (docs/datasets.md): it must not change
  // between versions, or runs that name a seed stop being reproducible.
  DatasetSplit g = randomSplit(10, 0);
  EXPECT_EQ(g.valid, (std::vector<int64_t>{3}));
  EXPECT_EQ(g.test, (std::vector<int64_t>{5}));
  DatasetSplit h = randomSplit(10, 1, 0.5, 0.25);
  EXPECT_EQ(h.train.size(), 5u);
  EXPECT_EQ(h.valid.size(), 2u);
  EXPECT_EQ(h.test.size(), 3u);
  EXPECT_THROW(randomSplit(-1, 0), std::invalid_argument);
  EXPECT_THROW(randomSplit(10, 0, 0.8, 0.3), std::invalid_argument);
  nlohmann::json j = a.toJson();
  EXPECT_EQ(j["kind"], "random");
  EXPECT_EQ(j["seed"], 3);
  EXPECT_EQ(j["train"], 800);
  EXPECT_EQ(j["valid"], 100);
  EXPECT_EQ(j["test"], 100);
}

TEST(DatasetSplit, MurckoScaffolds) {
  EXPECT_EQ(murckoScaffold("c1ccccc1O"), "c1ccccc1");
  EXPECT_EQ(murckoScaffold("Cc1ccccc1"), "c1ccccc1");
  EXPECT_EQ(murckoScaffold("CCO"), "");
  EXPECT_EQ(murckoScaffold("[Na+].[Cl-]"), "");
  // RDKit's own docstring example (rdkit/Chem/Scaffolds/MurckoScaffold.py).
  EXPECT_EQ(murckoScaffold("Cc1cc(Oc2nccc(CCC)c2)ccc1"), "c1ccc(Oc2ccccn2)cc1");
  // Stereo of the ring system itself is kept only when asked (values from Python's MurckoScaffoldSmiles).
  EXPECT_EQ(murckoScaffold("C[C@H]1CC[C@@H]2CCCC[C@H]2C1"), "C1CCC2CCCCC2C1");
  EXPECT_EQ(murckoScaffold("C[C@H]1CC[C@@H]2CCCC[C@H]2C1", true), "C1CC[C@H]2CCCC[C@@H]2C1");
  EXPECT_EQ(murckoScaffold("C1CC/C=C/CCC1", true), "C1=C/CCCCCC/1");
  EXPECT_THROW(murckoScaffold("C1CC"), std::runtime_error);
  EXPECT_THROW(murckoScaffold(""), std::runtime_error);
}

TEST(DatasetSplit, ScaffoldGroupsGoWholeInSizeThenPositionOrder) {
  // Scaffolds: benzene {0, 2, 4, 6, 8}, acyclic "" {1, 5}, cyclohexane {3}, pyridine {7}, naphthalene {9}.
  const std::vector<std::string> smiles{"c1ccccc1O", "CCO",        "Cc1ccccc1", "OC1CCCCC1", "c1ccccc1N",
                                        "CC(=O)O",   "c1ccccc1Cl", "Cc1ccncc1", "c1ccccc1C(=O)O", "Cc1ccc2ccccc2c1"};
  DatasetSplit s = scaffoldSplit(smiles);
  // n = 10: train while <= 8, valid while train + valid <= 9. Order: benzene (5), "" (2), then the single
  // molecules by descending position: naphthalene (9) -> train (8), pyridine (7) -> valid, cyclohexane (3)
  // -> test. Ascending positions would have put cyclohexane in train instead.
  EXPECT_EQ(s.train, (std::vector<int64_t>{0, 1, 2, 4, 5, 6, 8, 9}));
  EXPECT_EQ(s.valid, (std::vector<int64_t>{7}));
  EXPECT_EQ(s.test, (std::vector<int64_t>{3}));
  EXPECT_EQ(s.kind, "scaffold");
  expectPartition(s, 10);
  EXPECT_EQ(s.toJson()["include_chirality"], false);
  // The same bits with one thread as with two.
  setNumThreads(1);
  DatasetSplit one = scaffoldSplit(smiles);
  setNumThreads(0);
  EXPECT_EQ(one.train, s.train);
  EXPECT_EQ(one.test, s.test);
  EXPECT_TRUE(scaffoldSplit({}).train.empty());
}

TEST(DatasetSplit, ScaffoldRefusesWhatRdkitCannotParseNamingThePosition) {
  std::string e = errorOf([] { scaffoldSplit({"CCO", "c1ccccc1", "C1CC"}); });
  EXPECT_NE(e.find("molecule 2"), std::string::npos) << e;
  EXPECT_NE(e.find("C1CC"), std::string::npos) << e;
  e = errorOf([] { scaffoldSplit({"CCO", ""}); });
  EXPECT_NE(e.find("molecule 1"), std::string::npos) << e;
}

TEST(DatasetSplit, ScaffoldSplitOfBbbpKeepsEachScaffoldInOneSet) {
  NpzDataset ds(bbbpDataset());
  ASSERT_EQ(ds.size(), 2039u);
  std::vector<std::string> smiles;
  for (size_t i = 0; i < ds.size(); ++i) smiles.push_back(ds.smiles(i));
  DatasetSplit s = scaffoldSplit(smiles);
  expectPartition(s, 2039);
  EXPECT_EQ(s.train.size(), 1631u);  // the largest groups that fit under 0.8 n = 1631.2
  EXPECT_GT(s.valid.size(), 150u);
  EXPECT_GT(s.test.size(), 150u);
  std::map<std::string, int> setOf;
  int set = 0;
  for (const auto* v : {&s.train, &s.valid, &s.test}) {
    for (int64_t i : *v) {
      const std::string sc = murckoScaffold(smiles[static_cast<size_t>(i)]);
      auto [it, fresh] = setOf.emplace(sc, set);
      EXPECT_EQ(it->second, set) << "scaffold '" << sc << "' is in two sets";
    }
    ++set;
  }
}

TEST(DatasetSplit, ScaffoldSplitMatchesPythonOnBbbp) {
  if (!gnn::testing::pythonRdkitAvailable()) GTEST_SKIP() << "/usr/bin/python3 has no rdkit";
  const auto dir = gnn::testing::tempDir("split_py");
  NpzDataset ds(bbbpDataset());
  std::vector<std::string> smiles;
  {
    std::ofstream out(dir / "bbbp.smi");
    for (size_t i = 0; i < ds.size(); ++i) {
      smiles.push_back(ds.smiles(i));
      out << smiles.back() << "\n";
    }
  }
  for (bool chiral : {false, true}) {
    const std::string out = (dir / "ref.json").string();
    const std::string cmd = "/usr/bin/python3 " + std::string(GNN_SOURCE_DIR) + "/tests/reference/scaffold_split.py " +
                            (dir / "bbbp.smi").string() + (chiral ? " --include-chirality" : "") + " > " + out;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(out);
    const nlohmann::json ref = nlohmann::json::parse(in);
    int differ = 0;
    for (size_t i = 0; i < smiles.size(); ++i)
      if (murckoScaffold(smiles[i], chiral) != ref["scaffolds"][i].get<std::string>() && ++differ < 5)
        ADD_FAILURE() << smiles[i] << ": " << murckoScaffold(smiles[i], chiral) << " vs " << ref["scaffolds"][i];
    EXPECT_EQ(differ, 0);
    DatasetSplit s = scaffoldSplit(smiles, 0.8, 0.1, chiral);
    EXPECT_EQ(s.train, ref["train"].get<std::vector<int64_t>>()) << "chiral " << chiral;
    EXPECT_EQ(s.valid, ref["valid"].get<std::vector<int64_t>>()) << "chiral " << chiral;
    EXPECT_EQ(s.test, ref["test"].get<std::vector<int64_t>>()) << "chiral " << chiral;
  }
  std::filesystem::remove_all(dir);
}

class SplitFiles : public ::testing::Test {
 protected:
  // Six molecules, the third (index 2) rejected: dataset positions 0..4 hold source indices 0, 1, 3, 4, 5.
  void SetUp() override {
    dir_ = gnn::testing::tempDir("split_files");
    std::ofstream(dir_ / "m.smi") << "CCO\nc1ccccc1\nC1CC\nCCN\nc1ccncc1\nCC(=O)O\n";
    npz_ = build(-1, "m.npz");
    std::filesystem::create_directories(dir_ / "split");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string build(int64_t limit, const std::string& name) {
    BuildOptions o;
    o.source.path = (dir_ / "m.smi").string();
    o.limit = limit;
    o.outPath = (dir_ / name).string();
    MoleculeDatasetBuilder(o).run();
    return o.outPath;
  }
  std::string splitDir() const { return (dir_ / "split").string(); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / "split" / name) << text; }
  std::filesystem::path dir_;
  std::string npz_;
};

TEST_F(SplitFiles, IndicesOfTheSourceBecomeDatasetPositions) {
  writeGz((dir_ / "split" / "train.csv.gz").string(), "0\n3\n2\n5\n");
  write("valid.csv", "1\n\n");
  write("test.csv", " 4 \n");
  NpzDataset ds(npz_);
  ASSERT_EQ(ds.size(), 5u);
  DatasetSplit s = splitFromFiles(splitDir(), ds);
  EXPECT_EQ(s.train, (std::vector<int64_t>{0, 2, 4}));  // source 0, 3, 5; source 2 was rejected
  EXPECT_EQ(s.valid, (std::vector<int64_t>{1}));
  EXPECT_EQ(s.test, (std::vector<int64_t>{3}));
  EXPECT_EQ(s.droppedRejected, 1);
  nlohmann::json j = s.toJson();
  EXPECT_EQ(j["kind"], "file");
  EXPECT_EQ(j["path"], splitDir());
  EXPECT_EQ(j["dropped_rejected"], 1);
  EXPECT_EQ(j["train"], 3);
}

TEST_F(SplitFiles, BadLinesNameTheFileAndLine) {
  NpzDataset ds(npz_);
  write("train.csv", "0\n1\nx1\n");
  write("valid.csv", "3\n");
  std::string e = errorOf([&] { splitFromFiles(splitDir(), ds); });
  EXPECT_NE(e.find("train.csv:3: 'x1' is not a molecule index"), std::string::npos) << e;
  write("train.csv", "0\n1.5\n");
  e = errorOf([&] { splitFromFiles(splitDir(), ds); });
  EXPECT_NE(e.find("train.csv:2:"), std::string::npos) << e;
  write("train.csv", "0\n-1\n");
  e = errorOf([&] { splitFromFiles(splitDir(), ds); });
  EXPECT_NE(e.find("train.csv:2:"), std::string::npos) << e;
  write("train.csv", "0\n1\n");
  write("valid.csv", "3\n1\n");
  e = errorOf([&] { splitFromFiles(splitDir(), ds); });
  EXPECT_NE(e.find("valid.csv:2: index 1 is already in train"), std::string::npos) << e;
  write("valid.csv", "3\n6\n");
  e = errorOf([&] { splitFromFiles(splitDir(), ds); });
  EXPECT_NE(e.find("valid.csv:2: index 6 is not a molecule of the source (6 molecules)"), std::string::npos) << e;
  std::filesystem::remove(dir_ / "split" / "valid.csv");
  e = errorOf([&] { splitFromFiles(splitDir(), ds); });
  EXPECT_NE(e.find("no valid.csv.gz or valid.csv"), std::string::npos) << e;
  e = errorOf([&] { splitFromFiles((dir_ / "nowhere").string(), ds); });
  EXPECT_NE(e.find("not a folder"), std::string::npos) << e;
}

TEST_F(SplitFiles, IndicesPastTheBuildsLimitAreDroppedAndCounted) {
  NpzDataset ds(build(4, "m4.npz"));  // source 0..3, 2 rejected
  ASSERT_EQ(ds.size(), 3u);
  write("train.csv", "0\n1\n4\n");
  write("valid.csv", "3\n5\n2\n");
  DatasetSplit s = splitFromFiles(splitDir(), ds);
  EXPECT_EQ(s.train, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(s.valid, (std::vector<int64_t>{2}));
  EXPECT_TRUE(s.test.empty());
  EXPECT_EQ(s.droppedBeyondLimit, 2);
  EXPECT_EQ(s.droppedRejected, 1);
  // An explicit limit wins over the recorded one.
  write("valid.csv", "3\n");
  write("train.csv", "0\n");
  EXPECT_EQ(splitFromFiles(splitDir(), NpzDataset(npz_), 3).droppedBeyondLimit, 0);
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
