// The OGB node reader on a generated ogbn-products-shaped graph (bench/ProductsLikeGraph.h) large enough that
// features and edges cross the reader's 1M-value chunks: every value read back as written, plain and gzipped
// alike; the generator's determinism; the feature density that decides sparse or dense features.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "bench/ProductsLikeGraph.h"
#include "data/GzLineReader.h"
#include "data/OgbNodeDataset.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("gnn_ogb_stream_" + name + "_" + std::to_string(::getpid()));
}

std::string readAll(const fs::path& p) {
  GzLineReader in(p.string());
  std::string out;
  std::string_view line;
  while (in.next(line)) out.append(line).push_back('\n');
  return out;
}

OgbNodeOptions raw() {
  OgbNodeOptions o;
  o.normalization = FeatureNormalization::None;
  return o;
}

// 12,000 nodes x 100 features = 1.2M values and ~600k edges = 1.2M ids: both cross a chunk boundary.
class ProductsLike : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(scratch("gz"));
    bench::ProductsLikeOptions o;
    o.nodes = 12000;
    o.seed = 3;
    stats_ = bench::writeProductsLike(dir_->string(), o);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static fs::path* dir_;
  static bench::ProductsLikeStats stats_;
};
fs::path* ProductsLike::dir_ = nullptr;
bench::ProductsLikeStats ProductsLike::stats_;

TEST_F(ProductsLike, EveryValueReadsBackAsWritten) {
  OgbNodeDataset ds = OgbNodeDataset::load(dir_->string(), raw());
  ASSERT_EQ(ds.graph.numNodes, 12000);
  ASSERT_EQ(ds.graph.x.dim(1), 100);
  ASSERT_EQ(ds.graph.numEdges(), stats_.edges);
  EXPECT_GT(stats_.edges, 550000);  // ~50 per node: the edge chunks (1M ids) are crossed
  EXPECT_EQ(ds.numClasses, 47);
  EXPECT_EQ(ds.trainIdx.size(), 960u);  // 8 / 2 / 90
  EXPECT_EQ(ds.validIdx.size(), 240u);
  EXPECT_EQ(ds.testIdx.size(), 10800u);
  // Features: the text, parsed independently, row by row.
  {
    std::istringstream text(readAll(*dir_ / "raw/node-feat.csv.gz"));
    std::string line;
    auto x = ds.graph.x.matrix<float>();
    for (int64_t i = 0; i < 12000 && std::getline(text, line); ++i) {
      std::istringstream row(line);
      std::string field;
      for (int64_t j = 0; std::getline(row, field, ','); ++j)
        ASSERT_EQ(x(i, j), std::stof(field)) << "node " << i << " feature " << j;
    }
  }
  // Edges in file order.
  {
    std::istringstream text(readAll(*dir_ / "raw/edge.csv.gz"));
    std::string line;
    const int64_t E = ds.graph.numEdges();
    const int64_t* e = ds.graph.edgeIndex.data<int64_t>();
    int64_t k = 0;
    for (; std::getline(text, line); ++k) {
      const size_t comma = line.find(',');
      ASSERT_EQ(e[k], std::stoll(line.substr(0, comma))) << "edge " << k;
      ASSERT_EQ(e[E + k], std::stoll(line.substr(comma + 1))) << "edge " << k;
    }
    EXPECT_EQ(k, E);
  }
  // Real-valued features with negatives: standardised under auto, and dense (every value non-zero but a few
  // rounded to 0.000).
  EXPECT_LT(ds.graph.x.matrix<float>().minCoeff(), 0.0f);
  EXPECT_GT(ds.featureDensity(), 0.99);
  EXPECT_GE(ds.featureDensity(), OgbNodeDataset::kSparseFeatureDensity);
  EXPECT_EQ(OgbNodeDataset::load(dir_->string()).normalization, FeatureNormalization::Standard);
}

TEST_F(ProductsLike, PlainFilesReadAsGzippedOnesAndTheGeneratorRepeatsItself) {
  const fs::path plain = scratch("plain");
  bench::ProductsLikeOptions o;
  o.nodes = 12000;
  o.seed = 3;
  o.gzip = false;
  const bench::ProductsLikeStats s = bench::writeProductsLike(plain.string(), o);
  EXPECT_EQ(s.edges, stats_.edges);
  for (const char* f : {"raw/edge.csv", "raw/node-feat.csv", "raw/node-label.csv", "split/random/train.csv"})
    EXPECT_EQ(readAll(plain / f), readAll(*dir_ / (std::string(f) + ".gz"))) << f;
  OgbNodeDataset a = OgbNodeDataset::load(plain.string(), raw()), b = OgbNodeDataset::load(dir_->string(), raw());
  EXPECT_TRUE(a.graph.x.bitEqual(b.graph.x));
  EXPECT_TRUE(a.graph.edgeIndex.bitEqual(b.graph.edgeIndex));
  EXPECT_TRUE(a.graph.y.bitEqual(b.graph.y));
  fs::remove_all(plain);
  // Another seed, another graph.
  const fs::path other = scratch("seed4");
  o.seed = 4;
  o.nodes = 500;
  bench::writeProductsLike(other.string(), o);
  o.seed = 3;
  const fs::path same = scratch("seed3");
  bench::writeProductsLike(same.string(), o);
  EXPECT_NE(readAll(other / "raw/edge.csv"), readAll(same / "raw/edge.csv"));
  fs::remove_all(other);
  fs::remove_all(same);
}

