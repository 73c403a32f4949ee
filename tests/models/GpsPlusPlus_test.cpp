// GPS++ and its parts: the interaction network against a by-hand loop over edges (which end sends and which
// receives), float64 gradients against finite differences (the interaction network, a layer and a tiny model,
// in training with every dropout on), real graphs bit-identical however the batch is padded, the same bits for 1
// and 2 threads, the 44M configuration's weights, clones, and a training smoke test.
#include "models/GpsPlusPlus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "../gnn/CloneCheck.h"
#include "../gnn/ParameterGradCheck.h"
#include "BlockModelChecks.h"
#include "GraphormerMolecules.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

GpsOptions tiny(DType dt, int64_t layers = 2) {
  GpsOptions o;
  o.layers = layers;
  o.nodeDim = 8;
  o.edgeDim = 6;
  o.globalDim = 4;
  o.expansion = 2;
  o.ffn = 10;
  o.heads = 2;
  o.dtype = dt;
  return o;
}

std::vector<Graph> smallMolecules() {
  std::vector<Graph> out;
  float y = 1;
  for (const char* s : {"CCO", "c1ccccc1", "CC(=O)O", "C1CC1N", "OCC#N", "CC=CO", "C1=CCC1", "CC(C)(C)Cl"})
    out.push_back(test::encoded(test::featurized(s, y += 0.5f)));
  return out;
}

Variable randomRows(int64_t rows, int64_t cols, Generator& gen, bool grad = true) {
  return Variable(init::normal({rows, cols}, 1.0, gen, DType::F64), grad);
}

Tensor rowOf(const Tensor& t, int64_t r) {
  const int64_t c = t.dim(1);
  Tensor out({1, c}, t.dtype());
  std::memcpy(out.raw(), static_cast<const char*>(t.raw()) + r * c * dtypeSize(t.dtype()), c * dtypeSize(t.dtype()));
  return out;
}

TEST(InteractionNetwork, MatchesALoopOverEdges) {
  // Evaluation (no dropout): every node's update from its incoming edges with their senders and its outgoing
  // edges with their receivers, computed one edge and one node at a time with the network's own MLPs.
  Generator gen(1);
  InteractionNetwork net(5, 3, 2, 2, gen, {}, true, DType::F64);
  const Batch b = test::batchOf(smallMolecules(), 8);
  const Variable x = randomRows(b.numNodes, 5, gen, false), e = randomRows(b.numEdges, 3, gen, false),
                 g = randomRows(b.numGraphs, 2, gen, false);
  NoGradGuard ng;
  const InteractionNetwork::Output out = net.forward(x, e, g, b, false);
  const auto params = net.namedParameters();
  auto mlp = [&](const std::string& which, const Tensor& in) {
    auto p = [&](const std::string& n) {
      for (const auto& [name, v] : params)
        if (name == which + "." + n) return v;
      ADD_FAILURE() << "no parameter " << which << "." << n;
      return Variable();
    };
    Variable h = linear(Variable(in), p("dense1.weight"), p("dense1.bias"));
    h = gelu(layerNorm(h, p("norm1.weight"), p("norm1.bias")));
    return linear(h, p("dense2.weight"), p("dense2.bias")).value();
  };
  const int64_t* src = b.edgeIndex.data<int64_t>();
  const int64_t* dst = src + b.numEdges;
  const Tensor edgeGraph = ptrToSortedIndex(b.edgePtr);
  std::vector<Tensor> eNew;
  for (int64_t k = 0; k < b.numEdges; ++k) {
    Tensor in = concatCols({Variable(rowOf(x.value(), dst[k])), Variable(rowOf(x.value(), src[k])),
                            Variable(rowOf(e.value(), k)), Variable(rowOf(g.value(), edgeGraph.data<int64_t>()[k]))})
                    .value();
    eNew.push_back(mlp("edge", in));
    for (int64_t c = 0; c < 3; ++c)
      EXPECT_NEAR(out.edges.value().at(k * 3 + c), e.value().at(k * 3 + c) + eNew.back().at(c), 1e-12);
  }
  for (int64_t i = 0; i < b.numNodes; ++i) {
    std::vector<double> in(2 * (3 + 5), 0.0);
    for (int64_t k = 0; k < b.numEdges; ++k) {
      if (dst[k] == i) {  // incoming: [e' | x_sender] into the first half
        for (int64_t c = 0; c < 3; ++c) in[c] += eNew[k].at(c);
        for (int64_t c = 0; c < 5; ++c) in[3 + c] += x.value().at(src[k] * 5 + c);
      }
      if (src[k] == i) {  // outgoing: [e' | x_receiver] into the second
        for (int64_t c = 0; c < 3; ++c) in[8 + c] += eNew[k].at(c);
        for (int64_t c = 0; c < 5; ++c) in[11 + c] += x.value().at(dst[k] * 5 + c);
      }
    }
    Tensor agg = Tensor::fromVector(in, {1, 16}).to(DType::F64);
    const int64_t graph = b.batch.data<int64_t>()[i];
    Tensor nIn = concatCols({Variable(agg), Variable(rowOf(x.value(), i)), Variable(rowOf(g.value(), graph))}).value();
    const Tensor n = mlp("node", nIn);
    for (int64_t c = 0; c < 5; ++c)
      EXPECT_NEAR(out.nodes.value().at(i * 5 + c), x.value().at(i * 5 + c) + n.at(c), 1e-11) << "node " << i;
  }
  // Globals: [g | the graph's sum of node updates | of edge updates] through the global MLP, added to g.
  const Variable nUpd = sub(out.nodes, x), eUpd = sub(out.edges, e);
  const Tensor gIn = concatCols({g, segmentSum(nUpd, b.ptr), segmentSum(eUpd, b.edgePtr)}).value();
  for (int64_t k = 0; k < b.numGraphs; ++k) {
    const Tensor want = mlp("global", rowOf(gIn, k));
    for (int64_t c = 0; c < 2; ++c)
      EXPECT_NEAR(out.globals.value().at(k * 2 + c), g.value().at(k * 2 + c) + want.at(c), 1e-10) << "graph " << k;
  }
}

