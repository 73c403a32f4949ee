// The OGB node-property reader on the shipped Cora, and its errors on broken copies of it.
#include "data/OgbNodeDataset.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "data/GzLineReader.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;

const std::string kCora = std::string(GNN_SOURCE_DIR) + "/examples/data/cora";

OgbNodeOptions withNormalization(FeatureNormalization n) {
  OgbNodeOptions o;
  o.normalization = n;
  return o;
}

TEST(OgbNodeDataset, ReadsCoraAsPyGDoes) {
  OgbNodeDataset ds = OgbNodeDataset::load(kCora);
  EXPECT_EQ(ds.graph.numNodes, 2708);
  EXPECT_EQ(ds.graph.numEdges(), 10556);
  EXPECT_EQ(ds.graph.x.dim(1), 1433);
  EXPECT_EQ(ds.numClasses, 7);
  EXPECT_EQ(ds.trainIdx.size(), 140u);
  EXPECT_EQ(ds.validIdx.size(), 500u);
  EXPECT_EQ(ds.testIdx.size(), 1000u);
  // First edges 0->633, 0->1862, 0->2582 and class counts, as in PyG's Planetoid('Cora').
  const int64_t* e = ds.graph.edgeIndex.data<int64_t>();
  EXPECT_EQ(e[0], 0);
  EXPECT_EQ(e[10556], 633);
  EXPECT_EQ(e[10556 + 2], 2582);
  std::vector<int> counts(7, 0);
  for (int64_t i = 0; i < 2708; ++i) counts[ds.graph.y.data<int64_t>()[i]]++;
  EXPECT_EQ(counts, (std::vector<int>{351, 217, 418, 818, 426, 298, 180}));
  // NormalizeFeatures: every non-empty row sums to 1; 49216 non-zeros.
  EXPECT_NEAR(ds.graph.x.matrix<float>().row(0).sum(), 1.0f, 1e-5f);
  EXPECT_EQ(ds.sparseFeatures().nnz(), 49216);
}

class BrokenCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gnn_broken_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::copy(kCora, dir_, fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void writeGz(const std::string& rel, const std::string& text) {
    gzFile f = gzopen((dir_ / rel).c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
  }
  // Expects load() to fail with an InputError whose message names `file` (and `line` when > 0).
  void expectError(const std::string& file, int64_t line, const std::string& fragment) {
    try {
      OgbNodeDataset::load(dir_.string());
      FAIL() << "expected an error naming " << file;
    } catch (const InputError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find(file), std::string::npos) << m;
      if (line > 0) {
        EXPECT_NE(m.find(":" + std::to_string(line) + ":"), std::string::npos) << m;
      }
      EXPECT_NE(m.find(fragment), std::string::npos) << m;
    }
  }
  fs::path dir_;
};

TEST_F(BrokenCopy, TruncatedGzip) {
  fs::path p = dir_ / "raw/node-feat.csv.gz";
  fs::resize_file(p, fs::file_size(p) / 2);
  expectError("node-feat.csv.gz", 0, "truncated");
}

TEST_F(BrokenCopy, MissingSplitFile) {
  fs::remove(dir_ / "split/public/valid.csv.gz");
  expectError("valid.csv", 0, "not found");
}

TEST_F(BrokenCopy, FeatureRowOfTheWrongWidth) {
  writeGz("raw/node-feat.csv.gz", "0,1,0\n1,0,0\n1,0\n");
  expectError("node-feat.csv.gz", 3, "expected 3");
}

TEST_F(BrokenCopy, EdgePastTheLastNode) {
  writeGz("raw/edge.csv.gz", "0,1\n1,0\n5,2708\n");
  expectError("edge.csv.gz", 3, "past the last node");
}

TEST_F(BrokenCopy, NonNumericLabel) {
  writeGz("raw/node-label.csv.gz", "1\nthree\n");
  expectError("node-label.csv.gz", 2, "integer");
}

TEST_F(BrokenCopy, LabelsOutOfRangeAreRefusedWithTheirLine) {
  writeGz("raw/node-label.csv.gz", "1\n30000000\n");
  expectError("node-label.csv.gz", 2, "class label 30000000 is out of range");
  writeGz("raw/node-label.csv.gz", "1\n2\n9223372036854775807\n");
  expectError("node-label.csv.gz", 3, "out of range");
}

