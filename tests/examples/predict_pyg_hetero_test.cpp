// predict --pyg-model on a heterogeneous model: PyG 2.3.1's to_hetero of GraphSAGE(-1, ...), GAT and GIN, R-GCN and R-GAT on the
// typed graph (a HeteroDictLinear, then RGCNConv or RGATConv layers on to_homogeneous()'s edges) and HGT
// (hgt_dblp.py's model), with their state_dicts, on a dataset in OGB's heterogeneous layout after ToUndirected
// (tests/reference/pyg_hetero_models.py), give PyG's papers' outputs; a state_dict that does not fit is refused
// naming the key and both shapes, and a spec, dataset or target that cannot run is refused naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "RunProgram.h"
#include "gnn/io/NpyArray.h"

namespace {
namespace fs = std::filesystem;
using gnn::testing::ProgramResult;
using gnn::testing::runExample;
using json = nlohmann::json;

const std::string kRef = std::string(GNN_SOURCE_DIR) + "/tests/reference/pyg_hetero/predict/";

gnn::Tensor readNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return gnn::parseNpy(bytes, path).tensor;
}

ProgramResult predict(const std::string& spec, const std::string& data, const std::string& out,
                      const std::string& weights = "sage.pt") {
  return runExample("predict", "--pyg-model " + spec + " --state-dict " + kRef + weights + " --data " + data +
                                   " --out " + out);
}

// max |got - PyG's| / max(1e-3, max |PyG's|) over the papers' outputs of <model>.out.json.
double errorAgainstPyG(const std::string& out, const std::string& model) {
  const gnn::Tensor got = readNpy(out);
  std::ifstream f(kRef + model + ".out.json");
  const json expected = json::parse(f)["out"];
  EXPECT_EQ(got.shape(), (gnn::Shape{static_cast<int64_t>(expected.size()), static_cast<int64_t>(expected[0].size())}));
  double diff = 0, scale = 1e-3;
  for (size_t i = 0; i < expected.size(); ++i)
    for (size_t k = 0; k < expected[i].size(); ++k) {
      const double want = expected[i][k].get<double>();
      diff = std::max(diff, std::abs(got.at(static_cast<int64_t>(i * expected[i].size() + k)) - want));
      scale = std::max(scale, std::abs(want));
    }
  return diff / scale;
}

// A file of the test's own: ctest runs the tests of this file side by side.
std::string writeSpec(const json& spec) {
  const std::string path = ::testing::TempDir() + "/hetero_spec_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
  std::ofstream(path) << spec.dump();
  return path;
}

