// OGB's master.csv settings in the node reader. add_inverse_edge: a folder named after an undirected OGB dataset
// (ogbn-products) gets the reverse of every stored edge, right after it, as ogb/io/read_graph_raw.py lays them out;
// any other folder is read as stored unless the option says on. Additional node files: node_year for ogbn-arxiv
// (raw/node_year.csv.gz, one row per node), read by name or when asked. OGB's master.csv facts
// (data/OgbNodeMaster.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "data/GzLineReader.h"  // InputError
#include "data/OgbNodeDataset.h"
#include "data/OgbNodeMaster.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;

using Edges = std::vector<std::pair<int64_t, int64_t>>;

Edges edgesOf(const OgbNodeDataset& ds) {
  const int64_t E = ds.graph.numEdges();
  const int64_t* e = ds.graph.edgeIndex.data<int64_t>();
  Edges out;
  for (int64_t k = 0; k < E; ++k) out.emplace_back(e[k], e[E + k]);
  return out;
}

OgbNodeOptions inverse(AddInverseEdges a) {
  OgbNodeOptions o;
  o.addInverseEdges = a;
  return o;
}

// 4 nodes, each undirected edge stored once (as OGB stores ogbn-products), in a folder of the given name.
class OneWayEdges : public ::testing::Test {
 protected:
  void SetUp() override {
    parent_ = fs::temp_directory_path() / ("gnn_inverse_" + std::to_string(::getpid()) + "_" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(parent_);
  }
  void TearDown() override { fs::remove_all(parent_); }

  std::string folder(const std::string& name, const std::string& edges = "0,1\n1,2\n3,0\n",
                     const std::string& numEdges = "3\n") {
    const fs::path dir = parent_ / name;
    fs::create_directories(dir / "raw");
    fs::create_directories(dir / "split/sales_ranking");
    std::ofstream(dir / "raw/node-feat.csv") << "1,0\n0,1\n1,1\n0.5,0\n";
    std::ofstream(dir / "raw/node-label.csv") << "0\n1\n0\n1\n";
    std::ofstream(dir / "raw/num-node-list.csv") << "4\n";
    std::ofstream(dir / "raw/num-edge-list.csv") << numEdges;
    std::ofstream(dir / "raw/edge.csv") << edges;
    std::ofstream(dir / "split/sales_ranking/train.csv") << "0\n1\n";
    std::ofstream(dir / "split/sales_ranking/valid.csv") << "2\n";
    std::ofstream(dir / "split/sales_ranking/test.csv") << "3\n";
    // OGB's additional node files of ogbn-arxiv (node_year) and ogbn-proteins (node_species).
    std::ofstream(dir / "raw/node_year.csv") << "2011\n2015\n2019\n2008\n";
    std::ofstream(dir / "raw/node_species.csv") << "3702\n3702\n9606\n10090\n";
    return dir.string();
  }
  // Expects load() to refuse the folder with an InputError naming `file`, `line` and `fragment`.
  static void expectError(const std::string& dir, const std::string& file, int64_t line, const std::string& fragment) {
    try {
      OgbNodeDataset::load(dir);
      FAIL() << "expected an error naming " << file;
    } catch (const InputError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(file), std::string::npos) << m;
      EXPECT_NE(m.find(":" + std::to_string(line) + ":"), std::string::npos) << m;
      EXPECT_NE(m.find(fragment), std::string::npos) << m;
    }
  }
  fs::path parent_;
};

// OGB's order: np.repeat(edge, 2, axis=1), then the odd columns swapped: (s0,d0), (d0,s0), (s1,d1), (d1,s1), ...
const Edges kBothWays = {{0, 1}, {1, 0}, {1, 2}, {2, 1}, {3, 0}, {0, 3}};
const Edges kAsStored = {{0, 1}, {1, 2}, {3, 0}};