TEST_F(ProductsLike, EdgesAreSymmetricAndMostlyWithinAClass) {
  OgbNodeDataset ds = OgbNodeDataset::load(dir_->string(), raw());
  const int64_t E = ds.graph.numEdges();
  const int64_t* e = ds.graph.edgeIndex.data<int64_t>();
  const int64_t* y = ds.graph.y.data<int64_t>();
  int64_t same = 0;
  for (int64_t k = 0; k < E; k += 2) {
    ASSERT_EQ(e[k], e[E + k + 1]);  // written as u,v then v,u
    ASSERT_EQ(e[E + k], e[k + 1]);
    ASSERT_NE(e[k], e[E + k]);  // no self-loops
    same += y[e[k]] == y[e[E + k]];
  }
  // 60% ring + 20% class edges, plus the random 20% that land in the same class.
  EXPECT_GT(static_cast<double>(same) / static_cast<double>(E / 2), 0.78);
}

// --one-way writes OGB's form (each edge once); a folder named ogbn-products is read with the inverse of each edge
// right after it (OGB's add_inverse_edge), which is the two-way file's order: the same graph, bit for bit.
TEST_F(ProductsLike, OneWayFolderNamedLikeOgbsReadsAsTheTwoWayOne) {
  const fs::path parent = scratch("oneway");
  const fs::path dir = parent / "ogbn-products";
  bench::ProductsLikeOptions o;
  o.nodes = 12000;
  o.seed = 3;
  o.oneWay = true;
  const bench::ProductsLikeStats s = bench::writeProductsLike(dir.string(), o);
  EXPECT_EQ(s.edges, stats_.edges);
  OgbNodeDataset a = OgbNodeDataset::load(dir.string(), raw()), b = OgbNodeDataset::load(dir_->string(), raw());
  EXPECT_TRUE(a.inverseEdgesAdded);
  EXPECT_FALSE(b.inverseEdgesAdded);
  EXPECT_TRUE(a.graph.edgeIndex.bitEqual(b.graph.edgeIndex));
  EXPECT_TRUE(a.graph.x.bitEqual(b.graph.x));
  EXPECT_TRUE(a.graph.y.bitEqual(b.graph.y));
  // Read as stored: half the edges, the first of each pair.
  OgbNodeOptions off = raw();
  off.addInverseEdges = AddInverseEdges::Off;
  OgbNodeDataset c = OgbNodeDataset::load(dir.string(), off);
  const int64_t E = b.graph.numEdges();
  ASSERT_EQ(c.graph.numEdges(), E / 2);
  const int64_t* eb = b.graph.edgeIndex.data<int64_t>();
  const int64_t* ec = c.graph.edgeIndex.data<int64_t>();
  for (int64_t k = 0; k < E / 2; ++k) {
    ASSERT_EQ(ec[k], eb[2 * k]) << "edge " << k;
    ASSERT_EQ(ec[E / 2 + k], eb[E + 2 * k]) << "edge " << k;
  }
  fs::remove_all(parent);
}

// Renumbering Cora: every node's row, label, masks and edges follow it; the split lists name the same nodes.
TEST(OgbNodeDataset, PermuteNodesMovesEverythingAlong) {
  const std::string cora = std::string(GNN_SOURCE_DIR) + "/examples/data/cora";
  OgbNodeDataset a = OgbNodeDataset::load(cora), b = OgbNodeDataset::load(cora);
  const int64_t n = a.graph.numNodes;
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = (i * 7 + 3) % n;  // 7 and 2708 are coprime: a permutation
  b.permuteNodes(order);
  std::vector<int64_t> newId(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) newId[order[i]] = i;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(b.graph.x.matrix<float>().row(i), a.graph.x.matrix<float>().row(order[i]));
    ASSERT_EQ(b.graph.y.data<int64_t>()[i], a.graph.y.data<int64_t>()[order[i]]);
    ASSERT_EQ(b.graph.trainMask.data<uint8_t>()[i], a.graph.trainMask.data<uint8_t>()[order[i]]);
    ASSERT_EQ(b.graph.testMask.data<uint8_t>()[i], a.graph.testMask.data<uint8_t>()[order[i]]);
  }
  for (size_t t = 0; t < a.validIdx.size(); ++t) EXPECT_EQ(b.validIdx[t], newId[a.validIdx[t]]);
  // The same edges (as a multiset, renumbered), now listed by source.
  const int64_t E = a.graph.numEdges();
  ASSERT_EQ(b.graph.numEdges(), E);
  const int64_t* ea = a.graph.edgeIndex.data<int64_t>();
  const int64_t* eb = b.graph.edgeIndex.data<int64_t>();
  std::vector<std::pair<int64_t, int64_t>> want, got;
  for (int64_t k = 0; k < E; ++k) {
    want.push_back({newId[ea[k]], newId[ea[E + k]]});
    got.push_back({eb[k], eb[E + k]});
  }
  EXPECT_TRUE(std::is_sorted(eb, eb + E));
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(want, got);
  order[5] = order[6];
  EXPECT_THROW(b.permuteNodes(order), std::invalid_argument);
  EXPECT_THROW(b.permuteNodes(std::vector<int64_t>(3, 0)), std::invalid_argument);
}

// The sparse layout of bag-of-words features is kept below the density threshold: Cora, 1.27% non-zero.
TEST(OgbNodeDataset, CoraFeaturesAreSparseEnoughToKeepSparse) {
  OgbNodeDataset ds = OgbNodeDataset::load(std::string(GNN_SOURCE_DIR) + "/examples/data/cora");
  EXPECT_NEAR(ds.featureDensity(), 49216.0 / (2708.0 * 1433.0), 1e-12);
  EXPECT_LT(ds.featureDensity(), OgbNodeDataset::kSparseFeatureDensity);
}

}  // namespace
}  // namespace gnn
