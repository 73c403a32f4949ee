// The OGB node-property reader on the shipped Cora, and its errors on broken copies of it.
#include "data/OgbNodeDataset.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "data/GzLineReader.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;

const std::string kCora = std::string(GNN_SOURCE_DIR) + "/examples/data/cora";

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