TEST(GpsGradCheck, InteractionNetwork) {
  Generator gen(2);
  InteractionNetwork net(5, 3, 2, 2, gen, {0.2, 0.1, 0.3}, true, DType::F64);
  const Batch b = test::batchOf(smallMolecules(), 8);
  const Variable x = randomRows(b.numNodes, 5, gen), e = randomRows(b.numEdges, 3, gen),
                 g = randomRows(b.numGraphs, 2, gen);
  testing::expectParameterGradientsMatch(testing::withInputs(net, {{"x", x}, {"e", e}, {"g", g}}), [&] {
    ExecutionContext::current().setRandomKey({9, 4, 0});
    const InteractionNetwork::Output o = net.forward(x, e, g, b, true);
    return add(add(testing::projected(o.nodes, 1), testing::projected(o.edges, 2)), testing::projected(o.globals, 3));
  });
}

TEST(GpsGradCheck, Layer) {
  Generator gen(3);
  GpsOptions o = tiny(DType::F64, 3);
  o.nodeDropout = 0.2;
  o.edgeDropout = 0.1;
  o.globalDropout = 0.25;
  o.attentionDropout = 0.3;
  o.graphDropout = 0.4;
  GpsLayer layer(o, 1, gen);  // the middle layer: stochastic depth 0.2, globals updated
  layer.train();
  const Batch b = test::batchOf(smallMolecules(), 8, 2);
  const Variable x = randomRows(b.numNodes, 8, gen), e = randomRows(b.numEdges, 6, gen),
                 g = randomRows(b.numGraphs, 4, gen);
  Variable bias(init::normal({b.numGraphs, 2, 8, 8}, 1.0, gen, DType::F64), true);
  const Tensor mask = GpsPlusPlus::keyMask(b);
  testing::expectParameterGradientsMatch(
      testing::withInputs(layer, {{"x", x}, {"e", e}, {"g", g}, {"bias", bias}}), [&] {
        ExecutionContext::current().setRandomKey({9, 5, 0});
        const GpsLayer::State s = layer.forward({x, e, g}, b, bias, mask, true);
        return add(add(testing::projected(s.nodes, 1), testing::projected(s.edges, 2)),
                   testing::projected(s.globals, 3));
      });
}

TEST(GpsGradCheck, TinyModel) {
  Generator gen(4);
  GpsOptions o = tiny(DType::F64);
  GpsPlusPlus model(o, gen);
  model.train();
  const Batch b = test::batchOf(smallMolecules(), 8, 2);
  testing::expectParameterGradientsMatch(model.namedParameters(), [&] {
    ExecutionContext::current().setRandomKey({9, 6, 0});
    return mseLoss(model.forward(b), b.y.to(DType::F64), b.yMask);
  });
}

TEST(GpsPlusPlus, RealGraphsAreBitIdenticalWithAnyPadding) {
  const std::vector<Graph> graphs = test::pcqmStyle(12);
  for (DType dt : {DType::F32, DType::F64}) {
    Generator gen(5);
    GpsOptions o = GpsOptions::pcqm4mv2();
    o.layers = 3;
    o.nodeDim = 64;
    o.edgeDim = 32;
    o.globalDim = 16;
    o.ffn = 128;
    o.heads = 8;
    o.dtype = dt;
    GpsPlusPlus model(o, gen);
    testing::expectRealGraphsBitIdenticalWithAnyPadding(model, graphs, dtypeName(dt));
  }
}

