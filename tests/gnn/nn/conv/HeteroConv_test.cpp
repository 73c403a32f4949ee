// HeteroConv against PyG 2.3.1 (tests/reference/pyg_hetero_models.py): SAGEConv, GraphConv, GCNConv, GATConv and
// GINConv per edge type (the bipartite forms on relations between two types) grouped by sum, mean, max, min, cat and None, the outputs and the gradients of every input and parameter
// from PyG's weights, PyG's state_dict keys in PyG's order; finite-difference gradients; padding nodes and edges
// leave the real rows' bits alone; 1 and 2 threads give the same bits; what PyG refuses is refused.
#include <gtest/gtest.h>

#include <set>

#include "ParameterGradCheck.h"
#include "nn/HeteroReference.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/ConvRegistry.h"
#include "gnn/nn/conv/HeteroConv.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using json = nlohmann::json;
using namespace gnn::testing;

const std::vector<std::string> kCases = {"hetero_conv_sum",      "hetero_conv_mean",      "hetero_conv_max",
                                         "hetero_conv_min",      "hetero_conv_cat",       "hetero_conv_none",
                                         "hetero_conv_cat_mixed", "hetero_conv_sum_mixed", "hetero_conv_partial",
                                         "hetero_conv_gat",      "hetero_conv_gin"};

std::unique_ptr<HeteroConv> loadLayer(const json& ref, DType dtype) {
  Generator gen(1);
  std::unique_ptr<HeteroConv> layer = HeteroConv::fromPyG(ref["args"], gen, dtype);
  loadStateDictInto(*layer, testing::stateDictOf(ref));
  layer->eval();
  return layer;
}

/// sum over types of sum(out * weights).
Variable weightedSum(const std::map<std::string, Variable>& out, const std::map<std::string, Tensor>& weights) {
  Variable total;
  for (const auto& [type, y] : out) {
    Variable s = sum(mul(y, Variable(weights.at(type))));
    total = total.defined() ? add(total, s) : s;
  }
  return total;
}

std::map<std::string, Tensor> weightsOf(const json& ref, DType dtype) {
  std::map<std::string, Tensor> w;
  for (const auto& [type, t] : ref["out_weights"].items()) w.emplace(type, tensorOf(t, dtype));
  return w;
}

class HeteroConvPyG : public ::testing::TestWithParam<std::string> {};

TEST_P(HeteroConvPyG, OutputsAndGradientsArePyGs) {
  const json ref = readHeteroReference(GetParam());
  for (DType dt : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dt));
    std::unique_ptr<HeteroConv> layer = loadLayer(ref, dt);
    std::map<std::string, Variable> x = xDictOf(ref, dt, true);
    std::map<std::string, Variable> out = layer->forward(x, edgeIndexDictOf(ref));
    // Exactly PyG's output types: types no relation ends at are left out.
    ASSERT_EQ(out.size(), ref["out"].size());
    const double tol = dt == DType::F64 ? 1e-10 : 1e-5;
    for (const auto& [type, t] : ref["out"].items())
      EXPECT_LE(heteroRelativeError(out.at(type).value().to(DType::F64), tensorOf(t, DType::F64)), tol) << type;
    weightedSum(out, weightsOf(ref, dt)).backward();
    // A type no relation reads gets no gradient (PyG's None, written as zeros).
    for (const auto& [type, t] : ref["grad"]["x"].items()) {
      const Variable& v = x.at(type);
      const Tensor g = v.hasGrad() ? v.grad() : Tensor::zeros(v.shape(), dt);
      EXPECT_LE(heteroRelativeError(g.to(DType::F64), tensorOf(t, DType::F64)), tol) << "x " << type;
    }
    for (auto& [name, p] : layer->namedParameters()) {
      if (!p.requiresGrad()) continue;  // BatchNorm's running statistics (GINConv's MLPs)
      ASSERT_TRUE(ref["grad"].contains(name)) << name;
      const Tensor g = p.hasGrad() ? p.grad() : Tensor::zeros(p.shape(), dt);
      EXPECT_LE(heteroRelativeError(g.to(DType::F64), Tensor::fromVector(ref["grad"][name].get<std::vector<double>>(),
                                                                         p.shape())),
                tol)
          << name;
    }
  }
}

