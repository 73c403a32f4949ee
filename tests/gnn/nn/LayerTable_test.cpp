// The checks every layer of the table (LayerTable.cpp) passes: PyG 2.3.1's outputs and gradients from the same
// state_dict, finite-difference gradients of the input and every parameter, real rows unchanged by the padding
// of fixed-size batches, the same bits on 1 and 2 threads, and FLOPs and bytes declared on every op it records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../../loaders/SyntheticGraphs.h"
#include "LayerTable.h"
#include "PyGReference.h"
#include "ParameterGradCheck.h"
#include "gnn/autograd/OpInfo.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"
#include "loaders/FixedSizeCollator.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn::testing {
namespace {

using json = nlohmann::json;

class LayerTable : public ::testing::TestWithParam<LayerCase> {};

TEST_P(LayerTable, MatchesPyG) {
  const LayerCase& c = GetParam();
  if (c.pygReferences.empty()) GTEST_SKIP() << c.name << " has no PyG reference";
  for (const std::string& file : c.pygReferences) {
    SCOPED_TRACE(file);
    const json ref = readReference(file);
    ASSERT_EQ(ref["layer"], c.name.substr(0, c.name.find('_')));  // the class (a second entry: "PNAConv_edge")
    std::vector<int64_t> edges = ref["edge_index"][0].get<std::vector<int64_t>>();
    for (int64_t t : ref["edge_index"][1]) edges.push_back(t);
    const Tensor ei = Tensor::fromVector(edges, {2, static_cast<int64_t>(ref["edge_index"][0].size())});
    // float64 to PyG's float64 bits but for rounding; float32 within 1e-5 of them.
    for (DType dt : {DType::F64, DType::F32}) {
      SCOPED_TRACE(dtypeName(dt));
      const double tol = dt == DType::F64 ? 1e-12 : 1e-5;
      Generator gen(1);
      std::unique_ptr<Module> layer = c.make(ref["args"], dt, gen);
      loadStateDict(*layer, ref["state_dict"], dt, ref.value("state_dict_aliases", json::object()));
      layer->eval();  // the references are PyG's evaluation mode (no dropout; running statistics)
      Variable x(matrixOf(ref["x"], dt), true);
      Variable e;
      if (ref.contains("edge_attr")) e = Variable(matrixOf(ref["edge_attr"], dt), true);
      Variable out = c.forward(*layer, x, ei, e);
      EXPECT_LE(relativeError(out.value(), matrixOf(ref["out"], dt)), tol) << "output";
      sum(mul(out, Variable(matrixOf(ref["out_weights"], dt)))).backward();
      EXPECT_LE(relativeError(x.grad(), matrixOf(ref["grad"]["x"], dt)), tol) << "gradient of x";
      if (e.defined()) {
        EXPECT_LE(relativeError(e.grad(), matrixOf(ref["grad"]["edge_attr"], dt)), tol) << "gradient of edge_attr";
      }
      for (auto& [name, p] : layer->namedParameters()) {
        if (!p.requiresGrad()) continue;  // buffers (running statistics)
        // A parameter the forward did not read (TransformerConv's lin_skip without root_weight) has no gradient
        // here and PyG's zeros there.
        const Tensor grad = p.grad().defined() ? p.grad() : Tensor::zeros(p.shape(), dt);
        EXPECT_LE(relativeError(grad, flatOf(ref["grad"][name], p.shape(), dt)), tol) << "gradient of " << name;
      }
    }
  }
}

// A small graph with a duplicate edge, self-loops (one and two on a node) and an isolated node.
Tensor awkwardGraph() {
  return Tensor::fromVector<int64_t>({0, 0, 1, 1, 2, 2, 3, 3, 3, 4, 1, 1, 0, 2, 2, 3, 3, 3, 4, 0}, {2, 10});
}

// d(sum(r * layer(x)))/d(input) against central differences at every element of x and of every parameter, in
// float64.
TEST_P(LayerTable, GradientsMatchFiniteDifferences) {
  const LayerCase& c = GetParam();
  Generator gen(2);
  std::unique_ptr<Module> layer = c.make(c.args, DType::F64, gen);
  for (auto& p : layer->parameters()) p.value() = init::uniform(p.shape(), -1, 1, gen, DType::F64);
  const Tensor ei = awkwardGraph();
  Variable x(init::uniform({6, c.args["in_channels"].get<int64_t>()}, -1, 1, gen, DType::F64), true);
  std::vector<std::pair<std::string, Variable>> inputs = {{"x", x}};
  Variable e;
  if (c.edgeDim > 0) {
    e = Variable(init::uniform({ei.dim(1), c.edgeDim}, -1, 1, gen, DType::F64), true);
    inputs.emplace_back("edge_attr", e);
  }
  std::vector<std::pair<std::string, Variable>> read;
  for (auto& v : withInputs(*layer, inputs))
    if (std::find(c.unreadParameters.begin(), c.unreadParameters.end(), v.first) == c.unreadParameters.end())
      read.push_back(v);
  expectParameterGradientsMatch(read, [&] { return projected(c.forward(*layer, x, ei, e)); }, /*top=*/1 << 20,
                                /*random=*/0);
  for (auto& [name, p] : layer->namedParameters())
    if (std::find(c.unreadParameters.begin(), c.unreadParameters.end(), name) != c.unreadParameters.end()) {
      EXPECT_FALSE(p.hasGrad()) << name << " is listed as unread but has a gradient";
    }
}

/// Float features of a batch's rows (nodes or edges) from their integer features (`width` of them per row);
/// padding rows get 1e3, which must not leak.
Tensor featuresOf(const Tensor& ints, int64_t width, int64_t channels, int64_t realRows) {
  const int64_t rows = ints.dim(0);
  Tensor x({rows, channels});
  const int64_t* ix = ints.data<int64_t>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < channels; ++k)
      x.data<float>()[i * channels + k] =
          i < realRows ? 0.25f * static_cast<float>(ix[i * width + k % width] + 1) * (k % 2 ? -1.0f : 1.0f) : 1e3f;
  return x;
}

