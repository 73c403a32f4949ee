// node_property end to end: PyG's models on Cora at the papers' accuracies, the same bits on 1 and 2 threads,
// the simulated IPU; predict --pyg-model against PyG's own outputs, and refusing a state_dict that holds code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "RunProgram.h"

namespace {
namespace fs = std::filesystem;
using gnn::testing::ProgramResult;
using gnn::testing::runExample;

nlohmann::json runJson(const std::string& args) {
  ProgramResult r = runExample("node_property", args + " --json --quiet");
  EXPECT_EQ(r.code, 0) << r.out;
  return gnn::testing::lastJson(r.out);
}

// The GAT paper's Cora setup (Velickovic et al., ICLR 2018, section 3.3): 8 heads of 8 features, ELU, one output
// head, dropout 0.6 on the input and on the attention coefficients (and on the hidden layer's input), Adam at
// lr 0.005 with L2 5e-4; the paper stops on validation with a patience of 100 epochs, here the best validation
// epoch of 500.
const char* const kGatPaper =
    "--model gat --hidden 64 --heads 8 --out-heads 1 --act elu --dropout 0.6 --input-dropout 0.6 --lr 0.005 "
    "--weight-decay 5e-4";

TEST(NodeProperty, GatReachesThePapersAccuracyOverTenSeeds) {
  nlohmann::json j = runJson(std::string(kGatPaper) + " --epochs 500 --runs 10");
  // The paper reports 83.0 +- 0.7 %; the bar is a mean of 82.0 % over seeds 0..9.
  EXPECT_GE(j["test_acc_mean"].get<double>(), 0.820) << j.dump();
  for (const char* key : {"val_acc_mean", "test_acc_std", "epoch_ms_median", "peak_rss_mb", "loss_checksum"})
    EXPECT_TRUE(j.contains(key)) << key;
}

TEST(NodeProperty, GraphSageReachesSeventyNinePercent) {
  nlohmann::json j = runJson("--model sage --runs 5");
  EXPECT_GE(j["test_acc_mean"].get<double>(), 0.79) << j.dump();
}

TEST(NodeProperty, EveryModelLearnsCora) {
  // Each of PyG's models, at its defaults here, well above the 14 % of guessing the commonest class.
  // (PNA and EdgeCNN read pairs of Cora's 1,433-wide raw features on every edge, PyG's structure: their
  // outputs are checked against PyG's in tests/gnn/nn/models, not trained here.)
  for (const char* model : {"gcn", "gin", "gatv2"}) {
    nlohmann::json j = runJson(std::string("--model ") + model + " --epochs 60");
    EXPECT_GE(j["test_acc_mean"].get<double>(), 0.60) << model << ": " << j.dump();
  }
}

TEST(NodeProperty, EveryStackedConvolutionLearnsCora) {
  // Every other convolution of gnn/nn/conv stacked at node_property's defaults (2 layers of 64), 60 epochs. The
  // propagation and attention layers reach the GCN paper's range; the bars of the others are what they reach on
  // Cora's 140 labels, PyG's own stacks alike (GENConv's softmax over bag-of-words messages, MFConv's weights per
  // degree: 0.48 and 0.33 in PyG 2.3.1 over three seeds, 100 epochs), well above the 14 % of guessing. EGConv
  // as PyG's run has it, on raw features (0.77 in both; row-normalised ones leave its symmetric-normalised sums
  // too small to learn from in 60 epochs: 0.34).
  const std::pair<const char*, double> bars[] = {
      {"appnp", 0.70}, {"cheb", 0.72}, {"clustergcn", 0.72}, {"fa", 0.65},    {"gcn2", 0.65},
      {"general", 0.70}, {"graph", 0.70}, {"le", 0.65},      {"resgatedgraph", 0.70}, {"sg", 0.72},
      {"tag", 0.75},   {"transformer", 0.72}, {"eg --normalize-features none", 0.70}, {"film", 0.45}, {"gatedgraph", 0.35},
      {"gen", 0.25},   {"mf", 0.25}};
  for (const auto& [model, bar] : bars) {
    nlohmann::json j = runJson(std::string("--model ") + model + " --epochs 60");
    EXPECT_GE(j["test_acc_mean"].get<double>(), bar) << model << ": " << j.dump();
  }
  // DynamicEdgeConv searches 2,708 x 2,708 feature-space neighbours per layer (1,433 features first): a short run.
  nlohmann::json d = runJson("--model dynamicedge --epochs 2 --hidden 16");
  EXPECT_TRUE(d.contains("test_acc_mean")) << d.dump();
}

TEST(NodeProperty, StackedConvolutionsRunOnTheSimulatedIpuAndLoaders) {
  // GCNII's x_0 travels from the input block to every layer across pipeline stages; the loaders' fixed-size
  // batches (padding rows) and the neighbour loader's whole-batch forward (no trim_to_layer for a stack).
  nlohmann::json a = runJson("--model gcn2 --layers 4 --epochs 40 --device ipu --loader cluster --pipeline-splits "
                             "layers/2 --grad-accum 4");
  EXPECT_GE(a["test_acc_mean"].get<double>(), 0.55) << a.dump();
  nlohmann::json b = runJson("--model transformer --heads 4 --epochs 20 --loader neighbor --batch-size 256");
  EXPECT_GE(b["test_acc_mean"].get<double>(), 0.60) << b.dump();
  EXPECT_EQ(b["inference"], "full");  // a stack is evaluated on the whole graph
  gnn::testing::expectUsageError(runExample("node_property", "--model cheb --conv-args '[3]'"), "--conv-args");
  gnn::testing::expectUsageError(runExample("node_property", "--model gcn --conv-args '{}'"), "--conv-args");
}

TEST(NodeProperty, SameBitsOnOneAndTwoThreads) {
  const std::string args = std::string(kGatPaper) + " --epochs 20 --seed 5";
  nlohmann::json a = runJson(args + " --threads 1"), b = runJson(args + " --threads 2"),
                 c = runJson(args + " --threads 2");
  EXPECT_EQ(a["loss_checksum"], b["loss_checksum"]);
  EXPECT_EQ(b["loss_checksum"], c["loss_checksum"]);
  EXPECT_EQ(a["predictions_checksum"], b["predictions_checksum"]);
}

TEST(NodeProperty, RunsOnTheSimulatedIpu) {
  nlohmann::json j = runJson("--model sage --epochs 30 --device ipu");
  EXPECT_GE(j["test_acc_mean"].get<double>(), 0.70) << j.dump();
  EXPECT_EQ(j["device"], "ipu");
}

TEST(NodeProperty, RefusesBadFlags) {
  gnn::testing::expectUsageError(runExample("node_property", "--model gat --hidden 30 --heads 8"), "--heads");
  gnn::testing::expectUsageError(runExample("node_property", "--model gine"), "--model");
  gnn::testing::expectUsageError(runExample("node_property", "--norm group"), "--norm");
  gnn::testing::expectUsageError(runExample("node_property", "--jk gru"), "--jk");
}

// A float32 .npy's values (C order).
std::vector<float> readNpyFloat32(const std::string& path, std::vector<int64_t>* shape) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(bytes.size(), 10u);
  const size_t len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const std::string header = bytes.substr(10, len);
  EXPECT_NE(header.find("'<f4'"), std::string::npos) << header;
  const size_t open = header.find("'shape': (") + 10, close = header.find(')', open);
  shape->clear();
  for (size_t b = open; b < close;) {
    size_t e = header.find(',', b);
    if (e == std::string::npos || e > close) e = close;
    if (e > b) shape->push_back(std::stoll(header.substr(b, e - b)));
    b = e + 1;
  }
  std::vector<float> v((bytes.size() - 10 - len) / 4);
  std::memcpy(v.data(), bytes.data() + 10 + len, v.size() * 4);
  return v;
}