// PyG's keys, the convolutions in PyG's order (within one, the layer's own order: GCNConv lists lin before bias
// here, PyG bias first).
TEST_P(HeteroConvPyG, StateDictKeysArePyGs) {
  const json ref = readHeteroReference(GetParam());
  std::unique_ptr<HeteroConv> layer = loadLayer(ref, DType::F32);
  const auto convsInOrder = [](const std::vector<std::string>& keys) {
    std::vector<std::string> convs;
    for (const std::string& k : keys) {
      const std::string conv = k.substr(0, k.find('.', 6));  // "convs.<key>"
      if (convs.empty() || convs.back() != conv) convs.push_back(conv);
    }
    return convs;
  };
  std::vector<std::string> keys;
  for (const auto& [name, t] : gnn::stateDictOf(*layer).entries) keys.push_back(name);
  const std::vector<std::string> pyg = stateDictKeysInOrder(GetParam());
  EXPECT_EQ(convsInOrder(keys), convsInOrder(pyg));
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()), std::set<std::string>(pyg.begin(), pyg.end()));
}

TEST_P(HeteroConvPyG, GradientsMatchFiniteDifferences) {
  const json ref = readHeteroReference(GetParam());
  std::unique_ptr<HeteroConv> layer = loadLayer(ref, DType::F64);
  std::map<std::string, Variable> x = xDictOf(ref, DType::F64, true);
  const EdgeIndexDict edges = edgeIndexDictOf(ref);
  const std::map<std::string, Tensor> w = weightsOf(ref, DType::F64);
  std::vector<std::pair<std::string, Variable>> vars;
  for (const auto& [name, p] : layer->namedParameters())
    if (p.requiresGrad()) vars.emplace_back(name, p);  // not BatchNorm's running statistics
  // The features of the types some relation reads (hetero_conv_partial reads no institution).
  std::set<std::string> read;
  for (const json& c : ref["args"]["convs"]) {
    read.insert(c["edge_type"][0].get<std::string>());
    read.insert(c["edge_type"][2].get<std::string>());
  }
  for (const auto& [type, v] : x)
    if (read.count(type)) vars.emplace_back("x." + type, v);
  expectParameterGradientsMatch(vars, [&] { return weightedSum(layer->forward(x, edges), w); }, /*top=*/1 << 20,
                                /*random=*/0);
}

INSTANTIATE_TEST_SUITE_P(Cases, HeteroConvPyG, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

/// x_dict and edge_index_dict with `pad` padding rows per type (values 1e3) and `padEdges` padding edges per
/// relation, each from the source type's first padding row to the destination type's, appended.
std::pair<std::map<std::string, Variable>, EdgeIndexDict> padded(const json& ref, int64_t pad, int64_t padEdges) {
  std::map<std::string, Variable> x;
  for (const auto& [type, v] : xDictOf(ref, DType::F32)) {
    const int64_t n = v.dim(0), f = v.dim(1);
    Tensor t = Tensor::full({n + pad, f}, 1e3f);
    std::copy(v.value().data<float>(), v.value().data<float>() + n * f, t.data<float>());
    x.emplace(type, Variable(t));
  }
  EdgeIndexDict edges;
  for (const auto& [type, ei] : edgeIndexDictOf(ref)) {
    const int64_t E = ei.dim(1);
    std::vector<int64_t> v(static_cast<size_t>(2 * (E + padEdges)));
    for (int64_t e = 0; e < E + padEdges; ++e) {
      const bool real = e < E;
      v[static_cast<size_t>(e)] = real ? ei.data<int64_t>()[e] : x.at(type.src).dim(0) - pad;
      v[static_cast<size_t>(E + padEdges + e)] = real ? ei.data<int64_t>()[E + e] : x.at(type.dst).dim(0) - pad;
    }
    edges.emplace_back(type, Tensor::fromVector(v, {2, E + padEdges}));
  }
  return {x, edges};
}

TEST_P(HeteroConvPyG, PaddingLeavesRealRowsBitIdentical) {
  const json ref = readHeteroReference(GetParam());
  std::unique_ptr<HeteroConv> layer = loadLayer(ref, DType::F32);
  const auto [x, edges] = padded(ref, 0, 0);
  const auto [xp, edgesp] = padded(ref, 3, 5);
  const std::map<std::string, Variable> out = layer->forward(x, edges), outp = layer->forward(xp, edgesp);
  ASSERT_EQ(out.size(), outp.size());
  for (const auto& [type, y] : out) {
    const Tensor real = outp.at(type).value().slice(0, y.dim(0));
    EXPECT_TRUE(real.bitEqual(y.value())) << type;
  }
}

// Every output, input gradient and parameter gradient of HeteroConv(convs) with each aggr on three types of a few
// thousand nodes, every relation dense enough for the parallel loops to split, on 1 and 2 threads: the same bits.
void expectSameBitsOnOneAndTwoThreads(const json& convs, const std::vector<EdgeType>& types,
                                      const std::vector<std::string>& aggrs) {
  const std::map<std::string, int64_t> counts = {{"a", 3000}, {"b", 2500}, {"c", 2000}};
  Generator g(9);
  EdgeIndexDict edges;
  for (const EdgeType& t : types) {
    const int64_t E = 40000;
    std::vector<int64_t> ei(2 * E);
    for (int64_t e = 0; e < E; ++e) {
      ei[static_cast<size_t>(e)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(counts.at(t.src))));
      ei[static_cast<size_t>(E + e)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(counts.at(t.dst))));
    }
    edges.emplace_back(t, Tensor::fromVector(ei, {2, E}));
  }
  std::map<std::string, Tensor> x0;
  for (const auto& [type, n] : counts) x0.emplace(type, init::uniform({n, 32}, -1, 1, g));
  std::vector<Tensor> runs;
  const int before = numThreads();
  for (const std::string& aggr : aggrs) {
    for (int threads : {1, 2}) {
      setNumThreads(threads);
      Generator gen(4);
      std::unique_ptr<HeteroConv> layer = HeteroConv::fromPyG({{"convs", convs}, {"aggr", aggr}}, gen);
      std::map<std::string, Variable> x;
      for (const auto& [type, t] : x0) x.emplace(type, Variable(t.clone(), true));
      Variable loss;
      for (const auto& [type, y] : layer->forward(x, edges)) {
        runs.push_back(y.value());
        loss = loss.defined() ? add(loss, sum(mul(y, y))) : sum(mul(y, y));
      }
      loss.backward();
      for (const auto& [type, v] : x) runs.push_back(v.grad());
      for (auto& p : layer->parameters()) runs.push_back(p.grad());
    }
    const size_t half = runs.size() / 2;
    for (size_t k = 0; k < half; ++k) EXPECT_TRUE(runs[k].bitEqual(runs[half + k])) << aggr << " tensor " << k;
    runs.clear();
  }
  setNumThreads(before);
}

