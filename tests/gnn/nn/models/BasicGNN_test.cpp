// PyG's ready models (GCN, GraphSAGE, GIN, GAT, PNA, EdgeCNN) built from PyG's JSON spec, with PyG's state_dict
// read from the .pt file PyG wrote: the same outputs as PyG 2.3.1 (tests/reference/pyg_models.py), the
// parameter names and shapes of PyG's state_dict, and weights that go back out as a state_dict giving the same
// outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/OgbNodeDataset.h"
#include "gnn/io/StateDict.h"
#include "gnn/nn/models/BasicGNN.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kDir = std::string(GNN_SOURCE_DIR) + "/tests/reference/pyg_models/";

json readJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + " (made by tests/reference/pyg_models.py)");
  return json::parse(in);
}

std::vector<std::string> caseNames() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kDir)) {
    const std::string f = e.path().filename().string();
    if (f.size() > 5 && f.compare(f.size() - 5, 5, ".json") == 0 && f.find(".out.json") == std::string::npos)
      names.push_back(f.substr(0, f.size() - 5));
  }
  std::sort(names.begin(), names.end());
  return names;
}

const OgbNodeDataset& graph() {
  static const OgbNodeDataset ds = [] {
    OgbNodeOptions o;
    o.normalization = FeatureNormalization::None;
    o.featuresOnly = true;
    return OgbNodeDataset::load(kDir + "graph", o);
  }();
  return ds;
}

/// max |a - b| / max(1e-3, max |b|).
double relativeError(const Tensor& a, const json& rows) {
  double diff = 0, scale = 1e-3;
  EXPECT_EQ(a.dim(0), static_cast<int64_t>(rows.size()));
  for (int64_t i = 0; i < a.dim(0); ++i)
    for (int64_t k = 0; k < a.dim(1); ++k) {
      const double ref = rows[static_cast<size_t>(i)][static_cast<size_t>(k)];
      diff = std::max(diff, std::abs(a.at(i * a.dim(1) + k) - ref));
      scale = std::max(scale, std::abs(ref));
    }
  return diff / scale;
}

class PyGModel : public ::testing::TestWithParam<std::string> {};

std::unique_ptr<BasicGNN> loadModel(const std::string& name, DType dtype = DType::F32) {
  Generator gen(3);
  std::unique_ptr<BasicGNN> m = basicGNNFromSpec(readJson(kDir + name + ".json"), gen, dtype);
  loadStateDictInto(*m, readStateDict(kDir + name + ".pt"));
  m->eval();
  return m;
}

TEST_P(PyGModel, MatchesPyG) {
  const std::string name = GetParam();
  const json ref = readJson(kDir + name + ".out.json");
  for (DType dt : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dt));
    std::unique_ptr<BasicGNN> m = loadModel(name, dt);
    NoGradGuard ng;
    Variable out = m->forward(Variable(graph().graph.x.to(dt)), graph().graph.edgeIndex);
    // float64: PyG's float64 but for rounding; float32 within 1e-5 of it.
    EXPECT_LE(relativeError(out.value(), ref["out"]), dt == DType::F64 ? 1e-11 : 1e-5);
  }
}

TEST_P(PyGModel, StateDictGoesBackOutUnchanged) {
  const std::string name = GetParam();
  std::unique_ptr<BasicGNN> m = loadModel(name);
  const std::string path = ::testing::TempDir() + "/" + name + ".roundtrip.pt";
  writeStateDict(path, stateDictOf(*m));
  const StateDict original = readStateDict(kDir + name + ".pt"), back = readStateDict(path);
  // Every entry back with its bits (the order may differ: load_state_dict goes by name).
  ASSERT_EQ(back.entries.size(), original.entries.size());
  for (const auto& [key, value] : original.entries) {
    const Tensor* t = back.find(key);
    ASSERT_TRUE(t) << key << " did not go back out";
    EXPECT_TRUE(t->bitEqual(value)) << key;
  }
  std::remove(path.c_str());
}

TEST_P(PyGModel, TrainsAndClones) {
  // A training step's gradients reach every trained parameter; a clone gives the same outputs.
  const std::string name = GetParam();
  std::unique_ptr<BasicGNN> m = loadModel(name);
  m->train();
  Variable out = m->forward(Variable(graph().graph.x), graph().graph.edgeIndex);
  sum(mul(out, out)).backward();
  for (auto& [pname, p] : m->namedParameters()) {
    if (!p.requiresGrad()) continue;
    ASSERT_TRUE(p.grad().defined()) << pname << " gets no gradient";
  }
  m->eval();
  std::unique_ptr<BasicGNN> copy = cloneModule(*m);
  NoGradGuard ng;
  EXPECT_TRUE(copy->forward(Variable(graph().graph.x), graph().graph.edgeIndex)
                  .value()
                  .bitEqual(m->forward(Variable(graph().graph.x), graph().graph.edgeIndex).value()));
}

INSTANTIATE_TEST_SUITE_P(Models, PyGModel, ::testing::ValuesIn(caseNames()),
                         [](const auto& info) { return info.param; });

TEST(BasicGNNSpec, RefusesWhatItDoesNotKnow) {
  Generator gen(1);
  const json base = {{"in_channels", 4}, {"hidden_channels", 8}, {"num_layers", 2}};
  auto make = [&](const std::string& cls, json extra) {
    json args = base;
    for (auto& [k, v] : extra.items()) args[k] = v;
    return basicGNNFromSpec({{"class", cls}, {"args", args}}, gen);
  };
  EXPECT_THROW(make("GCNN", json::object()), std::invalid_argument);
  EXPECT_THROW(make("GCN", {{"not_an_argument", 1}}), std::invalid_argument);
  EXPECT_THROW(make("GCN", {{"jk", "lstm"}}), std::invalid_argument);
  EXPECT_THROW(make("GAT", {{"heads", 3}}), std::invalid_argument);  // 8 hidden channels over 3 heads
  EXPECT_THROW(make("GCN", {{"act", "swishy"}}), std::invalid_argument);
  EXPECT_THROW(basicGNNFromSpec({{"class", "GCN"}, {"args", {{"in_channels", 4}}}}, gen), std::invalid_argument);
  EXPECT_NO_THROW(make("GAT", {{"heads", 2}, {"v2", true}}));
}

}  // namespace
}  // namespace gnn
