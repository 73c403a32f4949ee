// cora_gcn --add-inverse-edges: a folder named ogbn-products holding each edge once (OGB's form) trains as the
// same graph written both ways; off reads it as stored; the choice is part of a checkpoint's configuration.
// --additional-node-files: OGB's node_year read and reported, names checked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "RunProgram.h"
#include "bench/ProductsLikeGraph.h"
#include "gnn/io/Checkpoint.h"

namespace {
namespace fs = std::filesystem;

const std::string kBin = std::string(GNN_BINARY_DIR) + "/examples/cora_gcn";

gnn::testing::ProgramResult run(const std::string& args) { return gnn::testing::runProgram(kBin + " " + args); }

nlohmann::json runJson(const std::string& args) {
  gnn::testing::ProgramResult r = run(args + " --json --quiet");
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out.substr(r.out.find('{')));
}

TEST(NodeInverseEdges, OneWayOgbProductsTrainsAsTheTwoWayGraph) {
  const fs::path parent = fs::temp_directory_path() / ("gnn_inverse_cli_" + std::to_string(::getpid()));
  gnn::bench::ProductsLikeOptions o;
  o.nodes = 400;
  o.avgDegree = 10;
  gnn::bench::writeProductsLike((parent / "two_way").string(), o);
  o.oneWay = true;
  gnn::bench::writeProductsLike((parent / "ogbn-products").string(), o);
  const std::string flags = " --seed 2 --normalize-features standard";
  const std::string ogb = "--data " + (parent / "ogbn-products").string() + flags;
  const nlohmann::json twoWay = runJson("--data " + (parent / "two_way").string() + flags + " --epochs 6");
  const nlohmann::json oneWay = runJson(ogb + " --epochs 6");
  EXPECT_EQ(oneWay["inverse_edges_added"], true);
  EXPECT_EQ(twoWay["inverse_edges_added"], false);
  EXPECT_EQ(oneWay["num_edges"], twoWay["num_edges"]);
  EXPECT_EQ(oneWay["loss_checksum"], twoWay["loss_checksum"]);
  EXPECT_EQ(oneWay["predictions_checksum"], twoWay["predictions_checksum"]);
  const nlohmann::json off = runJson(ogb + " --epochs 6 --add-inverse-edges off");
  EXPECT_EQ(off["inverse_edges_added"], false);
  EXPECT_EQ(2 * off["num_edges"].get<int64_t>(), twoWay["num_edges"].get<int64_t>());
  EXPECT_NE(off["loss_checksum"], twoWay["loss_checksum"]);
  gnn::testing::expectUsageError(run(ogb + " --add-inverse-edges yes"), "--add-inverse-edges");

  // A checkpoint from before the flag (no key in its configuration) was trained on edge.csv read as stored.
  const fs::path ck = parent / "old.ckpt";
  const nlohmann::json whole = runJson(ogb + " --add-inverse-edges off --epochs 10");
  runJson(ogb + " --epochs 6 --save " + ck.string() + " --add-inverse-edges off");
  gnn::Checkpoint old = gnn::Checkpoint::load(ck.string());
  ASSERT_TRUE(old.meta["config"].contains("add_inverse_edges"));
  old.meta["config"].erase("add_inverse_edges");
  old.save(ck.string());
  const nlohmann::json resumed = runJson(ogb + " --epochs 10 --load " + ck.string());
  EXPECT_EQ(resumed["inverse_edges_added"], false);
  EXPECT_EQ(resumed["loss_checksum"], whole["loss_checksum"]);

  // OGB's additional node files: none for ogbn-products; asked for, read and their range reported.
  EXPECT_EQ(twoWay["node_files"], nlohmann::json::object());
  std::ofstream year(parent / "ogbn-products" / "raw" / "node_year.csv");
  for (int64_t i = 0; i < 400; ++i) year << 2000 + i % 20 << "\n";
  year.close();
  const nlohmann::json withYear = runJson(ogb + " --epochs 1 --additional-node-files node_year");
  EXPECT_EQ(withYear["node_files"]["node_year"], (nlohmann::json{{"width", 1}, {"min", 2000}, {"max", 2019}}));
  gnn::testing::expectUsageError(run(ogb + " --additional-node-files year"), "--additional-node-files");
  const gnn::testing::ProgramResult missing = run(ogb + " --additional-node-files node_species");
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.out.find("node_species.csv.gz: file not found"), std::string::npos) << missing.out;
  fs::remove_all(parent);
}

}  // namespace