TEST(PredictPyGModel, GivesPyGsOutputs) {
  const std::string ref = std::string(GNN_SOURCE_DIR) + "/tests/reference/pyg_models/";
  const std::string out = ::testing::TempDir() + "/pyg_predict.npy";
  for (const char* name : {"gat", "sage_max_jk_max", "pna", "gin_batch_norm_train_eps_jk_last",
                           "layers_graph_cheb_appnp", "layers_tag_gcn2_sg", "layers_transformer_gen_eg"}) {
    ProgramResult r = runExample("predict", "--pyg-model " + ref + name + ".json --state-dict " + ref + name +
                                                ".pt --data " + ref + "graph --out " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    std::vector<int64_t> shape;
    const std::vector<float> got = readNpyFloat32(out, &shape);
    std::ifstream expectedFile(ref + name + ".out.json");
    const nlohmann::json expected = nlohmann::json::parse(expectedFile)["out"];
    ASSERT_EQ(shape, (std::vector<int64_t>{static_cast<int64_t>(expected.size()),
                                           static_cast<int64_t>(expected[0].size())}));
    double diff = 0, scale = 1e-3;
    for (size_t i = 0; i < expected.size(); ++i)
      for (size_t k = 0; k < expected[i].size(); ++k) {
        diff = std::max(diff, std::abs(got[i * expected[i].size() + k] - expected[i][k].get<double>()));
        scale = std::max(scale, std::abs(expected[i][k].get<double>()));
      }
    EXPECT_LE(diff / scale, 1e-5) << name;
  }
  fs::remove(out);
}

// A layer list naming a layer not offered, or with an argument the layer does not take, is refused naming it.
TEST(PredictPyGModel, RefusesABadLayerList) {
  const std::string ref = std::string(GNN_SOURCE_DIR) + "/tests/reference/pyg_models/";
  const std::string spec = ::testing::TempDir() + "/bad_layers.json", out = ::testing::TempDir() + "/bad.npy";
  for (const auto& [text, want] : {std::pair{R"({"layers": [{"class": "GraphConv", "args": {"in_channels": 6,
             "out_channels": 8}}, {"class": "FooConv"}]})", "layer 1: convolution 'FooConv'"},
                                  std::pair{R"({"layers": [{"class": "SGConv", "args": {"in_channels": 6,
             "out_channels": 3, "k": 2}}]})", "layer 0: SGConv"}}) {
    std::ofstream(spec) << text;
    ProgramResult r = runExample("predict", "--pyg-model " + spec + " --state-dict " + ref +
                                                "layers_tag_gcn2_sg.pt --data " + ref + "graph --out " + out);
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
  }
  fs::remove(spec);
}

TEST(PredictPyGModel, RefusesAStateDictThatHoldsCode) {
  const std::string ref = std::string(GNN_SOURCE_DIR) + "/tests/reference/";
  const std::string out = ::testing::TempDir() + "/pyg_refused.npy";
  ProgramResult r = runExample("predict", "--pyg-model " + ref + "pyg_models/gcn.json --state-dict " + ref +
                                              "state_dicts/evil_system.pt --data " + ref +
                                              "pyg_models/graph --out " + out);
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("system"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
  gnn::testing::expectUsageError(runExample("predict", "--pyg-model " + ref + "pyg_models/gcn.json --out " + out),
                                 "--state-dict");
}

}  // namespace