TEST(GpsPlusPlus, GraphEmbeddingsAreTheDecodersInputWithoutPadding) {
  Generator gen(11);
  GpsPlusPlus model(tiny(DType::F64, 2), gen);
  model.eval();
  const std::vector<Graph> graphs = smallMolecules();
  const Batch a = test::batchOf(graphs, 8), b = test::batchOf(graphs, 8, 3, 9);
  const Tensor ea = model.graphEmbeddings(a).value(), eb = model.graphEmbeddings(b).value();
  ASSERT_EQ(ea.shape(), Shape({a.numGraphs, 8}));
  EXPECT_TRUE(testing::sameRows(ea, eb, static_cast<int64_t>(graphs.size())));
  for (int64_t r = static_cast<int64_t>(graphs.size()); r < eb.rows(); ++r)
    for (int64_t c = 0; c < 8; ++c) EXPECT_EQ(eb.at(r * 8 + c), 0.0);
  // The sum of each real graph's node rows after the last layer (the state the head block reads).
  const Variable h = model.runBlocks(BlockState(), a, 0, model.blockIndex("head")).get("h");
  const int64_t* ptr = a.ptr.data<int64_t>();
  for (int64_t g = 0; g < static_cast<int64_t>(graphs.size()); ++g)
    for (int64_t c = 0; c < 8; ++c) {
      double sum = 0;
      for (int64_t i = ptr[g]; i < ptr[g + 1]; ++i) sum += h.value().at(i * 8 + c);
      EXPECT_NEAR(ea.at(g * 8 + c), sum, 1e-12);
    }
}

TEST(GpsPlusPlus, OneAndTwoThreadsGiveTheSameBits) {
  const std::vector<Graph> graphs = test::pcqmStyle(16);
  Generator gen(6);
  GpsOptions o = GpsOptions::pcqm4mv2();
  o.layers = 2;
  GpsPlusPlus model(o, gen);
  testing::expectOneAndTwoThreadsGiveTheSameBits(model, test::batchOf(graphs, 30));
}

TEST(GpsPlusPlus, The44MConfigurationAndItsBlocks) {
  Generator gen(7);
  const GpsOptions o = GpsOptions::pcqm4mv2();
  GpsPlusPlus model(o, gen);
  EXPECT_EQ(model.numParameters(), o.parameterCount());
  // GPS_PCQ_16gps_44M: "44M" parameters (its encoders of positional and 3D features, which this model does not
  // have, are a small share).
  EXPECT_GT(model.numParameters(), 43'000'000);
  EXPECT_LT(model.numParameters(), 45'000'000);
  ASSERT_EQ(model.numBlocks(), 18u);
  EXPECT_EQ(model.blockNames().front(), "input");
  EXPECT_EQ(model.blockNames()[16], "layers/15");
  EXPECT_EQ(model.blockNames().back(), "head");
  // The last layer has no global MLP (its globals reach nothing).
  for (const auto& [name, v] : model.namedParameters()) EXPECT_EQ(name.find("layers.15.mpnn.global"), std::string::npos);
  GpsOptions bad = tiny(DType::F32);
  bad.heads = 3;
  EXPECT_THROW(GpsPlusPlus(bad, gen), std::invalid_argument);
}

TEST(GpsPlusPlus, ClonesAreDeepCopiesWithTheSameOutputs) {
  Generator gen(8);
  GpsPlusPlus model(tiny(DType::F32, 3), gen);
  model.eval();
  std::unique_ptr<GpsPlusPlus> copy = cloneModule(model);
  testing::expectDeepCopy(model, *copy);
  const Batch b = test::batchOf(smallMolecules(), 8);
  EXPECT_TRUE(model.forward(b).value().bitEqual(copy->forward(b).value()));
}

TEST(GpsPlusPlus, ErrorsNameTheMissingEncodings) {
  Generator gen(9);
  GpsPlusPlus model(tiny(DType::F32), gen);
  Batch b = test::batchOf(smallMolecules(), 8);
  b.spatialPos = Tensor();
  try {
    model.forward(b);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--graphormer-max-dist"), std::string::npos) << e.what();
  }
}

TEST(GpsPlusPlus, TrainingLossFallsOnPcqmStyleMolecules) {
  const std::vector<Graph> graphs = test::pcqmStyle(32);
  Generator gen(10);
  GpsOptions o = tiny(DType::F32, 2);
  o.nodeDim = 32;
  o.edgeDim = 16;
  o.globalDim = 8;
  o.ffn = 64;
  o.heads = 4;
  o.nodeDropout = o.globalDropout = o.attentionDropout = o.graphDropout = 0.05;
  GpsPlusPlus model(o, gen);
  model.train();
  Adam opt({ParamGroup{model.parameters()}}, 3e-3);
  const Batch b = test::batchOf(graphs, 30);
  double first = 0, last = 0;
  for (int step = 0; step < 80; ++step) {
    ExecutionContext::current().setRandomKey({1, static_cast<uint64_t>(step), 0});
    opt.zeroGrad();
    Variable loss = l1Loss(model.forward(b), b.y, b.yMask);
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.value().item();
  }
  EXPECT_LT(last, 0.4 * first) << "first " << first << " last " << last;
}

}  // namespace
}  // namespace gnn