/// The edge features a case reads for a batch (undefined for a layer without edge features).
Variable edgeFeaturesOf(const LayerCase& c, const Batch& b, int64_t realEdges) {
  if (c.edgeDim == 0) return Variable();
  return Variable(featuresOf(b.edgeAttr, b.edgeAttr.dim(1), c.edgeDim, realEdges));
}

// Real graphs' rows are the same bits padded (PadToMax with room to spare, StreamPack) as concatenated alone,
// and so are the parameter gradients of a loss over real rows, within rounding.
TEST_P(LayerTable, PaddingDoesNotChangeRealRows) {
  const LayerCase& c = GetParam();
  auto ds = test::randomDataset(40, 7, 1, 12);
  FixedSizeOptions pad = FixedSizeOptions::fromDataset(*ds, 6);
  pad.numNodes += 23;
  pad.numEdges += 31;
  const int64_t in = c.args["in_channels"];
  for (auto [strategy, fixed] : {std::pair{PackingStrategy::PadToMax, pad},
                                 std::pair{PackingStrategy::StreamPack, FixedSizeOptions{80, 160, 8}}}) {
    FixedSizeDataLoader::Options lo;
    lo.strategy = strategy;
    lo.seed = 3;
    FixedSizeDataLoader loader(ds, fixed, lo);
    loader.startEpoch(0);
    for (Batch b; loader.next(b);) {
      std::vector<Graph> graphs;
      for (int64_t idx : b.graphIndex) graphs.push_back(ds->get(static_cast<size_t>(idx)));
      std::vector<const Graph*> ptrs;
      for (const Graph& g : graphs) ptrs.push_back(&g);
      const Batch u = FixedSizeCollator::concatenate(ptrs, b.graphIndex);
      Generator gen(5);
      std::unique_ptr<Module> padded = c.make(c.args, DType::F32, gen);
      Generator gen2(5);
      std::unique_ptr<Module> plain = c.make(c.args, DType::F32, gen2);
      Variable yp = c.forward(*padded, Variable(featuresOf(b.x, 3, in, b.numRealNodes)), b.edgeIndex,
                              edgeFeaturesOf(c, b, b.numRealEdges));
      Variable yu = c.forward(*plain, Variable(featuresOf(u.x, 3, in, u.numNodes)), u.edgeIndex,
                              edgeFeaturesOf(c, u, u.numEdges));
      ASSERT_EQ(u.numNodes, b.numRealNodes);
      EXPECT_TRUE(yp.value().slice(0, u.numNodes).bitEqual(yu.value())) << packingStrategyName(strategy);
      if (padded->parameters().empty()) continue;  // APPNP: nothing to train
      Tensor mask = Tensor::zeros(yp.shape());
      for (int64_t i = 0; i < u.numNodes * yp.dim(1); ++i) mask.data<float>()[i] = 1;
      sum(mul(yp, Variable(mask))).backward();
      sum(yu).backward();
      auto pp = padded->parameters(), pu = plain->parameters();
      for (size_t k = 0; k < pp.size(); ++k) EXPECT_LE(relativeError(pp[k].grad(), pu[k].grad()), 1e-6);
    }
  }
}

