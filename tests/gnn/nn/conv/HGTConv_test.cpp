// HGTConv against PyG 2.3.1's outputs and gradients from the same state_dict (tests/reference/pyg_hgt.py), finite
// differences in float64, real rows unchanged by padding nodes and edges of every type, the same bits on 1 and 2
// threads, FLOPs and bytes on every op, and the errors for what it cannot run.
#include <gtest/gtest.h>

#include <set>

#include "../../CloneCheck.h"
#include "../../ErrorMessage.h"
#include "../../ParameterGradCheck.h"
#include "../PyGReference.h"
#include "gnn/autograd/OpInfo.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/HGTConv.h"
#include "gnn/system/Parallel.h"

namespace gnn::testing {
namespace {

using json = nlohmann::json;
using XDict = std::map<std::string, Variable>;
using EdgeDict = std::vector<std::pair<EdgeType, Tensor>>;

const char* const kReferences[] = {"hgt_conv", "hgt_conv_heads2", "hgt_conv_heads2_mean", "hgt_conv_heads2_max",
                                   "hgt_conv_min", "hgt_conv_int_in_heads3", "hgt_conv_subset", "hgt_conv_cat"};

Tensor edgeIndexOf(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  std::vector<int64_t> v(2 * pairs.size());
  for (size_t e = 0; e < pairs.size(); ++e) {
    v[e] = pairs[e].first;
    v[pairs.size() + e] = pairs[e].second;
  }
  return Tensor::fromVector(v, {2, static_cast<int64_t>(pairs.size())});
}

// The sum over output types of sum(out_t * w_t).
Variable weightedSum(const XDict& out, const std::map<std::string, Tensor>& weights) {
  Variable total;
  for (const auto& [type, y] : out) {
    const Variable s = sum(mul(y, Variable(weights.at(type))));
    total = total.defined() ? add(total, s) : s;
  }
  return total;
}

TEST(HGTConv, MatchesPyG) {
  for (const char* file : kReferences) {
    SCOPED_TRACE(file);
    const json ref = readReference(file);
    ASSERT_EQ(ref["layer"], "HGTConv");
    EdgeDict edges;
    for (const json& r : ref["edge_index"]) {
      std::vector<int64_t> v = r["edge_index"][0].get<std::vector<int64_t>>();
      for (int64_t t : r["edge_index"][1]) v.push_back(t);
      const auto t = r["type"].get<std::vector<std::string>>();
      edges.emplace_back(EdgeType{t[0], t[1], t[2]}, Tensor::fromVector(v, {2, static_cast<int64_t>(v.size() / 2)}));
    }
    // float64 to PyG's float64 bits but for rounding (the relations' maps are folded into the Linears here, so
    // the products run in another order); float32 within 1e-5 of them.
    for (DType dt : {DType::F64, DType::F32}) {
      SCOPED_TRACE(dtypeName(dt));
      const double tol = dt == DType::F64 ? 1e-12 : 1e-5;
      Generator gen(1);
      std::unique_ptr<HGTConv> conv = HGTConv::fromPyG(ref["args"], gen, dt);
      loadStateDict(*conv, ref["state_dict"], dt);
      XDict x;
      for (const auto& [type, rows] : ref["x"].items()) x.emplace(type, Variable(matrixOf(rows, dt), true));
      const XDict out = conv->forward(x, edges);
      std::set<std::string> types;
      for (const auto& [type, y] : out) types.insert(type);
      std::set<std::string> expected;
      for (const auto& [type, rows] : ref["out"].items()) expected.insert(type);
      ASSERT_EQ(types, expected) << "the types given an output (PyG's None: " << ref["out_none"].dump() << ")";
      std::map<std::string, Tensor> weights;
      for (const auto& [type, rows] : ref["out_weights"].items()) weights.emplace(type, matrixOf(rows, dt));
      for (const auto& [type, y] : out)
        EXPECT_LE(relativeError(y.value(), matrixOf(ref["out"][type], dt)), tol) << "output of " << type;
      weightedSum(out, weights).backward();
      for (auto& [type, v] : x) {
        const Tensor g = v.hasGrad() ? v.grad() : Tensor::zeros(v.shape(), dt);
        EXPECT_LE(relativeError(g, matrixOf(ref["grad"]["x"][type], dt)), tol) << "gradient of x of " << type;
      }
      for (auto& [name, p] : conv->namedParameters()) {
        // A type no relation reaches: its a_lin and skip read nothing (PyG: no gradient, zeros in the file).
        const Tensor g = p.hasGrad() ? p.grad() : Tensor::zeros(p.shape(), dt);
        EXPECT_LE(relativeError(g, flatOf(ref["grad"][name], p.shape(), dt)), tol) << "gradient of " << name;
      }
    }
  }
}

// Three node types of different widths and five relations, every type a source and a target (so every parameter
// but the skips of the types whose width is not out_channels is read): a duplicate edge, a self-loop, a node
// without incoming edges, an author writing nothing.
struct SmallGraph {
  std::vector<std::pair<std::string, int64_t>> widths = {{"paper", 4}, {"author", 3}, {"field", 2}};
  std::map<std::string, int64_t> nodes = {{"paper", 5}, {"author", 5}, {"field", 3}};
  std::vector<EdgeType> relations = {{"author", "writes", "paper"}, {"paper", "cites", "paper"},
                                     {"paper", "rev_writes", "author"}, {"paper", "has_topic", "field"},
                                     {"field", "rev_has_topic", "paper"}};
  EdgeDict edges = {{relations[0], edgeIndexOf({{0, 0}, {0, 0}, {1, 0}, {1, 2}, {2, 3}, {3, 3}, {3, 1}})},
                    {relations[1], edgeIndexOf({{0, 1}, {1, 1}, {2, 0}, {3, 1}, {0, 2}, {2, 3}})},
                    {relations[2], edgeIndexOf({{0, 0}, {0, 0}, {0, 1}, {2, 1}, {3, 2}, {3, 3}, {1, 3}})},
                    {relations[3], edgeIndexOf({{0, 0}, {2, 1}, {2, 1}, {4, 0}})},
                    {relations[4], edgeIndexOf({{0, 0}, {1, 2}, {1, 2}, {0, 4}})}};
};

json argsOf(const SmallGraph& g, int64_t out, int64_t heads, const std::string& group) {
  json in = json::object(), types = json::array(), rels = json::array();
  for (const auto& [type, width] : g.widths) {
    in[type] = width;
    types.push_back(type);
  }
  for (const EdgeType& r : g.relations) rels.push_back({r.src, r.rel, r.dst});
  return {{"in_channels", in}, {"out_channels", out}, {"metadata", {types, rels}}, {"heads", heads},
          {"group", group}};
}

XDict featuresOf(const SmallGraph& g, Generator& gen, DType dtype) {
  XDict x;
  for (const auto& [type, width] : g.widths)
    x.emplace(type, Variable(init::uniform({g.nodes.at(type), width}, -1, 1, gen, dtype), true));
  return x;
}

// d(projected outputs)/d(input) against central differences at every element of every type's x and of every
// parameter, in float64, for each grouping (out 4 = paper's width: its skip is read).
TEST(HGTConv, GradientsMatchFiniteDifferences) {
  const SmallGraph g;
  for (const char* group : {"sum", "mean", "max", "min"}) {
    SCOPED_TRACE(group);
    Generator gen(2);
    auto conv = HGTConv::fromPyG(argsOf(g, 4, 2, group), gen, DType::F64);
    for (auto& p : conv->parameters()) p.value() = init::uniform(p.shape(), -1, 1, gen, DType::F64);
    const XDict x = featuresOf(g, gen, DType::F64);
    std::vector<std::pair<std::string, Variable>> vars;
    for (const auto& [type, v] : x) vars.emplace_back("x." + type, v);
    // Author's and field's skip weights are not read (their widths are not out_channels).
    for (auto& [name, p] : conv->namedParameters())
      if (name != "skip.author" && name != "skip.field") vars.emplace_back(name, p);
    expectParameterGradientsMatch(vars, [&] {
      Variable total;
      uint64_t seed = 5;
      for (const auto& [type, y] : conv->forward(x, g.edges)) {
        const Variable s = projected(y, seed++);
        total = total.defined() ? add(total, s) : s;
      }
      return total;
    }, /*top=*/1 << 20, /*random=*/0);
  }
}

// The small graph with `extra` padding nodes after each type's real ones (features 1e3, which must not leak) and
// padding edges among them (a padding source to a padding target of each relation, self-loops where the types
// are the same), as a fixed-size batch pads.
std::pair<XDict, EdgeDict> padded(const SmallGraph& g, const XDict& x, int64_t extra) {
  XDict px;
  for (const auto& [type, v] : x) {
    const int64_t n = v.dim(0), w = v.dim(1);
    Tensor t = Tensor::full({n + extra, w}, 1e3, v.dtype());
    for (int64_t i = 0; i < n * w; ++i) t.data<float>()[i] = v.value().data<float>()[i];
    px.emplace(type, Variable(t, true));
  }
  EdgeDict pe;
  for (const auto& [type, ei] : g.edges) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    const int64_t E = ei.dim(1);
    for (int64_t e = 0; e < E; ++e) pairs.emplace_back(ei.data<int64_t>()[e], ei.data<int64_t>()[E + e]);
    const int64_t ns = g.nodes.at(type.src), nd = g.nodes.at(type.dst);
    for (int64_t k = 0; k < extra; ++k) pairs.emplace_back(ns + k, nd + (k + 1) % extra);
    pe.emplace_back(type, edgeIndexOf(pairs));
  }
  return {px, pe};
}

TEST(HGTConv, PaddingDoesNotChangeRealRows) {
  const SmallGraph g;
  for (const char* group : {"sum", "max"}) {
    SCOPED_TRACE(group);
    Generator gen(3);
    auto conv = HGTConv::fromPyG(argsOf(g, 4, 2, group), gen);
    const std::unique_ptr<Module> copy = conv->clone();
    auto& plainConv = static_cast<HGTConv&>(*copy);
    const XDict x = featuresOf(g, gen, DType::F32);
    const XDict plain = plainConv.forward(x, g.edges);
    const auto [px, pe] = padded(g, x, 3);
    const XDict pad = conv->forward(px, pe);
    ASSERT_EQ(pad.size(), plain.size());
    Variable lossPlain, lossPad;
    for (const auto& [type, y] : plain) {
      const int64_t n = g.nodes.at(type);
      EXPECT_TRUE(pad.at(type).value().slice(0, n).bitEqual(y.value())) << type;
      Tensor mask = Tensor::zeros(pad.at(type).shape());
      for (int64_t i = 0; i < n * y.dim(1); ++i) mask.data<float>()[i] = 1;
      const Variable a = sum(y), b = sum(mul(pad.at(type), Variable(mask)));
      lossPlain = lossPlain.defined() ? add(lossPlain, a) : a;
      lossPad = lossPad.defined() ? add(lossPad, b) : b;
    }
    lossPlain.backward();
    lossPad.backward();
    auto pp = conv->namedParameters(), pu = plainConv.namedParameters();
    for (size_t k = 0; k < pp.size(); ++k) {
      ASSERT_EQ(pp[k].second.hasGrad(), pu[k].second.hasGrad()) << pp[k].first;
      if (pu[k].second.hasGrad()) {
        EXPECT_LE(relativeError(pp[k].second.grad(), pu[k].second.grad()), 1e-6) << pp[k].first;
      }
    }
  }
}

// A graph large enough for every parallel loop to split: forward and backward give the same bits on 1 and 2
// threads.
TEST(HGTConv, SameBitsOnOneAndTwoThreads) {
  SmallGraph g;
  g.widths = {{"paper", 48}, {"author", 40}, {"field", 24}};
  g.nodes = {{"paper", 6000}, {"author", 5000}, {"field", 300}};
  Generator r(9);
  g.edges.clear();
  for (const EdgeType& t : g.relations) {
    std::vector<std::pair<int64_t, int64_t>> pairs(40000);
    for (auto& [s, d] : pairs) {
      s = static_cast<int64_t>(r.nextBelow(static_cast<uint64_t>(g.nodes.at(t.src))));
      d = static_cast<int64_t>(r.nextBelow(static_cast<uint64_t>(g.nodes.at(t.dst))));
    }
    g.edges.emplace_back(t, edgeIndexOf(pairs));
  }
  const XDict x0 = featuresOf(g, r, DType::F32);
  std::vector<Tensor> runs;
  const int before = numThreads();
  for (int threads : {1, 2}) {
    setNumThreads(threads);
    Generator gen(4);
    auto conv = HGTConv::fromPyG(argsOf(g, 48, 2, "sum"), gen);
    XDict x;
    for (const auto& [type, v] : x0) x.emplace(type, Variable(v.value().clone(), true));
    const XDict out = conv->forward(x, g.edges);
    Variable loss;
    for (const auto& [type, y] : out) {
      const Variable s = sum(mul(y, y));
      loss = loss.defined() ? add(loss, s) : s;
      runs.push_back(y.value());
    }
    loss.backward();
    for (const auto& [type, v] : x) runs.push_back(v.grad());
    for (auto& p : conv->parameters())
      if (p.hasGrad()) runs.push_back(p.grad());
  }
  setNumThreads(before);
  const size_t half = runs.size() / 2;
  for (size_t k = 0; k < half; ++k) EXPECT_TRUE(runs[k].bitEqual(runs[half + k])) << "tensor " << k;
}

// Every op names itself and declares its bytes; the FLOPs add up to at least the Linears' products.
TEST(HGTConv, DeclaresFlopsAndBytes) {
  struct Tally : OpObserver {
    void onOp(const OpEvent& e) override {
      (e.pass == Pass::Forward ? forwardFlops : backwardFlops) += e.flops;
      if (e.pass != Pass::Forward) return;
      EXPECT_NE(std::string(e.info->name), "op") << "an op without a name";
      if (std::string(e.info->name) != "reshape") {
        EXPECT_GT(e.bytes, 0) << e.info->name << " declares no bytes";
      }
    }
    int64_t forwardFlops = 0, backwardFlops = 0;
  } tally;
  const SmallGraph g;
  Generator gen(6);
  auto conv = HGTConv::fromPyG(argsOf(g, 4, 2, "sum"), gen);
  const XDict x = featuresOf(g, gen, DType::F32);
  {
    ObserverScope watch(tally);
    Variable loss;
    for (const auto& [type, y] : conv->forward(x, g.edges)) loss = loss.defined() ? add(loss, sum(y)) : sum(y);
    loss.backward();
  }
  // Each relation's keys and values (2 N_src in_src out each) at least.
  int64_t products = 0;
  for (const EdgeType& r : g.relations)
    for (const auto& [type, width] : g.widths)
      if (type == r.src) products += 2 * 2 * g.nodes.at(r.src) * width * 4;
  EXPECT_GE(tally.forwardFlops, products);
  EXPECT_GE(tally.backwardFlops, products);
}

TEST(HGTConv, KeysShapesAndClone) {
  const SmallGraph g;
  Generator gen(1);
  auto conv = HGTConv::fromPyG(argsOf(g, 6, 3, "sum"), gen);
  std::map<std::string, Shape> shapes;
  for (auto& [name, p] : conv->namedParameters()) shapes[name] = p.shape();
  EXPECT_EQ(shapes.at("k_lin.author.weight"), (Shape{6, 3}));
  EXPECT_EQ(shapes.at("a_lin.field.weight"), (Shape{6, 6}));
  EXPECT_EQ(shapes.at("skip.paper"), (Shape{1}));
  EXPECT_EQ(shapes.at("a_rel.author__writes__paper"), (Shape{3, 2, 2}));
  EXPECT_EQ(shapes.at("m_rel.paper__has_topic__field"), (Shape{3, 2, 2}));
  EXPECT_EQ(shapes.at("p_rel.paper__cites__paper"), (Shape{3}));
  EXPECT_EQ(shapes.size(), 3u * 8 + 3 + 5 * 3);
  EXPECT_EQ(conv->namedParameters().front().first, "k_lin.paper.weight");  // the metadata's order, as PyG's
  // PyG's initialisation: ones for skip and p_rel.
  for (auto& [name, p] : conv->namedParameters())
    if (name.rfind("skip.", 0) == 0 || name.rfind("p_rel.", 0) == 0) {
      EXPECT_EQ(p.value().at(0), 1.0) << name;
    }
  const std::unique_ptr<Module> copy = conv->clone();
  expectDeepCopy(*conv, *copy);
  const XDict x = featuresOf(g, gen, DType::F32);
  const XDict a = conv->forward(x, g.edges), b = static_cast<HGTConv&>(*copy).forward(x, g.edges);
  for (const auto& [type, y] : a) EXPECT_TRUE(y.value().bitEqual(b.at(type).value())) << type;
}

TEST(HGTConv, ClearErrors) {
  const SmallGraph g;
  Generator gen(1);
  auto conv = HGTConv::fromPyG(argsOf(g, 4, 2, "sum"), gen);
  const XDict x = featuresOf(g, gen, DType::F32);
  auto expectError = [&](const std::function<void()>& f, const std::string& words) {
    const std::string m = messageOf(f);
    EXPECT_NE(m.find(words), std::string::npos) << m;
  };
  XDict wide = x;
  wide["author"] = Variable(Tensor::zeros({5, 4}));
  expectError([&] { conv->forward(wide, g.edges); }, "node type 'author'): input has shape [5, 4], expected [N, 3]");
  XDict unknown = x;
  unknown["venue"] = Variable(Tensor::zeros({2, 3}));
  expectError([&] { conv->forward(unknown, g.edges); }, "node type 'venue'");
  EdgeDict edges = g.edges;
  edges.emplace_back(EdgeType{"author", "cites", "paper"}, edgeIndexOf({{0, 0}}));
  expectError([&] { conv->forward(x, edges); }, "relation 'author__cites__paper' is not in the metadata");
  edges = g.edges;
  edges.push_back(g.edges[1]);
  expectError([&] { conv->forward(x, edges); }, "'paper__cites__paper' given twice");
  edges = g.edges;
  edges[0].second = edgeIndexOf({{0, 0}, {5, 1}});
  expectError([&] { conv->forward(x, edges); }, "edge 1 (5 -> 1) points outside the 5 'author' nodes");
  edges[0].second = edgeIndexOf({{0, 5}});
  expectError([&] { conv->forward(x, edges); }, "or the 5 'paper' nodes");
  edges[0].second = Tensor::zeros({3, 2}, DType::I64);
  expectError([&] { conv->forward(x, edges); }, "edge_index must be int64 [2, E]");
  XDict noField = x;
  noField.erase("field");
  expectError([&] { conv->forward(noField, g.edges); }, "needs node type 'field' in x_dict");
  json args = argsOf(g, 5, 2, "sum");
  expectError([&] { HGTConv::fromPyG(args, gen); }, "must be divisible by the number of heads");
  args = argsOf(g, 4, 2, "sum");
  args["in_channels"] = -1;
  expectError([&] { HGTConv::fromPyG(args, gen); }, "lazy -1 is not offered");
  args["in_channels"] = 4;
  args["group"] = nullptr;
  expectError([&] { HGTConv::fromPyG(args, gen); }, "group");
  args["group"] = "median";
  expectError([&] { HGTConv::fromPyG(args, gen); }, "group 'median'");
  args["group"] = "cat";
  auto cat = HGTConv::fromPyG(args, gen);
  XDict same;
  for (const auto& [type, v] : x) same.emplace(type, Variable(Tensor::zeros({v.dim(0), 4})));
  expectError([&] { cat->forward(same, g.edges); }, "group 'cat'");
  args = argsOf(g, 4, 2, "sum");
  args["metadata"][1].push_back({"paper", "cites", "venue"});
  expectError([&] { HGTConv::fromPyG(args, gen); }, "names node type 'venue'");
  args = argsOf(g, 4, 2, "sum");
  args["aggr"] = "mean";
  expectError([&] { HGTConv::fromPyG(args, gen); }, "aggr");
}

}  // namespace
}  // namespace gnn::testing