// num-node-list is read to its end like the other files: damage after its one line is refused, not ignored.
TEST_F(BrokenCopy, NodeCountFileIsReadToItsEnd) {
  const fs::path p = dir_ / "raw/num-node-list.csv.gz";
  std::string gz;
  {
    std::ifstream f(p, std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(f), {});
  }
  ASSERT_GT(gz.size(), 8u);
  std::ofstream(p, std::ios::binary | std::ios::app) << "GARBAGE!!";
  expectError("num-node-list.csv.gz", 0, "is not another gzip member");
  std::ofstream(p, std::ios::binary | std::ios::trunc) << gz.substr(0, gz.size() - 4);  // ISIZE cut off
  expectError("num-node-list.csv.gz", 0, "truncated gzip data");
  writeGz("raw/num-node-list.csv.gz", "2708\n2708\n");
  expectError("num-node-list.csv.gz", 2, "unexpected line '2708'");
  writeGz("raw/num-node-list.csv.gz", "2708\nnot a count\n");
  expectError("num-node-list.csv.gz", 2, "unexpected line 'not a count'");
  writeGz("raw/num-node-list.csv.gz", "");
  expectError("num-node-list.csv.gz", 0, "empty file");
  writeGz("raw/num-node-list.csv.gz", "2707\n");
  expectError("num-node-list.csv.gz", 1, "declares 2707 nodes");
  // Its one line with blank lines around it, as a text editor may leave it, is still read.
  writeGz("raw/num-node-list.csv.gz", "\n2708\n\n");
  EXPECT_EQ(OgbNodeDataset::load(dir_.string()).graph.numNodes, 2708);
}

TEST_F(BrokenCopy, NonFiniteFeatureIsRefusedWithItsLine) {
  writeGz("raw/node-feat.csv.gz", "0,1,0\n1,nan,0\n");
  expectError("node-feat.csv.gz", 2, "feature 1 is not a finite number: 'nan'");
  writeGz("raw/node-feat.csv.gz", "0,1,0\n1,0,1e39\n");  // past float's range
  expectError("node-feat.csv.gz", 2, "feature 2 is not a");
}

// A small graph in OGB's raw layout (plain .csv files, which the reader takes as well as .csv.gz): `rows` are the
// feature rows, every node of class 0, no edges, and the split as given.
class SmallGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gnn_small_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "raw");
    fs::create_directories(dir_ / "split/s");
  }
  void TearDown() override { fs::remove_all(dir_); }

  OgbNodeDataset load(const std::vector<std::string>& rows, const std::string& train, FeatureNormalization n) {
    std::string feats, labels;
    for (const std::string& r : rows) {
      feats += r + "\n";
      labels += "0\n";
    }
    std::ofstream(dir_ / "raw/node-feat.csv") << feats;
    std::ofstream(dir_ / "raw/node-label.csv") << labels;
    std::ofstream(dir_ / "raw/edge.csv") << "";
    std::ofstream(dir_ / "split/s/train.csv") << train;
    std::ofstream(dir_ / "split/s/valid.csv") << "";
    std::ofstream(dir_ / "split/s/test.csv") << "";
    return OgbNodeDataset::load(dir_.string(), withNormalization(n));
  }
  static std::vector<float> values(const OgbNodeDataset& ds) {
    const float* p = ds.graph.x.data<float>();
    return std::vector<float>(p, p + ds.graph.x.numel());
  }
  fs::path dir_;
};

// `row` on bag-of-words features gives the bits the loader gave before the choice existed (each row divided by its
// float sum unless that is 0), so Cora's and CiteSeer's results are unchanged; `auto` picks it for them.
TEST(OgbNodeNormalization, RowOnNonNegativeFeaturesKeepsTheEarlierBits) {
  for (const char* name : {"cora", "citeseer"}) {
    const std::string dir = std::string(GNN_SOURCE_DIR) + "/examples/data/" + name;
    OgbNodeDataset raw = OgbNodeDataset::load(dir, withNormalization(FeatureNormalization::None));
    EXPECT_EQ(raw.normalization, FeatureNormalization::None);
    auto x = raw.graph.x.matrix<float>();
    for (int64_t i = 0; i < x.rows(); ++i) {
      float s = x.row(i).sum();
      if (s != 0) x.row(i) /= s;
    }
    for (FeatureNormalization n : {FeatureNormalization::Row, FeatureNormalization::Auto}) {
      OgbNodeDataset ds = OgbNodeDataset::load(dir, withNormalization(n));
      EXPECT_EQ(ds.normalization, FeatureNormalization::Row) << name;
      ASSERT_EQ(ds.graph.x.numel(), raw.graph.x.numel());
      EXPECT_EQ(std::memcmp(ds.graph.x.data<float>(), raw.graph.x.data<float>(), raw.graph.x.numel() * sizeof(float)),
                0)
          << name << " " << featureNormalizationName(n);
      EXPECT_TRUE(ds.featureMean.empty());
    }
  }
  // The default is auto.
  EXPECT_EQ(OgbNodeDataset::load(kCora).normalization, FeatureNormalization::Row);
}