TEST_F(OneWayEdges, OgbProductsIsReadWithEveryEdgeBothWaysInOgbsOrder) {
  for (const char* name : {"ogbn-products", "ogbn_products"}) {  // OGB's name, and the folder its loader writes
    OgbNodeDataset ds = OgbNodeDataset::load(folder(name));
    EXPECT_EQ(ds.name, name);
    EXPECT_TRUE(ds.inverseEdgesAdded) << name;
    EXPECT_EQ(edgesOf(ds), kBothWays) << name;
    EXPECT_EQ(ds.graph.numNodes, 4);
  }
  // A trailing slash names the same folder; ogbn-proteins is undirected in OGB too.
  EXPECT_EQ(edgesOf(OgbNodeDataset::load(folder("ogbn-products") + "/")), kBothWays);
  EXPECT_EQ(edgesOf(OgbNodeDataset::load(folder("ogbn-proteins"))), kBothWays);
  // off reads the file as it is, whatever the name.
  OgbNodeDataset off = OgbNodeDataset::load(folder("ogbn-products"), inverse(AddInverseEdges::Off));
  EXPECT_FALSE(off.inverseEdgesAdded);
  EXPECT_EQ(edgesOf(off), kAsStored);
}

TEST_F(OneWayEdges, AnotherFolderIsReadAsStoredUnlessAskedFor) {
  for (const char* name : {"products_copy", "products", "ogbn-products-small", "OGBN-PRODUCTS"}) {
    OgbNodeDataset ds = OgbNodeDataset::load(folder(name));
    EXPECT_FALSE(ds.inverseEdgesAdded) << name;
    EXPECT_EQ(edgesOf(ds), kAsStored) << name;
  }
  OgbNodeDataset on = OgbNodeDataset::load(folder("products_copy"), inverse(AddInverseEdges::On));
  EXPECT_TRUE(on.inverseEdgesAdded);
  EXPECT_EQ(edgesOf(on), kBothWays);
  // Inference reads the graph the same way.
  OgbNodeOptions featuresOnly;
  featuresOnly.featuresOnly = true;
  featuresOnly.normalization = FeatureNormalization::None;
  EXPECT_EQ(edgesOf(OgbNodeDataset::load(folder("ogbn-products"), featuresOnly)), kBothWays);
}

TEST_F(OneWayEdges, ArxivStaysDirected) {
  for (const char* name : {"ogbn-arxiv", "ogbn_arxiv", "ogbn-papers100M"}) {
    OgbNodeDataset ds = OgbNodeDataset::load(folder(name));
    EXPECT_FALSE(ds.inverseEdgesAdded) << name;
    EXPECT_EQ(edgesOf(ds), kAsStored) << name;
  }
  EXPECT_EQ(edgesOf(OgbNodeDataset::load(folder("ogbn-arxiv"), inverse(AddInverseEdges::On))), kBothWays);
}

TEST_F(OneWayEdges, MalformedInputIsStillRefusedWithFileAndLine) {
  expectError(folder("ogbn-products", "0,1\n1,9\n"), "edge.csv", 2, "past the last node");
  expectError(folder("ogbn-products", "0,1\n1,2,3\n"), "edge.csv", 2, "expected 'src,dst'");
  expectError(folder("ogbn-products", "0,1\nx,2\n"), "edge.csv", 2, "integer");
  // num-edge-list counts the edges as stored: the doubled count is refused.
  expectError(folder("ogbn-products", "0,1\n1,2\n3,0\n", "6\n"), "num-edge-list.csv", 1,
              "declares 6 edges but edge.csv has 3");
  expectError(folder("ogbn-products", "0,1\n1,2\n3,0\n", "3\n3\n"), "num-edge-list.csv", 2, "unexpected line");
}

