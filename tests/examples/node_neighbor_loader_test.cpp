// node_property --loader neighbor: GraphSAGE trained on sampled neighbourhoods learns Cora, the same bits on 1 and
// 2 threads, the loader's sizes and padding in the JSON; OGB's products setup as the defaults; the same on the
// simulated IPU; bad fan-outs refused naming the flag.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "RunProgram.h"

namespace {

const std::string kBin = std::string(GNN_BINARY_DIR) + "/examples/node_property";

gnn::testing::ProgramResult run(const std::string& args) { return gnn::testing::runProgram(kBin + " " + args); }

nlohmann::json runJson(const std::string& args) {
  gnn::testing::ProgramResult r = run(args + " --json --quiet");
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out.substr(r.out.find('{')));
}

const std::string kSage = "--model sage --loader neighbor --num-neighbors 10,5 --batch-size 32 --layers 2 --hidden 64 "
                          "--lr 0.01 --seed 3";

TEST(NodeNeighborLoader, GraphSageLearnsCoraTheSameOnOneAndTwoThreads) {
  const nlohmann::json one = runJson(kSage + " --epochs 30 --threads 1");
  const nlohmann::json two = runJson(kSage + " --epochs 30 --threads 2");
  EXPECT_GT(two["test_acc_mean"].get<double>(), 0.72);  // full-batch GraphSAGE: ~0.79
  EXPECT_EQ(one["loss_checksum"], two["loss_checksum"]);
  EXPECT_EQ(one["param_checksum"], two["param_checksum"]);
  EXPECT_EQ(two["loader"], "neighbor");
  EXPECT_EQ(two["num_neighbors"], (nlohmann::json{10, 5}));
  EXPECT_EQ(two["batch_size"], 32);
  EXPECT_EQ(two["inference"], "layerwise");  // auto, with --loader neighbor
  EXPECT_EQ(two["edge_list_released"], true);  // nothing reads the whole graph's edges after the sampler's index
  EXPECT_EQ(two["num_edges"], 10556);
  // Layer-wise inference is the same function (tests/loaders/LayerwiseInference_test.cpp checks the outputs):
  // the same accuracies from the same training.
  const nlohmann::json full = runJson(kSage + " --epochs 30 --threads 2 --inference full --eval-batch-size 500");
  EXPECT_EQ(full["inference"], "full");
  EXPECT_EQ(full["edge_list_released"], false);
  EXPECT_EQ(full["loss_checksum"], two["loss_checksum"]);
  EXPECT_NEAR(full["test_acc_mean"].get<double>(), two["test_acc_mean"].get<double>(), 0.003);
  // Each layer over the whole padded batch (as the simulated IPU runs it): the same function, other rounding.
  const nlohmann::json untrimmed = runJson(kSage + " --epochs 30 --threads 2 --trim-to-layer off");
  EXPECT_NEAR(untrimmed["test_acc_mean"].get<double>(), two["test_acc_mean"].get<double>(), 0.02);
  const nlohmann::json gcn = runJson("--model gcn --loader neighbor --num-neighbors 10,5 --batch-size 32 --epochs 2 "
                                     "--inference layerwise");
  EXPECT_EQ(gcn["inference"], "full");  // GCN needs the whole graph's degrees
  const nlohmann::json& l = two["loader_runs"][0];
  EXPECT_EQ(l["batches_per_epoch"], 5);  // Cora's 140 training nodes
  const nlohmann::json& e = l["last_epoch"];
  EXPECT_EQ(e["batches"], 5);
  EXPECT_EQ(e["total_nodes"].get<int64_t>(), 5 * l["fixed_num_nodes"].get<int64_t>());
  EXPECT_LE(e["real_nodes"].get<int64_t>(), e["total_nodes"].get<int64_t>());
  EXPECT_GE(e["trimmed_nodes"].get<int64_t>(), 0);
  EXPECT_GE(l["last_epoch_wait_ms"].get<double>(), 0.0);
  // The worst-case sizes never trim.
  const nlohmann::json worst = runJson(kSage + " --epochs 3 --fixed-sizes worst");
  EXPECT_EQ(worst["loader_runs"][0]["last_epoch"]["trimmed"], 0);
  EXPECT_EQ(worst["loader_runs"][0]["fixed_num_nodes"], 32 + 320 + 1600 + 1);
}

