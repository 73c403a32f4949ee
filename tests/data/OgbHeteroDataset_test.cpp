// OGB's heterogeneous node-property layout (ogbn-mag's) read into a HeteroGraph, PyG's ToUndirected on it, and the
// reader's errors on broken copies of a small folder written here.
#include "data/OgbHeteroDataset.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "data/GzLineReader.h"
#include "data/OgbNodeDataset.h"
#include "data/ProcessTempRoot.h"
#include "data/TensorValues.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;

const std::string kCora = std::string(GNN_SOURCE_DIR) + "/examples/data/cora";

// A small ogbn-mag: three node types listed out of order (OGB sorts them), three relations (one between papers),
// paper features with negative values, node_year, edge_reltype, edge features on "writes", labels and a split for
// papers only.
const std::map<std::string, std::string> kFolder = {
    {"raw/num-node-dict.csv.gz", "paper,author,institution\n4,3,2\n"},
    {"raw/triplet-type-list.csv.gz", "paper,cites,paper\nauthor,writes,paper\nauthor,affiliated_with,institution\n"},
    {"raw/relations/author___affiliated_with___institution/edge.csv.gz", "0,1\n1,0\n2,1\n"},
    {"raw/relations/author___affiliated_with___institution/num-edge-list.csv.gz", "3\n"},
    {"raw/relations/author___affiliated_with___institution/edge_reltype.csv.gz", "5\n6\n7\n"},
    {"raw/relations/author___writes___paper/edge.csv.gz", "0,0\n0,1\n1,2\n2,3\n"},
    {"raw/relations/author___writes___paper/num-edge-list.csv.gz", "4\n"},
    {"raw/relations/author___writes___paper/edge-feat.csv.gz", "0.5,1\n1.5,2\n2.5,3\n3.5,4\n"},
    {"raw/relations/paper___cites___paper/edge.csv.gz", "0,1\n1,0\n2,2\n3,1\n"},
    {"raw/relations/paper___cites___paper/num-edge-list.csv.gz", "4\n"},
    {"raw/relations/paper___cites___paper/edge_reltype.csv.gz", "1\n2\n3\n4\n"},
    {"raw/node-feat/paper/node-feat.csv.gz", "1,-2\n3,4\n-5,6\n7,8\n"},
    {"raw/node-feat/paper/node_year.csv.gz", "2010\n2011\n2012\n2019\n"},
    {"raw/nodetype-has-label.csv.gz", "author,institution,paper\nFalse,False,True\n"},
    {"raw/node-label/paper/node-label.csv.gz", "3\n0\n2\n1\n"},
    {"split/time/nodetype-has-split.csv.gz", "paper\nTrue\n"},
    {"split/time/paper/train.csv.gz", "0\n1\n"},
    {"split/time/paper/valid.csv.gz", "2\n"},
    {"split/time/paper/test.csv.gz", "3\n"},
};

class OgbHetero : public ::testing::Test {
 protected:
  void SetUp() override {
    static gnn::testing::ProcessTempRoot root("gnn_ogb_hetero_");
    dir_ = root.path() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    for (const auto& [rel, text] : kFolder) writeGz(rel, text);
  }
  void writeGz(const std::string& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    gzFile f = gzopen((dir_ / rel).c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
  }
  static OgbHeteroOptions plain() {
    OgbHeteroOptions o;
    o.normalization = FeatureNormalization::None;
    o.additionalNodeFiles = std::vector<std::string>{"node_year"};
    o.additionalEdgeFiles = std::vector<std::string>{"edge_reltype"};
    return o;
  }
  // Expects load() to fail with an InputError naming `file` (and `line` when > 0) and saying `fragment`.
  void expectError(const std::string& file, int64_t line, const std::string& fragment,
                   const OgbHeteroOptions& o = plain()) {
    try {
      OgbHeteroDataset::load(dir_.string(), o);
      FAIL() << "expected an error naming " << file;
    } catch (const InputError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find((dir_ / file).string()), std::string::npos) << m;
      if (line > 0) {
        EXPECT_NE(m.find(".gz:" + std::to_string(line) + ": "), std::string::npos) << m;
      }
      EXPECT_NE(m.find(fragment), std::string::npos) << m;
    }
  }
  fs::path dir_;
};

