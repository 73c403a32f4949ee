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
#include "gnn/system/ExecutionContext.h"
#include "nn/SparseInputCheck.h"

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
    // (layers_*: lists of layers, LayerList's; predict's tests run them against the same references.)
    if (f.size() > 5 && f.compare(f.size() - 5, 5, ".json") == 0 && f.find(".out.json") == std::string::npos &&
        f.rfind("layers_", 0) != 0)
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

// Sparse features (GCN, GraphSAGE, GIN, GAT: the first layer's projection as a sparse product) give the dense
// features' outputs and parameter gradients in training, dropout included (the same key draws the same masks:
// the layers' dropouts come after the input); PNA and EdgeCNN refuse them.
TEST_P(PyGModel, SparseInputGivesTheDenseOutputsAndGradients) {
  const std::string name = GetParam();
  for (DType dt : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dt));
    std::unique_ptr<BasicGNN> m = loadModel(name, dt);
    const Tensor x = graph().graph.x.to(dt);
    const SparseMatrix xs = testing::sparseOf(x);
    const Tensor& ei = graph().graph.edgeIndex;
    if (!m->takesSparseInput()) {
      EXPECT_THROW(m->forward(xs, ei), std::invalid_argument);
      continue;
    }
    m->train();
    ExecutionContext& ctx = ExecutionContext::current();
    ctx.setRandomKey({41, 0, 0});
    const auto dense = testing::outputsAndGrads(*m, [&] { return m->forward(Variable(x), ei); });
    ctx.setRandomKey({41, 0, 0});
    const auto sparse = testing::outputsAndGrads(*m, [&] { return m->forward(xs, ei); });
    // Relative to the run's largest number: a bias that feeds a batch norm has a zero gradient but for rounding.
    testing::expectClose(sparse, dense, dt == DType::F64 ? 1e-10 : 1e-5, testing::largestMagnitude(dense));
  }
}

INSTANTIATE_TEST_SUITE_P(Models, PyGModel, ::testing::ValuesIn(caseNames()),
                         [](const auto& info) { return info.param; });

// Input dropout on sparse features drops non-zeros: each kept one scaled by 1 / (1 - p), about 1 - p of them
// kept, the same for the same key; evaluation leaves the features alone.
TEST(BasicGNN, SparseInputDropoutDropsNonZeros) {
  BasicGNNOptions o = BasicGNNOptions::fromPyG({{"in_channels", 30}, {"hidden_channels", 8}, {"num_layers", 2}});
  o.inputDropout = 0.4;
  Generator gen(2);
  GAT gat(o, gen);
  const SparseMatrix xs = testing::sparseOf(testing::sparseLooking(300, 30, gen));
  ExecutionContext& ctx = ExecutionContext::current();
  ctx.setRandomKey({5, 0, 0});
  const SparseMatrix a = gat.input(xs);
  ctx.setRandomKey({5, 0, 0});
  EXPECT_TRUE(gat.input(xs).values().bitEqual(a.values()));
  int64_t kept = 0;
  for (int64_t k = 0; k < xs.nnz(); ++k) {
    const double v = a.values().at(k), before = xs.values().at(k);
    if (v != 0) {
      ++kept;
      EXPECT_NEAR(v, before / 0.6, 1e-6);
    }
  }
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(xs.nnz()), 0.6, 0.05);
  gat.eval();
  EXPECT_TRUE(gat.input(xs).values().bitEqual(xs.values()));
}

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
  EXPECT_THROW(make("GCN", {{"jk", "gru"}}), std::invalid_argument);
  EXPECT_NO_THROW(make("GCN", {{"jk", "LSTM"}}));
  EXPECT_THROW(make("GAT", {{"heads", 3}}), std::invalid_argument);  // 8 hidden channels over 3 heads
  EXPECT_THROW(make("GCN", {{"act", "swishy"}}), std::invalid_argument);
  EXPECT_THROW(basicGNNFromSpec({{"class", "GCN"}, {"args", {{"in_channels", 4}}}}, gen), std::invalid_argument);
  EXPECT_NO_THROW(make("GAT", {{"heads", 2}, {"v2", true}}));
}

}  // namespace
}  // namespace gnn