TEST(NodeNeighborLoader, OgbProductsSetupIsTheDefaultAndFlagsAreChecked) {
  const gnn::testing::ProgramResult r = run("--model sage --loader neighbor --epochs 1 --threads 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("neighbour sampling: 15,10,5 neighbours per hop, batches of 1024 seeds"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("lr 0.003"), std::string::npos) << r.out;
  const nlohmann::json j = runJson("--model sage --loader neighbor --epochs 1");
  EXPECT_EQ(j["num_neighbors"], (nlohmann::json{15, 10, 5}));
  EXPECT_EQ(j["batch_size"], 1024);
  gnn::testing::expectUsageError(run("--loader neighbor --num-neighbors 15,x"), "--num-neighbors");
  gnn::testing::expectUsageError(run("--loader neighbor --num-neighbors 15,-2"), "--num-neighbors");
  gnn::testing::expectUsageError(run("--loader neighbor --batch-size 0"), "--batch-size");
  gnn::testing::expectUsageError(run("--loader neighbor --fixed-sizes max"), "--fixed-sizes");
}

// PNA's degree histogram comes from the sampler's index once the edge list is released: the same run as with the
// edge list kept (evaluated the whole graph at once).
TEST(NodeNeighborLoader, PnaTakesItsDegreesFromTheSampler) {
  const std::string pna = "--model pna --loader neighbor --num-neighbors 5,5 --batch-size 64 --layers 2 --hidden 16 "
                          "--epochs 3 --seed 1";
  const nlohmann::json released = runJson(pna);
  const nlohmann::json kept = runJson(pna + " --inference full");
  EXPECT_EQ(released["edge_list_released"], true);
  EXPECT_EQ(kept["edge_list_released"], false);
  EXPECT_EQ(released["loss_checksum"], kept["loss_checksum"]);
}

// --presample makes each epoch's batches before its steps: the same batches, so the same bits; its epoch_ms counts
// the steps alone and the making is reported apart. The cluster loader takes it too; full-batch steps refuse it.
TEST(NodeNeighborLoader, PresampledBatchesTrainTheSameBits) {
  const std::string args = kSage + " --epochs 4 --threads 2";
  const nlohmann::json sampled = runJson(args);
  const nlohmann::json presampled = runJson(args + " --presample");
  EXPECT_EQ(sampled["presampled"], false);
  EXPECT_EQ(presampled["presampled"], true);
  EXPECT_EQ(presampled["loss_checksum"], sampled["loss_checksum"]);
  EXPECT_EQ(presampled["param_checksum"], sampled["param_checksum"]);
  const nlohmann::json& l = presampled["loader_runs"][0];
  EXPECT_GT(l["last_epoch_presample_ms"].get<double>(), 0.0);
  EXPECT_EQ(l["last_epoch"]["batches"], 5);  // the report follows the batches handed out
  EXPECT_EQ(l["last_epoch"]["real_nodes"], sampled["loader_runs"][0]["last_epoch"]["real_nodes"]);
  const std::string cluster = "--model sage --loader cluster --clusters 8 --clusters-per-batch 2 --epochs 3";
  EXPECT_EQ(runJson(cluster + " --presample")["loss_checksum"], runJson(cluster)["loss_checksum"]);
  gnn::testing::expectUsageError(run("--loader full --presample"), "--presample");
}

TEST(NodeNeighborLoader, TrainsOnTheSimulatedIpu) {
  const nlohmann::json j = runJson(kSage + " --epochs 10 --device ipu");
  EXPECT_GT(j["test_acc_mean"].get<double>(), 0.5);
  EXPECT_EQ(j["loader_runs"][0]["batches_per_epoch"], 5);
}

}  // namespace
