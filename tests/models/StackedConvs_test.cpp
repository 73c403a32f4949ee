// BasicGNN over any convolution of gnn/nn/conv (node_property's --model tag, transformer, gcn2, ...): every class
// stacks, trains (a gradient reaches every parameter) and clones; its spec goes out and back (conv_kwargs for a
// layer argument named as the model's); GCN2Conv and FAConv read the input projection as x_0 in every layer,
// through the blocks the simulated IPU runs too; padding rows of a fixed-size batch change no real row; a layer
// that needs edge features says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "gnn/io/StateDict.h"
#include "gnn/nn/conv/ConvRegistry.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/SparseInputCheck.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "models/BasicGNNBlocks.h"

namespace gnn {
namespace {

using json = nlohmann::json;

// Each stacked class with the arguments node_property gives the ones PyG does not default.
double maxAbsDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.numel(), b.numel());
  double d = 0;
  for (int64_t i = 0; i < std::min(a.numel(), b.numel()); ++i) d = std::max(d, std::abs(a.at(i) - b.at(i)));
  return d;
}

// Rows of a then rows of b.
Tensor stackRows(const Tensor& a, const Tensor& b) {
  Tensor out = Tensor::empty({a.dim(0) + b.dim(0), a.dim(1)}, a.dtype());
  std::copy(a.data<float>(), a.data<float>() + a.numel(), out.data<float>());
  std::copy(b.data<float>(), b.data<float>() + b.numel(), out.data<float>() + a.numel());
  return out;
}

const std::pair<const char*, const char*> kClasses[] = {
    {"APPNP", R"({"K": 3, "alpha": 0.1})"},
    {"ChebConv", R"({"K": 2})"},
    {"ClusterGCNConv", "{}"},
    {"DynamicEdgeConv", R"({"k": 3})"},
    {"EGConv", R"({"num_heads": 2, "num_bases": 2})"},
    {"FAConv", "{}"},
    {"FiLMConv", "{}"},
    {"GatedGraphConv", R"({"num_layers": 2})"},
    {"GCN2Conv", R"({"alpha": 0.1, "theta": 0.5})"},
    {"GENConv", "{}"},
    {"GeneralConv", "{}"},
    {"GraphConv", "{}"},
    {"LEConv", "{}"},
    {"MFConv", "{}"},
    {"ResGatedGraphConv", "{}"},
    {"SGConv", R"({"K": 2})"},
    {"TAGConv", "{}"},
    {"TransformerConv", R"({"heads": 2})"},
    {"GINConv", "{}"},
    {"EdgeConv", "{}"},
};

// 7 real nodes (a duplicate edge, a self-loop, node 6 isolated).
Tensor realEdges() {
  return Tensor::fromVector<int64_t>({0, 0, 1, 1, 2, 3, 4, 4, 5, 1, 1, 0, 2, 2, 4, 0, 3, 5, 4, 2}, {2, 10});
}

std::unique_ptr<BasicGNN> stack(const std::string& cls, const char* kwargs, Generator& gen, json extra = {}) {
  json args = {{"in_channels", 5},  {"hidden_channels", 8},        {"num_layers", 3},
               {"out_channels", 3}, {"conv_kwargs", json::parse(kwargs)}, {"dropout", 0.2}};
  if (!extra.is_null()) args.update(extra);
  return basicGNNFromSpec({{"class", cls}, {"args", args}}, gen);
}

TEST(StackedConvs, EveryClassTrainsAndClones) {
  for (const auto& [cls, kwargs] : kClasses) {
    SCOPED_TRACE(cls);
    Generator gen(7);
    std::unique_ptr<BasicGNN> m = stack(cls, kwargs, gen);
    EXPECT_TRUE(m->convStack());
    const Tensor x = init::normal({7, 5}, 1.0, gen);
    m->train();
    ExecutionContext::current().setRandomKey({3, 0, 0});
    Variable out = m->forward(Variable(x), realEdges());
    ASSERT_EQ(out.dim(0), 7);
    ASSERT_EQ(out.dim(1), 3);
    sum(mul(out, out)).backward();
    for (auto& [name, p] : m->namedParameters()) {
      if (!p.requiresGrad()) continue;
      EXPECT_TRUE(p.grad().defined()) << name << " gets no gradient";
    }
    m->eval();
    NoGradGuard ng;
    const Tensor ref = m->forward(Variable(x), realEdges()).value();
    EXPECT_TRUE(cloneModule(*m)->forward(Variable(x), realEdges()).value().bitEqual(ref));
    // The spec goes out and back: the same model (same parameters, same outputs from the same state).
    Generator other(99);
    std::unique_ptr<BasicGNN> back = basicGNNFromSpec(m->spec(), other);
    loadStateDictInto(*back, stateDictOf(*m));
    back->eval();
    EXPECT_TRUE(back->forward(Variable(x), realEdges()).value().bitEqual(ref)) << m->spec().dump();
  }
}

