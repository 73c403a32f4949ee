// to_hetero's GraphSAGE, GAT and GIN against PyG 2.3.1 (tests/reference/pyg_hetero_models.py: to_hetero(GraphSAGE(...),
// metadata, aggr) on three node types with a same-type relation and reverse relations): outputs from PyG's weights
// for each of to_hetero's aggregations, with jumping knowledge and norms per node type, PyG's state_dict keys in
// PyG's order; finite-difference gradients; padding nodes and edges leave the real rows' bits alone; 1 and 2
// threads give the same bits; what PyG's transformation cannot run is refused naming it.
#include <gtest/gtest.h>

#include <set>

#include "GradCheck.h"
#include "ParameterGradCheck.h"
#include "nn/HeteroReference.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/models/HeteroBasicGNN.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using json = nlohmann::json;
using namespace gnn::testing;

const std::vector<std::string> kCases = {"to_hetero_sage", "to_hetero_sage_max_mean",
                                         "to_hetero_sage_jk_cat_batch_norm_max", "to_hetero_sage_three_layers_min",
                                         "to_hetero_sage_jk_last_layer_norm_mul", "to_hetero_gat",
                                         "to_hetero_gat_shared_jk_cat_mean", "to_hetero_gin",
                                         "to_hetero_gin_batch_norm_max"};

HeteroMetadata metadataOf(const json& ref) {
  HeteroMetadata m;
  m.first = ref["metadata"][0].get<std::vector<std::string>>();
  for (const auto& t : ref["metadata"][1]) m.second.push_back({t[0], t[1], t[2]});
  return m;
}

std::map<std::string, int64_t> widthsOf(const json& ref) {
  std::map<std::string, int64_t> w;
  for (const auto& [type, t] : ref["x"].items()) w[type] = t["shape"][1].get<int64_t>();
  return w;
}

std::unique_ptr<HeteroBasicGNN> loadModel(const json& ref, DType dtype) {
  Generator gen(2);
  auto m = std::make_unique<HeteroBasicGNN>(ref["model"], metadataOf(ref), widthsOf(ref), ref["aggr"], gen, dtype);
  loadStateDictInto(*m, testing::stateDictOf(ref));
  m->eval();
  return m;
}

class HeteroBasicGNNPyG : public ::testing::TestWithParam<std::string> {};

TEST_P(HeteroBasicGNNPyG, OutputsArePyGs) {
  const json ref = readHeteroReference(GetParam());
  for (DType dt : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dt));
    std::unique_ptr<HeteroBasicGNN> m = loadModel(ref, dt);
    NoGradGuard ng;
    const std::map<std::string, Variable> out = m->forward(xDictOf(ref, dt), edgeIndexDictOf(ref));
    ASSERT_EQ(out.size(), ref["out"].size());
    for (const auto& [type, t] : ref["out"].items())
      EXPECT_LE(heteroRelativeError(out.at(type).value().to(DType::F64), tensorOf(t, DType::F64)),
                dt == DType::F64 ? 1e-10 : 1e-5)
          << type;
  }
}

TEST_P(HeteroBasicGNNPyG, StateDictKeysAreInPyGsOrder) {
  const json ref = readHeteroReference(GetParam());
  std::unique_ptr<HeteroBasicGNN> m = loadModel(ref, DType::F32);
  std::vector<std::string> keys;
  for (const auto& [name, t] : gnn::stateDictOf(*m).entries) keys.push_back(name);
  EXPECT_EQ(keys, stateDictKeysInOrder(GetParam()));
}

TEST_P(HeteroBasicGNNPyG, GradientsMatchFiniteDifferences) {
  const json ref = readHeteroReference(GetParam());
  std::unique_ptr<HeteroBasicGNN> m = loadModel(ref, DType::F64);
  std::map<std::string, Variable> x = xDictOf(ref, DType::F64, true);
  const EdgeIndexDict edges = edgeIndexDictOf(ref);
  std::map<std::string, Tensor> w;
  uint64_t seed = 40;
  for (const auto& [type, t] : ref["out"].items()) w.emplace(type, randomTensor(t["shape"].get<Shape>(), ++seed));
  const auto loss = [&] {
    Variable total;
    for (const auto& [type, y] : m->forward(x, edges)) {
      Variable s = sum(mul(y, Variable(w.at(type))));
      total = total.defined() ? add(total, s) : s;
    }
    return total;
  };
  // A same-type relation's GATConv reads x through lin_src alone: its own lin_dst (a [source, target] in_channels)
  // takes no gradient, in PyG as here.
  std::set<std::string> unread;
  for (const EdgeType& t : m->metadata().second)
    if (t.src == t.dst) unread.insert(HeteroBasicGNN::key(t) + ".lin_dst.");
  const auto isUnread = [&](const std::string& name) {
    for (const std::string& u : unread)
      if (name.find("." + u) != std::string::npos) return true;
    return false;
  };
  std::vector<std::pair<std::string, Variable>> vars;
  for (const auto& [name, p] : m->namedParameters())
    if (p.requiresGrad() && !isUnread(name)) vars.emplace_back(name, p);  // not BatchNorm's running statistics
  for (const auto& [type, v] : x) vars.emplace_back("x." + type, v);
  expectParameterGradientsMatch(vars, loss, /*top=*/6, /*random=*/6);
}

