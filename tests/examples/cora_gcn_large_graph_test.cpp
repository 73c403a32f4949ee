// cora_gcn on a generated ogbn-products-shaped graph (bench/ProductsLikeGraph.h) at 24,500 nodes and ~1.2M
// directed edges, one tenth of the size docs/datasets.md measures: Cluster-GCN with the default flags separates
// the planted classes in 20 epochs, with dense features, in bounded memory; the feature layout and kept adjacency
// flags.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "RunProgram.h"
#include "bench/ProductsLikeGraph.h"

namespace {
namespace fs = std::filesystem;

const std::string kBin = std::string(GNN_BINARY_DIR) + "/examples/cora_gcn";

nlohmann::json runJson(const std::string& args) {
  gnn::testing::ProgramResult r = gnn::testing::runProgram(kBin + " " + args + " --json --quiet");
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out.substr(r.out.find('{')));
}

TEST(CoraGcnLargeGraph, ClusterGcnSeparatesPlantedClassesInTwentyEpochsInBoundedMemory) {
  const fs::path dir = fs::temp_directory_path() / ("gnn_products_like_" + std::to_string(::getpid()));
  gnn::bench::ProductsLikeOptions o;
  o.nodes = 24500;
  const gnn::bench::ProductsLikeStats s = gnn::bench::writeProductsLike(dir.string(), o);
  ASSERT_GT(s.edges, 1100000);
  nlohmann::json j = runJson("--data " + dir.string() + " --loader cluster --epochs 20");
  fs::remove_all(dir);
  EXPECT_EQ(j["num_edges"], s.edges);
  EXPECT_EQ(j["feature_layout"], "dense");  // 100 real-valued features: every one non-zero
  EXPECT_EQ(j["normalize_features"], "standard");
  EXPECT_GE(j["val_acc_mean"].get<double>(), 0.9) << j.dump();
  EXPECT_GE(j["test_acc_mean"].get<double>(), 0.9) << j.dump();
  // ~30 MB of data (x 9.8 MB, edge_index 19.7 MB). Before streaming reads, dense features and a bounded buffer
  // pool the same run peaked at 1,145 MB (the pool kept every cluster subgraph's buffers).
  EXPECT_LT(j["peak_rss_mb"].get<double>(), 400) << j.dump();
}

TEST(CoraGcnLargeGraph, FeatureLayoutIsSparseForBagOfWordsUnlessAsked) {
  nlohmann::json autoLayout = runJson("--epochs 30");
  nlohmann::json sparse = runJson("--epochs 30 --feature-layout sparse");
  nlohmann::json dense = runJson("--epochs 30 --feature-layout dense");
  EXPECT_EQ(autoLayout["feature_layout"], "sparse");
  EXPECT_EQ(dense["feature_layout"], "dense");
  EXPECT_EQ(autoLayout["loss_checksum"], sparse["loss_checksum"]);
  EXPECT_EQ(autoLayout["predictions_checksum"], sparse["predictions_checksum"]);
  // Dense features draw dropout masks over every entry, not only the non-zeros: other bits, same model.
  EXPECT_NE(dense["loss_checksum"], sparse["loss_checksum"]);
  EXPECT_NEAR(dense["test_acc_mean"].get<double>(), sparse["test_acc_mean"].get<double>(), 0.05);
  gnn::testing::expectUsageError(gnn::testing::runProgram(kBin + " --feature-layout csr"), "--feature-layout");
}

// Keeping the whole graph's adjacency between evaluations changes memory and time, never a bit of the results;
// auto keeps it only for graphs of 32M directed edges or more.
TEST(CoraGcnLargeGraph, KeepingTheWholeGraphsAdjacencyChangesNoResult) {
  const std::string run = "--loader cluster --clusters 8 --clusters-per-batch 2 --epochs 4";
  nlohmann::json kept = runJson(run + " --keep-adjacency on");
  nlohmann::json rebuilt = runJson(run + " --keep-adjacency off");
  nlohmann::json chosen = runJson(run);
  EXPECT_TRUE(kept["adjacency_kept"].get<bool>());
  EXPECT_FALSE(rebuilt["adjacency_kept"].get<bool>());
  EXPECT_FALSE(chosen["adjacency_kept"].get<bool>());  // Cora: 10,556 directed edges
  for (const char* key : {"loss_checksum", "predictions_checksum", "param_checksum", "test_acc_mean"}) {
    EXPECT_EQ(kept[key], rebuilt[key]) << key;
    EXPECT_EQ(kept[key], chosen[key]) << key;
  }
  gnn::testing::expectUsageError(gnn::testing::runProgram(kBin + " --keep-adjacency yes"), "--keep-adjacency");
}

}  // namespace