const std::vector<EdgeType> kThreadTypes = {{"a", "to", "a"}, {"a", "to", "b"}, {"b", "to", "a"}, {"c", "to", "b"},
                                            {"b", "to", "c"}};

TEST(HeteroConv, SameBitsOnOneAndTwoThreads) {
  json convs = json::array();
  for (const EdgeType& t : kThreadTypes)
    convs.push_back({{"edge_type", {t.src, t.rel, t.dst}}, {"class", t.dst == "c" ? "GraphConv" : "SAGEConv"},
                     {"args", {{"in_channels", 32}, {"out_channels", 24}, {"aggr", t.src == "c" ? "max" : "mean"}}}});
  expectSameBitsOnOneAndTwoThreads(convs, kThreadTypes, {"sum", "max", "cat"});
}

// GATConv's and GINConv's bipartite forms (fewer sources than targets and more), GATConv with self-loops on the
// same-type relation.
TEST(HeteroConv, GatAndGinSameBitsOnOneAndTwoThreads) {
  json convs = json::array();
  for (const EdgeType& t : kThreadTypes) {
    const bool gin = t.dst == "b";
    const json args = gin ? json{{"nn", {{"class", "MLP"}, {"args", {{"channel_list", {32, 24, 24}}}}}},
                                 {"train_eps", true}}
                          : json{{"in_channels", t.src == t.dst ? json(32) : json{32, 32}}, {"out_channels", 12},
                                 {"heads", 2}, {"add_self_loops", t.src == t.dst}};
    convs.push_back({{"edge_type", {t.src, t.rel, t.dst}}, {"class", gin ? "GINConv" : "GATConv"}, {"args", args}});
  }
  expectSameBitsOnOneAndTwoThreads(convs, kThreadTypes, {"sum", "cat"});
}