// A graph large enough for every parallel loop to split: forward and backward give the same bits on 1 and 2
// threads.
TEST_P(LayerTable, SameBitsOnOneAndTwoThreads) {
  const LayerCase& c = GetParam();
  json args = c.args;
  args["in_channels"] = 48;
  if (args.contains("out_channels")) args["out_channels"] = 40;
  Generator g(9);
  const int64_t N = 6000, E = 60000;
  std::vector<int64_t> ei(2 * E);
  for (int64_t e = 0; e < E; ++e) {
    ei[e] = static_cast<int64_t>(g.nextBelow(N));
    ei[E + e] = static_cast<int64_t>(g.nextBelow(N));
  }
  const Tensor edgeIndex = Tensor::fromVector(ei, {2, E});
  const Tensor x0 = init::uniform({N, 48}, -1, 1, g);
  const Tensor e0 = c.edgeDim > 0 ? init::uniform({E, c.edgeDim}, -1, 1, g) : Tensor();
  std::vector<Tensor> runs;
  const int before = numThreads();
  for (int threads : {1, 2}) {
    setNumThreads(threads);
    Generator gen(4);
    std::unique_ptr<Module> layer = c.make(args, DType::F32, gen);
    Variable x(x0.clone(), true);
    Variable e;
    if (c.edgeDim > 0) e = Variable(e0.clone(), true);
    Variable y = c.forward(*layer, x, edgeIndex, e);
    sum(mul(y, y)).backward();
    runs.push_back(y.value());
    runs.push_back(x.grad());
    if (e.defined()) runs.push_back(e.grad());
    for (auto& p : layer->parameters()) runs.push_back(p.grad());
  }
  setNumThreads(before);
  const size_t half = runs.size() / 2;
  for (size_t k = 0; k < half; ++k) EXPECT_TRUE(runs[k].bitEqual(runs[half + k])) << "tensor " << k;
}

// Every op the layer records names itself and declares its bytes, and the FLOPs add up to at least the
// layer's products (2 N in out for its linear map), forward and backward.
TEST_P(LayerTable, DeclaresFlopsAndBytes) {
  const LayerCase& c = GetParam();
  struct Tally : OpObserver {
    void onOp(const OpEvent& e) override {
      (e.pass == Pass::Forward ? forwardFlops : backwardFlops) += e.flops;
      if (e.pass == Pass::Forward) {
        ++forwardOps;
        EXPECT_NE(std::string(e.info->name), "op") << "an op without a name";
        // (reshape is a view: no bytes move.)
        if (std::string(e.info->name) != "reshape") {
          EXPECT_GT(e.bytes, 0) << e.info->name << " declares no bytes";
        }
      }
    }
    int64_t forwardFlops = 0, backwardFlops = 0, forwardOps = 0;
  } tally;
  Generator gen(6);
  std::unique_ptr<Module> layer = c.make(c.args, DType::F32, gen);
  const int64_t in = c.args["in_channels"], out = c.args.value("out_channels", in), N = 6;
  Variable x(init::uniform({N, in}, -1, 1, gen), true);
  {
    ObserverScope watch(tally);
    const Tensor ei = awkwardGraph();
    Variable e;
    if (c.edgeDim > 0) e = Variable(init::uniform({ei.dim(1), c.edgeDim}, -1, 1, gen), true);
    Variable y = c.forward(*layer, x, ei, e);
    sum(y).backward();
  }
  EXPECT_GT(tally.forwardOps, 0);
  EXPECT_GE(tally.forwardFlops, 2 * N * in * out);
  EXPECT_GE(tally.backwardFlops, 2 * N * in * out);
}

INSTANTIATE_TEST_SUITE_P(Layers, LayerTable, ::testing::ValuesIn(layerCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace gnn::testing