// PyG's NormalizeFeatures: x - x.min() over the whole matrix, then each row divided by max(row sum, 1).
TEST_F(SmallGraph, RowWithNegativeFeaturesIsPyGsFormula) {
  // Minimum -1: shifted rows 0,3,1 (sum 4) | 1.5,1.5,0 (sum 3) | 0,0,0 (sum 0, left) | 0,0.5,0 (sum 0.5, left).
  OgbNodeDataset ds = load({"-1,2,0", "0.5,0.5,-1", "-1,-1,-1", "-1,-0.5,-1"}, "0\n", FeatureNormalization::Row);
  EXPECT_EQ(ds.normalization, FeatureNormalization::Row);
  EXPECT_EQ(values(ds), (std::vector<float>{0, 0.75f, 0.25f, 0.5f, 0.5f, 0, 0, 0, 0, 0, 0.5f, 0}));
  // Without negatives the clamp still applies: a row summing to less than 1 is not scaled up; a positive minimum
  // is subtracted too (PyG shifts whatever the minimum is).
  ds = load({"0,0.2,0.3", "0,1,3"}, "0\n", FeatureNormalization::Row);
  EXPECT_EQ(values(ds), (std::vector<float>{0, 0.2f, 0.3f, 0, 0.25f, 0.75f}));
  ds = load({"1,1.5", "2,4"}, "0\n", FeatureNormalization::Row);
  EXPECT_EQ(values(ds), (std::vector<float>{0, 0.5f, 0.25f, 0.75f}));
}

TEST_F(SmallGraph, StandardTakesItsStatisticsFromTheTrainingNodesOnly) {
  // Training nodes 0 and 1 (node 1 listed twice counts once). Column 0: mean 2, std 1. Column 1: constant 5 over
  // them, so std 1. Column 2: mean 0.5, std 0.5 (the population std). Nodes 2 and 3 are scaled with those.
  OgbNodeDataset ds = load({"1,5,0", "3,5,1", "100,7,0", "-50,-1,0.25"}, "1\n0\n1\n", FeatureNormalization::Standard);
  EXPECT_EQ(ds.normalization, FeatureNormalization::Standard);
  EXPECT_EQ(ds.featureMean, (std::vector<double>{2, 5, 0.5}));
  EXPECT_EQ(ds.featureStd, (std::vector<double>{1, 1, 0.5}));
  EXPECT_EQ(values(ds), (std::vector<float>{-1, 0, -1, 1, 0, 1, 98, 2, -1, -52, -6, -0.5f}));
  // Not a statistic of all nodes: with every node in training, column 0's mean is 13.5.
  ds = load({"1,5,0", "3,5,1", "100,7,0", "-50,-1,0.25"}, "0\n1\n2\n3\n", FeatureNormalization::Standard);
  EXPECT_EQ(ds.featureMean[0], 13.5);
  // The statistics need training nodes.
  try {
    load({"1,5,0", "3,5,1"}, "", FeatureNormalization::Standard);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("train.csv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lists no node"), std::string::npos) << e.what();
  }
}

TEST_F(SmallGraph, AutoPicksRowForNonNegativeFeaturesElseStandard) {
  OgbNodeDataset ds = load({"0,1,2", "3,0,0.5"}, "0\n", FeatureNormalization::Auto);
  EXPECT_EQ(ds.normalization, FeatureNormalization::Row);
  EXPECT_EQ(values(ds), (std::vector<float>{0, 1.0f / 3, 2.0f / 3, 3 / 3.5f, 0, 0.5f / 3.5f}));
  ds = load({"0,1,2", "3,-0.001,0.5"}, "0\n1\n", FeatureNormalization::Auto);
  EXPECT_EQ(ds.normalization, FeatureNormalization::Standard);
  EXPECT_EQ(ds.featureMean.size(), 3u);
  ds = load({"0,1,2", "3,-0.001,0.5"}, "0\n1\n", FeatureNormalization::None);
  EXPECT_EQ(ds.normalization, FeatureNormalization::None);
  EXPECT_EQ(values(ds), (std::vector<float>{0, 1, 2, 3, -0.001f, 0.5f}));
}

TEST(OgbNodeNormalization, NamesRoundTrip) {
  for (FeatureNormalization n : {FeatureNormalization::None, FeatureNormalization::Row, FeatureNormalization::Standard,
                                 FeatureNormalization::Auto})
    EXPECT_EQ(parseFeatureNormalization(featureNormalizationName(n)), n);
  EXPECT_FALSE(parseFeatureNormalization("l1").has_value());
  EXPECT_FALSE(parseFeatureNormalization("").has_value());
}

TEST(GzLineReader, ReadsPlainAndGzipAlike) {
  fs::path plain = fs::temp_directory_path() / "gnn_lines.txt";
  { std::ofstream(plain) << "a,b\r\nc\n\nlast-without-newline"; }
  GzLineReader in(plain.string());
  std::vector<std::string> lines;
  std::string_view l;
  while (in.next(l)) lines.emplace_back(l);
  EXPECT_EQ(lines, (std::vector<std::string>{"a,b", "c", "", "last-without-newline"}));
  EXPECT_EQ(in.lineNumber(), 4);
  fs::remove(plain);
}

}  // namespace
}  // namespace gnn