TEST(StackedConvs, ConvKwargsKeepALayerArgumentNamedAsTheModels) {
  Generator gen(1);
  std::unique_ptr<BasicGNN> m = stack("GatedGraphConv", R"({"num_layers": 4})", gen);
  const json spec = m->spec();
  EXPECT_EQ(spec["args"]["num_layers"], 3);
  EXPECT_EQ(spec["args"]["conv_kwargs"]["num_layers"], 4);
  // Four gated steps share each layer's one GRU: the weight holds num_layers matrices (PyG's [L, C, C]).
  EXPECT_EQ(m->conv(0).namedParameters().at(0).second.value().dim(0), 4);
}

TEST(StackedConvs, WidthKeepingLayersSitBetweenTwoLinearLayers) {
  // GCNII (PyG's examples/gcn2_cora.py): x_0 = act(lin_in(x)), each layer act(conv(h, x_0)), then lin.
  Generator gen(5);
  std::unique_ptr<BasicGNN> m = stack("GCN2Conv", R"({"alpha": 0.1, "theta": 0.5})", gen, {{"dropout", 0.0}});
  EXPECT_TRUE(m->keepsWidth());
  EXPECT_TRUE(m->readsInitial());
  m->eval();
  NoGradGuard ng;
  const Tensor x = init::normal({7, 5}, 1.0, gen);
  const auto params = m->namedParameters();
  auto param = [&](const std::string& n) {
    for (const auto& [k, v] : params)
      if (k == n) return Variable(v.value());
    ADD_FAILURE() << "no parameter " << n;
    return Variable();
  };
  Variable x0 = relu(add(matmulNT(Variable(x), param("lin_in.weight")), param("lin_in.bias")));
  Variable h = x0;
  for (int64_t i = 0; i < 3; ++i) {
    ConvInputs in;
    in.x = h;
    in.x0 = x0;
    in.edgeIndex = realEdges();
    h = relu(convForward("GCN2Conv", m->conv(i), in));
  }
  Variable want = add(matmulNT(h, param("lin.weight")), param("lin.bias"));
  const Tensor got = m->forward(Variable(x), realEdges()).value();
  EXPECT_LT(maxAbsDiff(got, want.value()), 1e-6);
  // The blocks (the simulated IPU's stages) carry x_0 from the input block to every layer.
  BasicGNNBlocks blocks(cloneModule(*m));
  blocks.eval();
  EXPECT_TRUE(blocks.forward(Variable(x), realEdges()).value().bitEqual(got));
}

TEST(StackedConvs, PaddingRowsChangeNoRealRow) {
  // A fixed-size batch: 7 real nodes and 5 padding rows with edges among themselves (the padding graph).
  for (const auto& [cls, kwargs] : kClasses) {
    SCOPED_TRACE(cls);
    Generator gen(11);
    BasicGNNBlocks net(stack(cls, kwargs, gen));
    net.eval();
    NoGradGuard ng;
    const Tensor x = init::normal({7, 5}, 1.0, gen);
    Batch real;
    real.x = x;
    real.edgeIndex = realEdges();
    real.numNodes = real.numRealNodes = 7;
    const Tensor want = net.forward(real).value();
    Batch padded;
    // Near copies of real rows: a k-nearest-neighbour search that let padding in would pick them.
    Tensor near = init::normal({5, 5}, 0.01, gen);
    for (int64_t i = 0; i < near.numel(); ++i) near.data<float>()[i] += x.data<float>()[i];
    padded.x = stackRows(x, near);
    padded.edgeIndex = Tensor::fromVector<int64_t>(
        {0, 0, 1, 1, 2, 3, 4, 4, 5, 1, 7, 8, 9, 11, 1, 0, 2, 2, 4, 0, 3, 5, 4, 2, 8, 9, 7, 11}, {2, 14});
    padded.numNodes = 12;
    padded.numRealNodes = 7;
    std::vector<uint8_t> mask(12, 0);
    std::fill(mask.begin(), mask.begin() + 7, 1);
    padded.nodesMask = Tensor::fromVector<uint8_t>(mask, {12});
    const Tensor got = sliceRows(net.forward(padded), 0, 7).value();
    EXPECT_LT(maxAbsDiff(got, want), 1e-5) << cls;
  }
}

TEST(StackedConvs, SaysWhatItCannotStack) {
  Generator gen(2);
  try {
    stack("GCNConvv", "{}", gen);
    ADD_FAILURE() << "an unknown class was stacked";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("TAGConv"), std::string::npos) << e.what();
  }
  std::unique_ptr<BasicGNN> nn = stack("GINEConv", "{}", gen);
  try {
    nn->forward(Variable(init::normal({7, 5}, 1.0, gen)), realEdges());
    ADD_FAILURE() << "GINEConv ran without edge features";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("edge features"), std::string::npos) << e.what();
  }
  EXPECT_THROW(stack("TransformerConv", R"({"heads": 3})", gen), std::invalid_argument);  // 8 over 3 heads
}

}  // namespace
}  // namespace gnn