std::vector<int64_t> valuesOf(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

TEST_F(OneWayEdges, AdditionalNodeFilesAreReadAsMasterCsvSaysOrAsAsked) {
  // ogbn-arxiv: node_year, one row per node (OGB's graph['node_year'], shape [N, 1]).
  OgbNodeDataset arxiv = OgbNodeDataset::load(folder("ogbn-arxiv"));
  ASSERT_EQ(arxiv.nodeFiles.size(), 1u);
  const Tensor& year = arxiv.nodeFiles.at("node_year");
  EXPECT_EQ(year.shape(), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(valuesOf(year), (std::vector<int64_t>{2011, 2015, 2019, 2008}));
  EXPECT_EQ(valuesOf(OgbNodeDataset::load(folder("ogbn_proteins")).nodeFiles.at("node_species")),
            (std::vector<int64_t>{3702, 3702, 9606, 10090}));
  // Any other name reads none unless asked; asked for, any folder; none asked, none read.
  EXPECT_TRUE(OgbNodeDataset::load(folder("products_copy")).nodeFiles.empty());
  EXPECT_TRUE(OgbNodeDataset::load(folder("ogbn-products")).nodeFiles.empty());
  OgbNodeOptions asked;
  asked.additionalNodeFiles = std::vector<std::string>{"node_year", "node_species"};
  OgbNodeDataset both = OgbNodeDataset::load(folder("arxiv_copy"), asked);
  EXPECT_EQ(both.nodeFiles.size(), 2u);
  EXPECT_EQ(valuesOf(both.nodeFiles.at("node_year")), valuesOf(year));
  OgbNodeOptions none;
  none.additionalNodeFiles = std::vector<std::string>{};
  EXPECT_TRUE(OgbNodeDataset::load(folder("ogbn-arxiv"), none).nodeFiles.empty());
  // The rows follow a renumbering of the nodes.
  arxiv.permuteNodes({3, 0, 1, 2});
  EXPECT_EQ(valuesOf(arxiv.nodeFiles.at("node_year")), (std::vector<int64_t>{2008, 2011, 2015, 2019}));
}

TEST_F(OneWayEdges, BadAdditionalNodeFilesAreRefusedWithFileAndLine) {
  const std::string dir = folder("ogbn-arxiv");
  std::ofstream(dir + "/raw/node_year.csv") << "2011\n2015\nlast year\n2008\n";
  expectError(dir, "node_year.csv", 3, "integer");
  std::ofstream(dir + "/raw/node_year.csv") << "2011\n2015\n2019\n";
  expectError(dir, "node_year.csv", 3, "3 rows for 4 nodes");
  std::ofstream(dir + "/raw/node_year.csv") << "2011\n2015\n2019\n2008\n2020\n";
  expectError(dir, "node_year.csv", 5, "more rows than the graph's 4 nodes");
  std::ofstream(dir + "/raw/node_year.csv") << "2011\n2015,1\n2019\n2008\n";
  expectError(dir, "node_year.csv", 2, "expected 1");
  fs::remove(dir + "/raw/node_year.csv");
  try {
    OgbNodeDataset::load(dir);
    FAIL() << "a missing node_year file was not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("node_year.csv.gz: file not found"), std::string::npos) << e.what();
  }
  OgbNodeOptions bad;
  bad.additionalNodeFiles = std::vector<std::string>{"year"};
  EXPECT_THROW(OgbNodeDataset::load(folder("products_copy"), bad), std::invalid_argument);
}

TEST(OgbNodeMaster, OgbsSettingsByFolderName) {
  const OgbNodeMasterEntry* products = ogbNodeMasterEntry("ogbn-products");
  ASSERT_NE(products, nullptr);
  EXPECT_EQ(ogbNodeMasterEntry("ogbn_products"), products);
  EXPECT_TRUE(products->addInverseEdge);
  EXPECT_STREQ(products->additionalNodeFiles, "");
  const OgbNodeMasterEntry* proteins = ogbNodeMasterEntry("ogbn_proteins");
  ASSERT_NE(proteins, nullptr);
  EXPECT_TRUE(proteins->addInverseEdge);
  EXPECT_TRUE(proteins->hasEdgeAttr);
  EXPECT_STREQ(proteins->additionalNodeFiles, "node_species");
  const OgbNodeMasterEntry* arxiv = ogbNodeMasterEntry("ogbn-arxiv");
  ASSERT_NE(arxiv, nullptr);
  EXPECT_FALSE(arxiv->addInverseEdge);
  EXPECT_STREQ(arxiv->additionalNodeFiles, "node_year");
  const OgbNodeMasterEntry* papers = ogbNodeMasterEntry("ogbn_papers100M");
  ASSERT_NE(papers, nullptr);
  EXPECT_FALSE(papers->addInverseEdge);
  EXPECT_TRUE(papers->binary);
  for (const char* other : {"ogbn-mag", "ogbn_mag", "cora", "products", "ogbn-Products", ""})
    EXPECT_EQ(ogbNodeMasterEntry(other), nullptr) << other;
}

TEST(OgbNodeMaster, AddInverseEdgesNamesRoundTrip) {
  for (AddInverseEdges a : {AddInverseEdges::Auto, AddInverseEdges::On, AddInverseEdges::Off})
    EXPECT_EQ(parseAddInverseEdges(addInverseEdgesName(a)), a);
  EXPECT_FALSE(parseAddInverseEdges("yes").has_value());
  EXPECT_FALSE(parseAddInverseEdges("").has_value());
}

}  // namespace
}  // namespace gnn