TEST(PredictPyGHeteroModel, GivesPyGsOutputs) {
  const std::string out = ::testing::TempDir() + "/pyg_hetero_predict.npy";
  ProgramResult r = predict(kRef + "sage.json", kRef + "data", out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_LE(errorAgainstPyG(out, "sage"), 1e-5);
  fs::remove(out);
}

TEST(PredictPyGHeteroModel, RgcnOnTheTypedGraphGivesPyGsOutputs) {
  const std::string out = ::testing::TempDir() + "/pyg_hetero_rgcn.npy";
  ProgramResult r = predict(kRef + "rgcn.json", kRef + "data", out, "rgcn.pt");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_LE(errorAgainstPyG(out, "rgcn"), 1e-5);
  fs::remove(out);
  // Without the input Linears the types' widths (3, 2, 4) cannot be stacked; another weight shape is refused.
  std::ifstream f(kRef + "rgcn.json");
  const json spec = json::parse(f);
  json bare = spec;
  bare["to_homogeneous"].erase("input");
  r = predict(writeSpec(bare), kRef + "data", out, "rgcn.pt");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("input.lins.author.weight"), std::string::npos) << r.out;
  json two = spec;
  two["to_hetero"] = json::object();
  r = predict(writeSpec(two), kRef + "data", out, "rgcn.pt");
  EXPECT_NE(r.out.find("one model kind"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

// The same typed-graph spec with RGATConv layers (two heads with bases, then attention within each relation).
// to_hetero(GAT(in_channels=(-1, -1), heads=2, add_self_loops=False)): GATConv's bipartite form, a lin_src and a
// lin_dst per relation. With PyG's default add_self_loops=True the spec is refused (check_add_self_loops).
TEST(PredictPyGHeteroModel, ToHeteroGatGivesPyGsOutputs) {
  const std::string out = ::testing::TempDir() + "/pyg_hetero_gat.npy";
  ProgramResult r = predict(kRef + "gat.json", kRef + "data", out, "gat.pt");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_LE(errorAgainstPyG(out, "gat"), 1e-5);
  fs::remove(out);
  std::ifstream f(kRef + "gat.json");
  json loops = json::parse(f);
  loops["to_hetero"]["model"]["args"].erase("add_self_loops");
  r = predict(writeSpec(loops), kRef + "data", out, "gat.pt");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("add_self_loops=False"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

// to_hetero(GIN(-1, ..., train_eps=True)) on data_equal (every type 4 wide): GINConv's bipartite form. On the
// dataset whose types differ in width it is refused naming the relation.
TEST(PredictPyGHeteroModel, ToHeteroGinGivesPyGsOutputs) {
  const std::string out = ::testing::TempDir() + "/pyg_hetero_gin.npy";
  ProgramResult r = predict(kRef + "gin.json", kRef + "data_equal", out, "gin.pt");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_LE(errorAgainstPyG(out, "gin"), 1e-5);
  fs::remove(out);
  r = predict(kRef + "gin.json", kRef + "data", out, "gin.pt");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("joins widths"), std::string::npos) << r.out;
}

TEST(PredictPyGHeteroModel, RgatOnTheTypedGraphGivesPyGsOutputs) {
  const std::string out = ::testing::TempDir() + "/pyg_hetero_rgat.npy";
  ProgramResult r = predict(kRef + "rgat.json", kRef + "data", out, "rgat.pt");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_LE(errorAgainstPyG(out, "rgat"), 1e-5);
  fs::remove(out);
  // R-GCN's weights do not fit R-GAT's layers: refused naming a key the layers need.
  r = predict(kRef + "rgat.json", kRef + "data", out, "rgcn.pt");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("layers.0."), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

TEST(PredictPyGHeteroModel, HgtGivesPyGsOutputs) {
  const std::string out = ::testing::TempDir() + "/pyg_hetero_hgt.npy";
  ProgramResult r = predict(kRef + "hgt.json", kRef + "data", out, "hgt.pt");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_LE(errorAgainstPyG(out, "hgt"), 1e-5);
  fs::remove(out);
  std::ifstream f(kRef + "hgt.json");
  const json spec = json::parse(f);
  json heads = spec;
  heads["hgt"]["num_heads"] = 4;  // the same shapes: HGTConv's a_rel [heads, D, D] then differs
  r = predict(writeSpec(heads), kRef + "data", out, "hgt.pt");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("a_rel"), std::string::npos) << r.out;
  json unknown = spec;
  unknown["hgt"]["group"] = "mean";
  r = predict(writeSpec(unknown), kRef + "data", out, "hgt.pt");
  EXPECT_NE(r.out.find("has no argument 'group'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

TEST(PredictPyGHeteroModel, RefusesWhatDoesNotFit) {
  const std::string out = ::testing::TempDir() + "/pyg_hetero_refused.npy";
  std::ifstream f(kRef + "sage.json");
  const json spec = json::parse(f);
  const auto refused = [&](const json& s, const std::string& data, const std::string& want) {
    ProgramResult r = predict(writeSpec(s), data, out);
    EXPECT_NE(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << "wanted '" << want << "' in: " << r.out;
    EXPECT_FALSE(fs::exists(out));
  };
  json wide = spec;
  wide["to_hetero"]["model"]["args"]["hidden_channels"] = 6;
  refused(wide, kRef + "data", "convs.0.author__affiliated_with__institution.lin_l.weight");
  refused(wide, kRef + "data", "[6, 3]");
  json directed = spec;
  directed["to_undirected"] = false;  // no reverse relations: authors and institutions get no messages
  refused(directed, kRef + "data", "is no edge type's destination");
  json target = spec;
  target["target"] = "venue";
  refused(target, kRef + "data", "target 'venue'");
  json gcn = spec;
  gcn["to_hetero"]["model"]["class"] = "GCN";
  refused(gcn, kRef + "data", "class 'GCN'");
  json extra = spec;
  extra["aggr"] = "sum";
  refused(extra, kRef + "data", "unknown key 'aggr'");
  refused(spec, std::string(GNN_SOURCE_DIR) + "/tests/reference/pyg_models/graph", "heterogeneous raw layout");
}

}  // namespace