INSTANTIATE_TEST_SUITE_P(Cases, HeteroBasicGNNPyG, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Padding rows (1e3) per type and padding edges between padding rows, per relation: the real rows' outputs are the
// same bits (the cases without norms: a graph-wise norm's statistics would read the padding rows).
TEST(HeteroBasicGNN, PaddingLeavesRealRowsBitIdentical) {
  for (const char* name : {"to_hetero_sage", "to_hetero_sage_max_mean", "to_hetero_sage_three_layers_min",
                           "to_hetero_gat", "to_hetero_gat_shared_jk_cat_mean", "to_hetero_gin"}) {
    const json ref = readHeteroReference(name);
    std::unique_ptr<HeteroBasicGNN> m = loadModel(ref, DType::F32);
    const int64_t pad = 3, padEdges = 4;
    std::map<std::string, Variable> xp;
    for (const auto& [type, v] : xDictOf(ref, DType::F32)) {
      Tensor t = Tensor::full({v.dim(0) + pad, v.dim(1)}, 1e3);
      std::copy(v.value().data<float>(), v.value().data<float>() + v.value().numel(), t.data<float>());
      xp.emplace(type, Variable(t));
    }
    EdgeIndexDict edgesp;
    for (const auto& [type, ei] : edgeIndexDictOf(ref)) {
      const int64_t E = ei.dim(1);
      std::vector<int64_t> v;
      for (int row = 0; row < 2; ++row) {
        v.insert(v.end(), ei.data<int64_t>() + row * E, ei.data<int64_t>() + (row + 1) * E);
        const int64_t first = xp.at(row == 0 ? type.src : type.dst).dim(0) - pad;
        for (int64_t e = 0; e < padEdges; ++e) v.push_back(first + e % pad);
      }
      edgesp.emplace_back(type, Tensor::fromVector(v, {2, E + padEdges}));
    }
    const auto out = m->forward(xDictOf(ref, DType::F32), edgeIndexDictOf(ref));
    const auto outp = m->forward(xp, edgesp);
    for (const auto& [type, y] : out)
      EXPECT_TRUE(outp.at(type).value().slice(0, y.dim(0)).bitEqual(y.value())) << name << " " << type;
  }
}

// Outputs and every gradient of the model of spec on two types of a few thousand nodes (widths as given), on 1 and
// 2 threads: the same bits.
void expectSameBitsOnOneAndTwoThreads(const json& spec, const std::map<std::string, int64_t>& widths) {
  const HeteroMetadata meta = {{"a", "b"}, {{"a", "to", "a"}, {"a", "to", "b"}, {"b", "to", "a"}, {"b", "self", "b"}}};
  const std::map<std::string, int64_t> counts = {{"a", 4000}, {"b", 3000}};
  Generator g(3);
  EdgeIndexDict edges;
  for (const EdgeType& t : meta.second) {
    const int64_t E = 50000;
    std::vector<int64_t> ei(2 * E);
    for (int64_t e = 0; e < E; ++e) {
      ei[static_cast<size_t>(e)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(counts.at(t.src))));
      ei[static_cast<size_t>(E + e)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(counts.at(t.dst))));
    }
    edges.emplace_back(t, Tensor::fromVector(ei, {2, E}));
  }
  std::map<std::string, Tensor> x0;
  for (const auto& [type, n] : counts) x0.emplace(type, init::uniform({n, widths.at(type)}, -1, 1, g));
  std::vector<Tensor> runs;
  const int before = numThreads();
  for (int threads : {1, 2}) {
    setNumThreads(threads);
    Generator gen(4);
    HeteroBasicGNN m(spec, meta, widths, "mean", gen);
    std::map<std::string, Variable> x;
    for (const auto& [type, t] : x0) x.emplace(type, Variable(t.clone(), true));
    Variable loss;
    for (const auto& [type, y] : m.forward(x, edges)) {
      runs.push_back(y.value());
      loss = loss.defined() ? add(loss, sum(mul(y, y))) : sum(mul(y, y));
    }
    loss.backward();
    for (const auto& [type, v] : x) runs.push_back(v.grad());
    for (auto& p : m.parameters()) runs.push_back(p.grad());
  }
  setNumThreads(before);
  const size_t half = runs.size() / 2;
  for (size_t k = 0; k < half; ++k) EXPECT_TRUE(runs[k].bitEqual(runs[half + k])) << spec.dump() << " tensor " << k;
}