TEST(HeteroConv, GroupIsPyGs) {
  const Variable a(Tensor::fromVector<double>({1, -2, 3, 0}, {2, 2}));
  const Variable b(Tensor::fromVector<double>({2, -3, 1, 5}, {2, 2}));
  const Variable c(Tensor::fromVector<double>({0, 4, -1, 1}, {2, 2}));
  const auto values = [](const Variable& v) {
    return std::vector<double>(v.value().data<double>(), v.value().data<double>() + v.value().numel());
  };
  EXPECT_EQ(values(heteroGroup({a, b, c}, "sum")), (std::vector<double>{3, -1, 3, 6}));
  EXPECT_EQ(values(heteroGroup({a, b, c}, "mean")), (std::vector<double>{1, -1.0 / 3, 1, 2}));
  EXPECT_EQ(values(heteroGroup({a, b, c}, "max")), (std::vector<double>{2, 4, 3, 5}));
  EXPECT_EQ(values(heteroGroup({a, b, c}, "min")), (std::vector<double>{0, -3, -1, 0}));
  EXPECT_EQ(values(heteroGroup({a, b}, "cat")), (std::vector<double>{1, -2, 2, -3, 3, 0, 1, 5}));
  EXPECT_EQ(heteroGroup({a, b, c}, "none").shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(heteroGroup({a}, "none").shape(), (Shape{2, 1, 2}));  // stacked even alone, as torch.stack
  EXPECT_EQ(values(heteroGroup({a, b}, "none")), (std::vector<double>{1, -2, 2, -3, 3, 0, 1, 5}));
  EXPECT_TRUE(heteroGroup({a}, "max").value().bitEqual(a.value()));
  EXPECT_THROW(heteroGroup({a, b}, "prod"), std::invalid_argument);
  EXPECT_THROW(heteroGroup({a, Variable(Tensor::zeros({2, 3}, DType::F64))}, "sum"), std::invalid_argument);
}

TEST(HeteroConv, RefusesWhatItCannotRun) {
  Generator gen(1);
  const json sage = {{"in_channels", 4}, {"out_channels", 3}};
  const auto spec = [&](const json& convs, const json& aggr) { return json{{"convs", convs}, {"aggr", aggr}}; };
  // GCNConv has no bipartite form (PyG's neither: it refuses self-loops there, check_add_self_loops).
  const json gcn = {{{"edge_type", {"a", "r", "b"}}, {"class", "GCNConv"}, {"args", sage}}};
  EXPECT_THROW(HeteroConv::fromPyG(spec(gcn, "sum"), gen), std::invalid_argument);
  EXPECT_THROW(HeteroConv::fromPyG(spec({{{"edge_type", {"a", "r", "a"}}, {"class", "SAGEConv"}, {"args", sage}}},
                                        "prod"),
                                   gen),
               std::invalid_argument);
  EXPECT_THROW(HeteroConv::fromPyG(spec({{{"edge_type", {"a", "r", "a"}}, {"class", "SAGEConv"}, {"args", sage}},
                                         {{"edge_type", {"a", "r", "a"}}, {"class", "SAGEConv"}, {"args", sage}}},
                                        "sum"),
                                   gen),
               std::invalid_argument);
  auto layer = HeteroConv::fromPyG(spec({{{"edge_type", {"a", "r", "b"}}, {"class", "SAGEConv"}, {"args", sage}}},
                                        nullptr),
                                   gen);
  EXPECT_EQ(layer->aggr(), "none");
  const Tensor ei = Tensor::fromVector<int64_t>({0, 1, 1, 0}, {2, 2});
  // No features for the destination type, and an edge past the destination type's rows.
  EXPECT_THROW(layer->forward({{"a", Variable(Tensor::zeros({2, 4}))}}, {{{"a", "r", "b"}, ei}}),
               std::invalid_argument);
  EXPECT_THROW(layer->forward({{"a", Variable(Tensor::zeros({2, 4}))}, {"b", Variable(Tensor::zeros({1, 4}))}},
                              {{{"a", "r", "b"}, ei}}),
               std::invalid_argument);
  // A relation without a convolution is skipped, as PyG's.
  EXPECT_TRUE(layer->forward({{"a", Variable(Tensor::zeros({2, 4}))}}, {{{"a", "s", "a"}, ei}}).empty());
  EXPECT_EQ(HeteroConv::moduleKey({"a.b", "r", "c"}), "a#b__r__c");
  // GATConv's self-loops on a relation between two types: PyG's check_add_self_loops refuses them.
  const json gat = {{"in_channels", {4, 4}}, {"out_channels", 3}};
  try {
    HeteroConv::fromPyG(spec({{{"edge_type", {"a", "r", "b"}}, {"class", "GATConv"}, {"args", gat}}}, "sum"), gen);
    ADD_FAILURE() << "GATConv with add_self_loops accepted on ('a', 'r', 'b')";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("add_self_loops=False"), std::string::npos) << e.what();
  }
}

TEST(HeteroConv, CloneGivesTheSameOutputs) {
  const json ref = readHeteroReference("hetero_conv_cat_mixed");
  std::unique_ptr<HeteroConv> layer = loadLayer(ref, DType::F64);
  std::unique_ptr<HeteroConv> copy = cloneModule(*layer);
  const auto x = xDictOf(ref, DType::F64);
  const auto a = layer->forward(x, edgeIndexDictOf(ref)), b = copy->forward(x, edgeIndexDictOf(ref));
  for (const auto& [type, y] : a) EXPECT_TRUE(y.value().bitEqual(b.at(type).value())) << type;
}

}  // namespace
}  // namespace gnn