TEST_F(OgbHetero, ReadsEveryTensorInOgbsSortedOrder) {
  OgbHeteroDataset ds = OgbHeteroDataset::load(dir_.string(), plain());
  const HeteroGraph& g = ds.graph;
  EXPECT_EQ(g.nodeTypes(), (std::vector<std::string>{"author", "institution", "paper"}));
  const std::vector<EdgeType> relations{{"author", "affiliated_with", "institution"},
                                        {"author", "writes", "paper"},
                                        {"paper", "cites", "paper"}};
  EXPECT_EQ(g.edgeTypes(), relations);
  EXPECT_EQ(g.metadata().second, relations);
  EXPECT_EQ(g.numNodes("author"), 3);
  EXPECT_EQ(g.numNodes("institution"), 2);
  EXPECT_EQ(g.numNodes("paper"), 4);
  EXPECT_EQ(g.numNodes(), 9);
  EXPECT_EQ(g.numEdges(), 11);
  EXPECT_FALSE(ds.inverseEdgesAdded);

  EXPECT_EQ(values(g.edge(relations[0]).edgeIndex), (std::vector<int64_t>{0, 1, 2, 1, 0, 1}));
  EXPECT_EQ(values(g.edge(relations[0]).edgeReltype), (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(g.edge(relations[0]).edgeReltype.shape(), (Shape{3, 1}));
  EXPECT_FALSE(g.edge(relations[0]).edgeAttr.defined());
  EXPECT_EQ(values(g.edge(relations[1]).edgeIndex), (std::vector<int64_t>{0, 0, 1, 2, 0, 1, 2, 3}));
  EXPECT_EQ(g.edge(relations[1]).edgeAttr.shape(), (Shape{4, 2}));
  EXPECT_EQ(floats(g.edge(relations[1]).edgeAttr), (std::vector<float>{0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f, 4}));
  EXPECT_FALSE(g.edge(relations[1]).edgeReltype.defined());
  EXPECT_EQ(values(g.edge(relations[2]).edgeIndex), (std::vector<int64_t>{0, 1, 2, 3, 1, 0, 2, 1}));
  EXPECT_EQ(values(g.edge(relations[2]).edgeReltype), (std::vector<int64_t>{1, 2, 3, 4}));

  const NodeStore& paper = g.node("paper");
  EXPECT_EQ(paper.x.shape(), (Shape{4, 2}));
  EXPECT_EQ(floats(paper.x), (std::vector<float>{1, -2, 3, 4, -5, 6, 7, 8}));
  EXPECT_EQ(ds.normalization.at("paper"), FeatureNormalization::None);
  EXPECT_EQ(paper.nodeFiles.at("node_year").shape(), (Shape{4, 1}));
  EXPECT_EQ(values(paper.nodeFiles.at("node_year")), (std::vector<int64_t>{2010, 2011, 2012, 2019}));
  EXPECT_EQ(values(paper.y), (std::vector<int64_t>{3, 0, 2, 1}));
  EXPECT_EQ(paper.y.shape(), (Shape{4}));
  EXPECT_EQ(ds.numClasses.at("paper"), 4);
  EXPECT_TRUE(paper.hasSplit);
  EXPECT_EQ(paper.trainIdx, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(paper.validIdx, (std::vector<int64_t>{2}));
  EXPECT_EQ(paper.testIdx, (std::vector<int64_t>{3}));
  for (const char* t : {"author", "institution"}) {
    EXPECT_FALSE(g.node(t).x.defined()) << t;
    EXPECT_FALSE(g.node(t).y.defined()) << t;
    EXPECT_FALSE(g.node(t).hasSplit) << t;
    EXPECT_TRUE(g.node(t).nodeFiles.empty()) << t;
  }
  EXPECT_EQ(ds.numClasses.count("author"), 0u);
  g.validate();
}

TEST_F(OgbHetero, AutoStandardisesPaperFeaturesWithTheTrainingPapers) {
  OgbHeteroOptions o = plain();
  o.normalization = FeatureNormalization::Auto;  // negative values: Standard
  OgbHeteroDataset ds = OgbHeteroDataset::load(dir_.string(), o);
  EXPECT_EQ(ds.normalization.at("paper"), FeatureNormalization::Standard);
  // Training papers 0 and 1: feature 0 is 1, 3 (mean 2, std 1), feature 1 is -2, 4 (mean 1, std 3).
  EXPECT_EQ(ds.featureMean.at("paper"), (std::vector<double>{2, 1}));
  EXPECT_EQ(ds.featureStd.at("paper"), (std::vector<double>{1, 3}));
  const std::vector<float> x = floats(ds.graph.node("paper").x);
  const std::vector<float> want{-1, -1, 1, 1, -7, 5.0f / 3, 5, 7.0f / 3};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(x[i], want[i]) << i;
}

TEST_F(OgbHetero, FollowsOgbsMasterCsvForAFolderNamedOgbnMag) {
  const fs::path mag = dir_.parent_path() / "ogbn_mag";
  fs::remove_all(mag);
  fs::rename(dir_, mag);
  OgbHeteroOptions o;
  o.normalization = FeatureNormalization::None;  // additional files as master.csv lists them for ogbn-mag
  OgbHeteroDataset ds = OgbHeteroDataset::load(mag.string(), o);
  EXPECT_EQ(ds.name, "ogbn_mag");
  EXPECT_EQ(values(ds.graph.node("paper").nodeFiles.at("node_year")), (std::vector<int64_t>{2010, 2011, 2012, 2019}));
  EXPECT_EQ(values(ds.graph.edge({"paper", "cites", "paper"}).edgeReltype), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_FALSE(ds.inverseEdgesAdded);
  fs::rename(mag, dir_);
  // Any other folder name: no additional file unless asked for.
  OgbHeteroDataset other = OgbHeteroDataset::load(dir_.string(), o);
  EXPECT_TRUE(other.graph.node("paper").nodeFiles.empty());
  EXPECT_FALSE(other.graph.edge({"paper", "cites", "paper"}).edgeReltype.defined());
}

// Only a relation within one type can hold its inverse edges (found by fuzz/ogb_hetero_fuzzer.cpp: OGB's layout
// put (d, s) into author-writes-paper, d an author id read as a paper's).
TEST_F(OgbHetero, InverseEdgesInterleaveAsOgbsNpRepeat) {
  fs::remove_all(dir_ / "raw/relations/author___affiliated_with___institution");
  fs::remove_all(dir_ / "raw/relations/author___writes___paper");
  writeGz("raw/triplet-type-list.csv.gz", "paper,cites,paper\n");
  writeGz("raw/relations/paper___cites___paper/edge-feat.csv.gz", "0.5\n1.5\n2.5\n3.5\n");
  OgbHeteroOptions o = plain();
  o.addInverseEdges = AddInverseEdges::On;
  OgbHeteroDataset ds = OgbHeteroDataset::load(dir_.string(), o);
  EXPECT_TRUE(ds.inverseEdgesAdded);
  const EdgeStore& cites = ds.graph.edge({"paper", "cites", "paper"});
  EXPECT_EQ(values(cites.edgeIndex), (std::vector<int64_t>{0, 1, 1, 0, 2, 2, 3, 1, 1, 0, 0, 1, 2, 2, 1, 3}));
  EXPECT_EQ(values(cites.edgeReltype), (std::vector<int64_t>{1, 1, 2, 2, 3, 3, 4, 4}));
  EXPECT_EQ(floats(cites.edgeAttr), (std::vector<float>{0.5f, 0.5f, 1.5f, 1.5f, 2.5f, 2.5f, 3.5f, 3.5f}));
  ds.graph.validate();
}

TEST_F(OgbHetero, RefusesInverseEdgesForARelationBetweenTwoTypes) {
  OgbHeteroOptions o = plain();
  o.addInverseEdges = AddInverseEdges::On;
  expectError("raw/relations/author___affiliated_with___institution/edge.csv.gz", 0,
              "relation author__affiliated_with__institution joins two node types", o);
}

TEST_F(OgbHetero, FeaturesOnlyReadsNoLabelsAndNoSplit) {
  fs::remove_all(dir_ / "split");
  fs::remove_all(dir_ / "raw" / "node-label");
  OgbHeteroOptions o = plain();
  o.featuresOnly = true;
  OgbHeteroDataset ds = OgbHeteroDataset::load(dir_.string(), o);
  EXPECT_FALSE(ds.graph.node("paper").y.defined());
  EXPECT_FALSE(ds.graph.node("paper").hasSplit);
  EXPECT_EQ(ds.graph.node("paper").x.dim(0), 4);
}

// PyG 2.3.1's ToUndirected(reduce="add", merge=True) on the folder, worked by hand:
//  paper-cites-paper (same type) -> to_undirected: (0,1),(1,0),(2,2),(3,1) + flips (1,0),(0,1),(2,2),(1,3), sorted
//  and coalesced to (0,1),(1,0),(1,3),(2,2),(3,1); edge_reltype summed over duplicates: 1+2, 2+1, 4, 3+3, 4.
//  author-writes-paper, author-affiliated_with-institution (bipartite) -> rev_ types appended in visiting order,
//  flipped edges, the same edge features.
TEST_F(OgbHetero, ToUndirectedAsPyG) {
  OgbHeteroOptions o = plain();
  o.toUndirected = true;
  OgbHeteroDataset ds = OgbHeteroDataset::load(dir_.string(), o);
  const HeteroGraph& g = ds.graph;
  EXPECT_EQ(g.edgeTypes(), (std::vector<EdgeType>{{"author", "affiliated_with", "institution"},
                                                  {"author", "writes", "paper"},
                                                  {"paper", "cites", "paper"},
                                                  {"institution", "rev_affiliated_with", "author"},
                                                  {"paper", "rev_writes", "author"}}));
  const EdgeStore& cites = g.edge({"paper", "cites", "paper"});
  EXPECT_EQ(values(cites.edgeIndex), (std::vector<int64_t>{0, 1, 1, 2, 3, 1, 0, 3, 2, 1}));
  EXPECT_EQ(values(cites.edgeReltype), (std::vector<int64_t>{3, 3, 4, 6, 4}));
  EXPECT_EQ(cites.edgeReltype.shape(), (Shape{5, 1}));
  const EdgeStore& revWrites = g.edge({"paper", "rev_writes", "author"});
  EXPECT_EQ(values(revWrites.edgeIndex), (std::vector<int64_t>{0, 1, 2, 3, 0, 0, 1, 2}));
  EXPECT_EQ(floats(revWrites.edgeAttr), (std::vector<float>{0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f, 4}));
  const EdgeStore& revAff = g.edge({"institution", "rev_affiliated_with", "author"});
  EXPECT_EQ(values(revAff.edgeIndex), (std::vector<int64_t>{1, 0, 1, 0, 1, 2}));
  EXPECT_EQ(values(revAff.edgeReltype), (std::vector<int64_t>{5, 6, 7}));
  // The forward relations are left as read.
  EXPECT_EQ(values(g.edge({"author", "writes", "paper"}).edgeIndex), (std::vector<int64_t>{0, 0, 1, 2, 0, 1, 2, 3}));
  g.validate();
}

// ---- Malformed folders: each refused with an InputError naming the file (and line).

TEST_F(OgbHetero, RefusesARelationNamingAnUnknownNodeType) {
  writeGz("raw/triplet-type-list.csv.gz", "paper,cites,paper\nauthor,writes,venue\n");
  expectError("raw/triplet-type-list.csv.gz", 2, "node type 'venue' is not in num-node-dict");
}

TEST_F(OgbHetero, RefusesARelationNameThatLeavesItsFolder) {
  writeGz("raw/triplet-type-list.csv.gz", "paper,../../x,paper\n");
  expectError("raw/triplet-type-list.csv.gz", 1, "is not a folder name");
}

TEST_F(OgbHetero, ARelationNameTooLongForAFolderIsAFileNotFound) {
  const std::string rel(300, 'r');
  writeGz("raw/triplet-type-list.csv.gz", "paper," + rel + ",paper\n");
  expectError("raw/relations/paper___" + rel + "___paper/edge.csv.gz", 0, "file not found");
}

TEST_F(OgbHetero, RefusesAnEdgePastItsDestinationTypesCount) {
  writeGz("raw/relations/author___writes___paper/edge.csv.gz", "0,0\n0,1\n1,4\n2,3\n");
  expectError("raw/relations/author___writes___paper/edge.csv.gz", 3,
              "destination 4 is outside node type 'paper' (4 nodes)");
}

TEST_F(OgbHetero, RefusesAnEdgePastItsSourceTypesCount) {
  writeGz("raw/relations/author___affiliated_with___institution/edge.csv.gz", "0,1\n3,0\n2,1\n");
  expectError("raw/relations/author___affiliated_with___institution/edge.csv.gz", 2,
              "source 3 is outside node type 'author' (3 nodes)");
}

TEST_F(OgbHetero, RefusesASplitIdOutOfRange) {
  writeGz("split/time/paper/valid.csv.gz", "2\n9\n");
  expectError("split/time/paper/valid.csv.gz", 2, "node id 9 is outside [0, 4)");
}

TEST_F(OgbHetero, RefusesAnEdgeCountThatDisagrees) {
  writeGz("raw/relations/paper___cites___paper/num-edge-list.csv.gz", "5\n");
  expectError("raw/relations/paper___cites___paper/num-edge-list.csv.gz", 1, "declares 5 edges but edge.csv has 4");
}

TEST_F(OgbHetero, RefusesAMissingEdgeCount) {
  fs::remove(dir_ / "raw/relations/paper___cites___paper/num-edge-list.csv.gz");
  expectError("raw/relations/paper___cites___paper/num-edge-list.csv.gz", 0, "file not found");
}

TEST_F(OgbHetero, RefusesFeatureRowsThatDisagreeWithTheTypesCount) {
  writeGz("raw/node-feat/paper/node-feat.csv.gz", "1,-2\n3,4\n-5,6\n");
  expectError("raw/node-feat/paper/node-feat.csv.gz", 3, "has 3 feature rows for the 4 nodes of type 'paper'");
}

TEST_F(OgbHetero, RefusesEdgeFeatureRowsThatDisagreeWithTheEdges) {
  writeGz("raw/relations/author___writes___paper/edge-feat.csv.gz", "0.5,1\n1.5,2\n");
  expectError("raw/relations/author___writes___paper/edge-feat.csv.gz", 2, "has 2 feature rows for the 4 edges");
}

TEST_F(OgbHetero, RefusesNodeFileRowsThatDisagreeWithTheTypesCount) {
  writeGz("raw/node-feat/paper/node_year.csv.gz", "2010\n2011\n2012\n");
  expectError("raw/node-feat/paper/node_year.csv.gz", 3, "has 3 rows for 4 nodes");
}

TEST_F(OgbHetero, RefusesANodeCountRowShorterThanItsHeader) {
  writeGz("raw/num-node-dict.csv.gz", "paper,author,institution\n4,3\n");
  expectError("raw/num-node-dict.csv.gz", 2, "row has 2 values for 3 node types in the header");
}

TEST_F(OgbHetero, RefusesANodeCountThatIsNoNumber) {
  writeGz("raw/num-node-dict.csv.gz", "paper,author,institution\n4,three,2\n");
  expectError("raw/num-node-dict.csv.gz", 2, "node type 'author': count 'three' is not a non-negative integer");
}

TEST_F(OgbHetero, RefusesALabelledTypeWithoutLabels) {
  writeGz("raw/nodetype-has-label.csv.gz", "author,institution,paper\nTrue,False,True\n");
  expectError("raw/node-label/author/node-label.csv.gz", 0, "file not found");
}

TEST_F(OgbHetero, RefusesAFolderWhereNoTypeHasLabels) {
  writeGz("raw/nodetype-has-label.csv.gz", "author,institution,paper\nFalse,False,False\n");
  expectError("raw/nodetype-has-label.csv.gz", 2, "no node type has labels");
}

TEST_F(OgbHetero, RefusesLabelsThatDisagreeWithTheTypesCount) {
  writeGz("raw/node-label/paper/node-label.csv.gz", "3\n0\n2\n1\n0\n");
  expectError("raw/node-label/paper/node-label.csv.gz", 5, "more labels than the 4 nodes of type 'paper'");
}

TEST_F(OgbHetero, RefusesNonNumericEdgeText) {
  writeGz("raw/relations/paper___cites___paper/edge.csv.gz", "0,1\n1,x\n");
  expectError("raw/relations/paper___cites___paper/edge.csv.gz", 2, "expected an integer, found 'x'");
}

TEST_F(OgbHetero, RefusesNonNumericFeatureText) {
  writeGz("raw/node-feat/paper/node-feat.csv.gz", "1,-2\n3,four\n-5,6\n7,8\n");
  expectError("raw/node-feat/paper/node-feat.csv.gz", 2, "is not a number: 'four'");
}

TEST_F(OgbHetero, RefusesATruncatedGzipNamingTheFile) {
  const std::string rel = "raw/relations/author___writes___paper/edge.csv.gz";
  std::string text;
  for (int i = 0; i < 2000; ++i) text += std::to_string(i % 3) + "," + std::to_string(i % 4) + "\n";
  writeGz(rel, text);
  fs::resize_file(dir_ / rel, fs::file_size(dir_ / rel) / 2);
  expectError(rel, 0, "truncated gzip data");
}

TEST_F(OgbHetero, RefusesAHasSplitTableNamingAnUnknownType) {
  writeGz("split/time/nodetype-has-split.csv.gz", "paper,venue\nTrue,False\n");
  expectError("split/time/nodetype-has-split.csv.gz", 1, "node type 'venue' is not in num-node-dict");
}

TEST_F(OgbHetero, RefusesAFlagThatIsNeitherTrueNorFalse) {
  writeGz("split/time/nodetype-has-split.csv.gz", "paper\nyes\n");
  expectError("split/time/nodetype-has-split.csv.gz", 2, "expected True or False, found 'yes'");
}

TEST(OgbHeteroLayout, TellsTheTwoOgbLayoutsApart) {
  static gnn::testing::ProcessTempRoot root("gnn_ogb_layout_");
  const fs::path d = root.path() / "hetero";
  fs::create_directories(d / "raw");
  std::ofstream(d / "raw" / "triplet-type-list.csv") << "a,r,a\n";
  EXPECT_TRUE(isOgbHeteroLayout(d.string()));
  EXPECT_FALSE(isOgbHeteroLayout(kCora));
  try {
    OgbNodeDataset::load(d.string());
    FAIL() << "a heterogeneous folder read as homogeneous";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("triplet-type-list.csv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("OgbHeteroDataset"), std::string::npos) << e.what();
  }
  try {
    OgbHeteroDataset::load(kCora);
    FAIL() << "a homogeneous folder read as heterogeneous";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("raw/num-node-dict.csv.gz: file not found"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gnn