TEST(HeteroBasicGNN, SameBitsOnOneAndTwoThreads) {
  const json sage = {{"class", "GraphSAGE"},
                     {"args", {{"in_channels", -1}, {"hidden_channels", 32}, {"num_layers", 2}, {"out_channels", 16},
                               {"jk", "max"}, {"aggr", "max"}}}};
  expectSameBitsOnOneAndTwoThreads(sage, {{"a", 24}, {"b", 40}});
  const json gat = {{"class", "GAT"},
                    {"args", {{"in_channels", {-1, -1}}, {"hidden_channels", 32}, {"num_layers", 2},
                              {"out_channels", 16}, {"heads", 4}, {"add_self_loops", false}}}};
  expectSameBitsOnOneAndTwoThreads(gat, {{"a", 24}, {"b", 40}});
  const json gin = {{"class", "GIN"},
                    {"args", {{"in_channels", -1}, {"hidden_channels", 32}, {"num_layers", 2}, {"out_channels", 16},
                              {"train_eps", true}}}};
  expectSameBitsOnOneAndTwoThreads(gin, {{"a", 24}, {"b", 24}});
}

TEST(HeteroBasicGNN, RefusesWhatToHeteroCannotRun) {
  Generator gen(1);
  const json sage = {{"class", "GraphSAGE"},
                     {"args", {{"in_channels", -1}, {"hidden_channels", 4}, {"num_layers", 2}}}};
  const HeteroMetadata meta = {{"a", "b"}, {{"a", "to", "b"}, {"b", "to", "a"}}};
  const std::map<std::string, int64_t> widths = {{"a", 3}, {"b", 5}};
  const auto refused = [&](const json& spec, const HeteroMetadata& m, const std::map<std::string, int64_t>& w,
                           const std::string& aggr, const std::string& want) {
    try {
      HeteroBasicGNN model(spec, m, w, aggr, gen);
      ADD_FAILURE() << "accepted; wanted an error naming " << want;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  refused(sage, {{"a", "b"}, {{"a", "to", "b"}}}, widths, "sum", "'a' is no edge type's destination");
  refused({{"class", "GCN"}, {"args", sage["args"]}}, meta, widths, "sum", "class 'GCN'");
  refused(sage, meta, widths, "cat", "aggr 'cat'");
  json fixed = sage;
  fixed["args"]["in_channels"] = 3;
  refused(fixed, meta, widths, "sum", "node type 'b' has 5 features");
  refused(sage, meta, {{"a", 3}}, "sum", "'b''s width");
  // GAT: self-loops on a relation between two types (PyG's check_add_self_loops), GATv2Conv, one shared lin for
  // two widths; GIN: two widths, or [source, target] widths its MLP cannot take.
  const json gatArgs = {{"in_channels", -1}, {"hidden_channels", 4}, {"num_layers", 2}, {"add_self_loops", false}};
  json gat = {{"class", "GAT"}, {"args", gatArgs}};
  gat["args"].erase("add_self_loops");
  refused(gat, meta, {{"a", 3}, {"b", 3}}, "sum", "add_self_loops=False");
  gat["args"] = gatArgs;
  refused(gat, meta, widths, "sum", "in_channels [-1, -1]");
  gat["args"]["v2"] = true;
  refused(gat, meta, {{"a", 3}, {"b", 3}}, "sum", "v2");
  json gin = {{"class", "GIN"}, {"args", sage["args"]}};
  refused(gin, meta, widths, "sum", "joins widths 3 and 5");
  gin["args"]["in_channels"] = {-1, -1};
  refused(gin, meta, {{"a", 3}, {"b", 3}}, "sum", "GIN takes an int or -1");
  HeteroBasicGNN m(sage, meta, widths, "sum", gen);
  const Tensor ei = Tensor::fromVector<int64_t>({0, 0}, {2, 1});
  EXPECT_THROW(m.forward({{"a", Variable(Tensor::zeros({1, 3}))}, {"b", Variable(Tensor::zeros({1, 5}))}},
                         {{{"a", "to", "b"}, ei}}),
               std::invalid_argument);
  EXPECT_EQ(HeteroBasicGNN::key(EdgeType{"field of study", "has-topic", "x:y"}), "field_of_study__has_topic__x_y");
}

TEST(HeteroBasicGNN, CloneGivesTheSameOutputs) {
  const json ref = readHeteroReference("to_hetero_sage_jk_cat_batch_norm_max");
  std::unique_ptr<HeteroBasicGNN> m = loadModel(ref, DType::F64);
  std::unique_ptr<HeteroBasicGNN> copy = cloneModule(*m);
  copy->eval();
  const auto a = m->forward(xDictOf(ref, DType::F64), edgeIndexDictOf(ref));
  const auto b = copy->forward(xDictOf(ref, DType::F64), edgeIndexDictOf(ref));
  for (const auto& [type, y] : a) EXPECT_TRUE(y.value().bitEqual(b.at(type).value())) << type;
}

}  // namespace
}  // namespace gnn
