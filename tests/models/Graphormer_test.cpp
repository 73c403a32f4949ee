// Graphormer and its layers: float64 gradients against finite differences (each layer and a tiny model, in
// training mode with every dropout on), outputs bit-identical for real graphs however the batch is padded,
// invariance to renumbering a molecule's atoms, clone and blocks, the configurations, and a training smoke
// test on the shipped PCQM4Mv2-style molecules.
#include "models/Graphormer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "../gnn/CloneCheck.h"
#include "../gnn/ParameterGradCheck.h"
#include "BlockModelChecks.h"
#include "GraphormerMolecules.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/pool/GlobalPooling.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn {
namespace {

// Small molecules (at most 8 atoms), encoded with multi_hop_max_dist 5.
std::vector<Graph> smallMolecules() {
  std::vector<Graph> out;
  float y = 1;
  for (const char* s : {"CCO", "c1ccccc1", "CC(=O)O", "C1CC1N", "OCC#N", "CC=CO", "C1=CCC1", "CC(C)(C)Cl"})
    out.push_back(test::encoded(test::featurized(s, y += 0.5f)));
  return out;
}

GraphormerOptions tiny(DType dt, int64_t maxNodes = 8) {
  GraphormerOptions o;
  o.layers = 2;
  o.hidden = 8;
  o.heads = 2;
  o.ffn = 12;
  o.maxNodes = maxNodes;
  o.multiHopMaxDist = 3;
  o.dropout = 0.1;
  o.attentionDropout = 0.2;
  o.activationDropout = 0.15;
  o.dtype = dt;
  return o;
}

TEST(GraphormerGradCheck, CentralityEncoding) {
  Generator gen(1);
  CentralityEncoding enc(4, gen, DType::F64);
  Batch b = test::batchOf(smallMolecules(), 8);
  testing::expectParameterGradientsMatch(
      enc.namedParameters(), [&] { return testing::projected(enc.forward(b.x, b.inDegree, b.nodesMask)); },
      12, 4);
}

TEST(GraphormerGradCheck, SpatialAndEdgeEncoding) {
  Generator gen(2);
  SpatialEncoding spatial(3, gen, DType::F64);
  EdgeEncoding edges(3, 3, gen, DType::F64);
  Batch b = test::batchOf(smallMolecules(), 8);
  testing::expectParameterGradientsMatch(
      spatial.namedParameters(), [&] { return testing::projected(spatial.forward(b.spatialPos)); }, 12, 4);
  testing::expectParameterGradientsMatch(
      edges.namedParameters(), [&] { return testing::projected(edges.forward(b.edgeInput, b.spatialPos)); }, 12, 4);
  // The padding row of the spatial table gets no gradient: only entries of masked keys, or of the queries of
  // padding slots, whose outputs reach nothing, read it.
  spatial.zeroGrad();
  Variable bias = graphAttentionBias(spatial.forward(b.spatialPos), Variable(Tensor::zeros({3}, DType::F64)));
  Tensor mask = Graphormer::keyMask(b, 8);
  Generator g2(3);
  Variable qkv(init::normal({b.numGraphs, 9, 18}, 1.0, g2, DType::F64));
  Variable out = reshape(multiHeadAttention(qkv, 3, bias, mask), {b.numGraphs * 9, 6});
  Tensor realRows({b.numGraphs * 9, 1}, DType::F64);
  for (int64_t r = 0; r < realRows.numel(); ++r) realRows.data<double>()[r] = mask.data<uint8_t>()[r];
  sum(mul(out, Variable(realRows))).backward();
  for (int64_t h = 0; h < 3; ++h) EXPECT_EQ(spatial.table().grad().at(h), 0.0);
  EXPECT_NE(spatial.table().grad().at(3), 0.0);  // distance 0 (the diagonal) does get one
}

TEST(GraphormerGradCheck, MultiheadSelfAttention) {
  Generator gen(3);
  MultiheadSelfAttention attn(6, 2, gen, 0.25, DType::F64);
  Batch b = test::batchOf(smallMolecules(), 8);
  const int64_t G = b.numGraphs, T = 9;
  Variable x(init::normal({G * T, 6}, 1.0, gen, DType::F64), true);
  Variable bias(init::normal({G, 2, T, T}, 1.0, gen, DType::F64), true);
  Tensor mask = Graphormer::keyMask(b, 8);
  testing::expectParameterGradientsMatch(testing::withInputs(attn, {{"x", x}, {"bias", bias}}), [&] {
    ExecutionContext::current().setRandomKey({9, 1, 0});
    return testing::projected(attn.forward(x, G, bias, mask));
  });
  // Packed rows: the rows the mask keeps.
  const Tensor rows = Graphormer::packedRowPtr(mask);
  Variable xp(init::normal({rows.data<int64_t>()[G], 6}, 1.0, gen, DType::F64), true);
  testing::expectParameterGradientsMatch(testing::withInputs(attn, {{"x", xp}, {"bias", bias}}), [&] {
    ExecutionContext::current().setRandomKey({9, 1, 1});
    return testing::projected(attn.forwardPacked(xp, rows, T, bias));
  });
}

TEST(GraphormerGradCheck, GraphormerLayer) {
  Generator gen(4);
  GraphormerLayer layer(6, 2, 10, 0.1, 0.2, 0.15, gen, DType::F64);
  Batch b = test::batchOf(smallMolecules(), 8);
  const int64_t G = b.numGraphs, T = 9;
  Variable x(init::normal({G * T, 6}, 1.0, gen, DType::F64), true);
  Variable bias(init::normal({G, 2, T, T}, 1.0, gen, DType::F64), true);
  Tensor mask = Graphormer::keyMask(b, 8);
  testing::expectParameterGradientsMatch(testing::withInputs(layer, {{"x", x}, {"bias", bias}}), [&] {
    ExecutionContext::current().setRandomKey({9, 2, 0});
    return testing::projected(layer.forward(x, G, bias, mask));
  });
  const Tensor rows = Graphormer::packedRowPtr(mask);
  Variable xp(init::normal({rows.data<int64_t>()[G], 6}, 1.0, gen, DType::F64), true);
  testing::expectParameterGradientsMatch(testing::withInputs(layer, {{"x", xp}, {"bias", bias}}), [&] {
    ExecutionContext::current().setRandomKey({9, 2, 1});
    return testing::projected(layer.forwardPacked(xp, rows, T, bias));
  });
}

TEST(GraphormerGradCheck, TinyGraphormer) {
  for (bool packed : {true, false}) {
    Generator gen(5);
    GraphormerOptions o = tiny(DType::F64);
    o.packedRows = packed;
    Graphormer model(o, gen);
    model.train();
    Batch b = test::batchOf(smallMolecules(), 8, 2);
    testing::expectParameterGradientsMatch(model.namedParameters(), [&] {
      ExecutionContext::current().setRandomKey({9, 3, 0});
      return mseLoss(model.forward(b), b.y.to(DType::F64), b.yMask);
    });
  }
}

// ---- padding ----

TEST(Graphormer, RealGraphsAreBitIdenticalWithAnyPadding) {
  const std::vector<Graph> graphs = test::pcqmStyle(18);
  for (bool packed : {true, false})
    for (DType dt : {DType::F32, DType::F64}) {
      Generator gen(6);
      GraphormerOptions o = GraphormerOptions::slim();
      o.layers = 3;
      o.dtype = dt;
      o.packedRows = packed;
      Graphormer model(o, gen);
      testing::expectRealGraphsBitIdenticalWithAnyPadding(
          model, graphs, std::string(dtypeName(dt)) + (packed ? " packed" : " dense"));
    }
}

// Packed rows compute what the [G·T] blocks compute for the rows they keep: the same bits in evaluation, and
// in training without dropout (forward); gradients agree to rounding (weight gradients sum other row counts).
TEST(Graphormer, PackedRowsGiveTheDenseBlocksResults) {
  const std::vector<Graph> graphs = test::pcqmStyle(12);
  for (DType dt : {DType::F32, DType::F64}) {
    GraphormerOptions o = GraphormerOptions::slim();
    o.layers = 3;
    o.dtype = dt;
    o.attentionDropout = o.activationDropout = 0;
    Generator gen(8);
    Graphormer packed(o, gen);
    std::unique_ptr<Graphormer> dense = cloneModule(packed);
    dense->setPackedRows(false);
    const Batch b = test::batchOf(graphs, 30, 2, 9);
    for (bool training : {false, true}) {
      packed.train(training);
      dense->train(training);
      packed.zeroGrad();
      dense->zeroGrad();
      Variable lp = l1Loss(packed.forward(b), b.y.to(dt), b.yMask),
               ld = l1Loss(dense->forward(b), b.y.to(dt), b.yMask);
      EXPECT_EQ(lp.value().at(0), ld.value().at(0)) << dtypeName(dt) << (training ? " training" : " eval");
      EXPECT_TRUE(testing::sameRows(packed.graphEmbeddings(b).value(), dense->graphEmbeddings(b).value(),
                                    b.numGraphs));
      if (!training) continue;
      lp.backward();
      ld.backward();
      const auto names = packed.namedParameters();
      const std::vector<Variable> pd = dense->parameters();
      for (size_t i = 0; i < names.size(); ++i) {
        const Tensor &a = names[i].second.grad(), &c = pd[i].grad();
        double diff = 0, scale = 0;
        for (int64_t j = 0; j < a.numel(); ++j) {
          diff = std::max(diff, std::abs(a.at(j) - c.at(j)));
          scale = std::max(scale, std::abs(c.at(j)));
        }
        EXPECT_LE(diff, (dt == DType::F32 ? 1e-5 : 1e-12) * std::max(scale, 1e-30)) << names[i].first;
      }
    }
  }
}

TEST(Graphormer, ParameterGradientsDoNotDependOnPadding) {
  const std::vector<Graph> graphs = test::pcqmStyle(6);
  Generator gen(7);
  GraphormerOptions o = tiny(DType::F32, 30);
  Graphormer model(o, gen);
  auto grads = [&](const Batch& b) {
    model.zeroGrad();
    ExecutionContext::current().setRandomKey({3, 8, 0});
    l1Loss(model.forward(b), b.y, b.yMask).backward();
    std::vector<Tensor> out;
    for (const auto& p : model.parameters()) out.push_back(p.grad().clone());
    return out;
  };
  std::vector<Tensor> a = grads(test::batchOf(graphs, 30)), b = grads(test::batchOf(graphs, 30, 6, 20));
  const auto names = model.namedParameters();
  for (size_t i = 0; i < a.size(); ++i) {
    double diff = 0, scale = 0;
    for (int64_t j = 0; j < a[i].numel(); ++j) {
      diff = std::max(diff, std::abs(a[i].at(j) - b[i].at(j)));
      scale = std::max(scale, std::abs(a[i].at(j)));
    }
    EXPECT_LE(diff, 1e-6 * std::max(scale, 1e-12)) << names[i].first;
  }
}

// ---- node permutation ----

TEST(Graphormer, OutputDoesNotDependOnAtomOrder) {
  // Molecules whose shortest paths are unique or tie only between paths of equal bond features: then the
  // encodings of the renumbered molecule are the renumbered encodings (checked below). Graphormer breaks ties
  // between paths of different bonds by atom order (algos.pyx), and so do the encodings, so a molecule such
  // as cyclobutene would not be invariant there, in Graphormer either.
  const std::vector<std::string> smiles{"CC(=O)OC(CC(=O)[O-])C[N+](C)(C)C",
                                        "c1ccc2ccccc2c1",
                                        "CC(C)Cc1ccc(cc1)C(C)C(=O)O",
                                        "OC1CCCCC1N",
                                        "c1ccncc1CCN",
                                        "COc1ccc(cc1)C#N"};
  Generator gen(8);
  GraphormerOptions o = GraphormerOptions::slim();
  o.layers = 4;
  Graphormer model(o, gen);
  model.eval();
  for (const std::string& s : smiles) {
    MoleculeGraph g = test::featurized(s);
    const Graph original = test::encoded(g);
    for (uint64_t seed : {1, 2, 3}) {
      std::vector<int64_t> perm(static_cast<size_t>(g.numNodes));
      for (int64_t i = 0; i < g.numNodes; ++i) perm[i] = i;
      Generator pg(seed);
      for (int64_t i = g.numNodes - 1; i > 0; --i)
        std::swap(perm[i], perm[static_cast<int64_t>(pg.nextBelow(static_cast<uint64_t>(i + 1)))]);
      const Graph renumbered = test::encoded(test::permuted(g, perm));
      // The precondition: distances, degrees and path features are the renumbered originals.
      const int64_t n = g.numNodes, hops = original.edgeInput.numel() / (n * n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(renumbered.inDegree.at(perm[i]), original.inDegree.at(i));
        for (int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(renumbered.spatialPos.at(perm[i] * n + perm[j]), original.spatialPos.at(i * n + j));
          for (int64_t h = 0; h < hops; ++h)
            ASSERT_EQ(renumbered.edgeInput.at((perm[i] * n + perm[j]) * hops + h),
                      original.edgeInput.at((i * n + j) * hops + h))
                << s << " pair " << i << ", " << j;
        }
      }
      const double a = model.forward(test::batchOf({original}, 30)).value().at(0);
      const double b = model.forward(test::batchOf({renumbered}, 30)).value().at(0);
      EXPECT_LE(std::abs(a - b), 1e-5 * std::abs(a))
          << s << " permutation " << seed << ": " << a << " vs " << b;
    }
  }
}

// ---- structure ----

TEST(Graphormer, BlocksCloneAndConfigurations) {
  Generator gen(9);
  Graphormer model(tiny(DType::F32), gen);
  std::vector<std::string> names{"input", "layers/0", "layers/1", "head"};
  EXPECT_EQ(model.blockNames(), names);
  Batch b = test::batchOf(smallMolecules(), 8, 2);
  model.eval();
  for (bool packed : {true, false}) {
    model.setPackedRows(packed);
    const Tensor whole = model.forward(b).value();
    BlockState s = model.runBlocks({}, b, 0, 2);  // a pipeline stage boundary after layers/0
    EXPECT_TRUE(s.has("h") && s.has("bias") && s.has(packed ? "rows" : "mask") &&
                !s.has(packed ? "mask" : "rows"));
    const BlockState end = model.runBlocks(s, b, 2, model.numBlocks());
    EXPECT_EQ(end.names(), std::vector<std::string>{"out"});  // the head hands on its output alone
    const Tensor staged = end.get("out").value();
    EXPECT_TRUE(testing::sameRows(staged, whole, whole.rows()));
    std::unique_ptr<Graphormer> copy = cloneModule(model);
    EXPECT_EQ(copy->options().packedRows, packed);
    EXPECT_TRUE(testing::sameRows(copy->forward(b).value(), whole, whole.rows()));
    EXPECT_EQ(copy->numParameters(), model.numParameters());
  }

  const GraphormerOptions slim = GraphormerOptions::named("slim"), base = GraphormerOptions::named("base");
  EXPECT_EQ(slim.layers, 12);
  EXPECT_EQ(slim.hidden, 80);
  EXPECT_EQ(slim.heads, 8);
  EXPECT_EQ(slim.ffn, 80);
  EXPECT_EQ(base.layers, 12);
  EXPECT_EQ(base.hidden, 768);
  EXPECT_EQ(base.heads, 32);
  EXPECT_EQ(base.ffn, 768);
  EXPECT_THROW(GraphormerOptions::named("large"), std::invalid_argument);
}

TEST(Graphormer, ClonesAreDeepCopies) {
  Generator gen(17);
  CentralityEncoding centrality(8, gen);
  SpatialEncoding spatial(2, gen);
  EdgeEncoding edges(2, 3, gen);
  MultiheadSelfAttention attn(8, 2, gen, 0.1);
  GraphormerLayer layer(8, 2, 12, 0.1, 0.1, 0.1, gen);
  testing::expectDeepCopy(centrality, *cloneModule(centrality));
  testing::expectDeepCopy(spatial, *cloneModule(spatial));
  testing::expectDeepCopy(edges, *cloneModule(edges));
  testing::expectDeepCopy(attn, *cloneModule(attn));
  testing::expectDeepCopy(layer, *cloneModule(layer));
  Graphormer model(tiny(DType::F32), gen);
  model.eval();
  std::unique_ptr<Graphormer> copy = cloneModule(model);
  testing::expectDeepCopy(model, *copy);
  EXPECT_EQ(copy->options().hidden, model.options().hidden);
  // Training the copy leaves the original as it was.
  Batch b = test::batchOf(smallMolecules(), 8);
  const Tensor before = model.forward(b).value().clone();
  copy->train();
  Adam opt({ParamGroup{copy->parameters()}}, 1e-2);
  ExecutionContext::current().setRandomKey({1, 0, 0});
  l1Loss(copy->forward(b), b.y, b.yMask).backward();
  opt.step();
  EXPECT_TRUE(model.forward(b).value().bitEqual(before));
  copy->eval();
  EXPECT_FALSE(copy->forward(b).value().bitEqual(before));
}

TEST(Graphormer, InitialisationIsGraphormers) {
  Generator gen(10);
  Graphormer model(GraphormerOptions::slim(), gen);
  for (const auto& [name, p] : model.namedParameters()) {
    const Tensor& v = p.value();
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < v.numel(); ++i) sum += v.at(i), sq += v.at(i) * v.at(i);
    const double mean = sum / v.numel(), sd = std::sqrt(sq / v.numel() - mean * mean);
    const bool isNorm = name.find("layer_norm") != std::string::npos;
    const bool isBias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    if (isNorm || isBias) {
      EXPECT_EQ(sd, 0.0) << name;  // LayerNorm 1 / 0, Linear biases 0
    } else if (v.numel() > 500) {
      EXPECT_NEAR(sd, 0.02, 0.002) << name;  // N(0, 0.02)
    }
  }
  EXPECT_EQ(model.namedParameters()[0].first, "graph_token");
}

TEST(Graphormer, ErrorsNameTheFix) {
  Generator gen(11);
  Graphormer model(tiny(DType::F32), gen);
  Batch b = test::batchOf(smallMolecules(), 8);
  Batch wrongSide = test::batchOf(smallMolecules(), 9);
  EXPECT_THROW(model.forward(wrongSide), std::invalid_argument);  // maxNodes 8, blocks of 9
  Batch plain = b;
  plain.spatialPos = Tensor();
  try {
    model.forward(plain);
    FAIL() << "a batch without encodings was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--graphormer-max-dist"), std::string::npos) << e.what();
  }
}

TEST(Graphormer, FollowsTheBatchWhenMaxNodesIsZero) {
  // Variable-size batches (DataLoader's: blocks as large as the batch's largest graph) with maxNodes = 0: the
  // same outputs as fixed-size blocks of 8 (the same weights: maxNodes draws nothing).
  const std::vector<Graph> graphs = smallMolecules();
  GraphormerOptions o = tiny(DType::F64);
  Generator g1(15), g2(15);
  Graphormer fixed(o, g1);
  o.maxNodes = 0;
  Graphormer follow(o, g2);
  fixed.eval();
  follow.eval();
  std::vector<const Graph*> ptrs;
  for (const Graph& g : graphs) ptrs.push_back(&g);
  const Batch plain = FixedSizeCollator::concatenate(ptrs);
  ASSERT_LT(plain.maxNodesPerGraph, 8);
  const Tensor a = fixed.forward(test::batchOf(graphs, 8)).value(), b = follow.forward(plain).value();
  for (int64_t g = 0; g < static_cast<int64_t>(graphs.size()); ++g) EXPECT_NEAR(a.at(g), b.at(g), 1e-12) << g;
  EXPECT_THROW(fixed.forward(plain), std::invalid_argument);  // maxNodes 8, blocks of the largest graph
}

TEST(Graphormer, OneAndTwoThreadsGiveTheSameBits) {
  const std::vector<Graph> graphs = test::pcqmStyle(20);
  Generator gen(16);
  GraphormerOptions o = GraphormerOptions::slim();
  o.layers = 2;
  Graphormer model(o, gen);
  testing::expectOneAndTwoThreadsGiveTheSameBits(model, test::batchOf(graphs, 30));
  model.setPackedRows(false);
  testing::expectOneAndTwoThreadsGiveTheSameBits(model, test::batchOf(graphs, 30));
}

// ---- from the loader ----

TEST(Graphormer, ReadmeExampleWithTheLoadersStrategies) {
  // The README's snippet: a dataset with encodings, fixed sizes from it, blocks of max_node = 30; molecules
  // with more atoms are skipped by the loader and counted in its report.
  auto ds = std::make_shared<InMemoryDataset>(test::pcqmStyle(400, 100));
  int64_t larger = 0;
  for (const Graph& g : ds->graphs()) larger += g.numNodes > 30;
  Generator gen(14);
  GraphormerOptions opt = GraphormerOptions::slim();  // maxNodes 30, multiHopMaxDist 5
  opt.layers = 2;
  Graphormer model(opt, gen);
  model.eval();
  for (PackingStrategy strategy : {PackingStrategy::PadToMax, PackingStrategy::PlannedPack}) {
    FixedSizeOptions fixed = strategy == PackingStrategy::PadToMax ? FixedSizeOptions::fromDataset(*ds, 65)
                                                                   : FixedSizeOptions::forPacking(*ds, 64);
    fixed.maxNodesPerGraph = opt.maxNodes;
    FixedSizeDataLoader::Options lo;
    lo.strategy = strategy;
    lo.overSize = OverSizeStrategy::Skip;
    FixedSizeDataLoader loader(ds, fixed, lo);
    loader.startEpoch(0);
    int64_t graphs = 0;
    for (Batch b; loader.next(b);) {
      Variable pred = model.forward(b);  // [numGraphs, 1]; padding graphs' rows are 0
      ASSERT_EQ(pred.shape(), Shape({fixed.numGraphs, 1}));
      for (int64_t g = 0; g < b.numGraphs; ++g) {
        EXPECT_TRUE(std::isfinite(pred.value().at(g)));
        if (g >= b.numRealGraphs) {
          EXPECT_EQ(pred.value().at(g), 0.0);
        }
      }
      graphs += b.numRealGraphs;
    }
    EXPECT_EQ(loader.report().skipped, larger) << packingStrategyName(strategy);
    EXPECT_EQ(graphs + larger, static_cast<int64_t>(ds->size())) << packingStrategyName(strategy);
  }
  EXPECT_GT(larger, 0);  // the style set has molecules of up to 51 atoms
}

// ---- training ----

TEST(Graphormer, SlimTrainingLossFallsOnPcqmStyleMolecules) {
  const std::vector<Graph> graphs = test::pcqmStyle(200);
  ASSERT_EQ(graphs.size(), 200u);
  Generator gen(12);
  Graphormer model(GraphormerOptions::slim(), gen);
  model.train();
  Adam opt({ParamGroup{model.parameters()}}, 1e-3);
  std::vector<double> epochLoss;
  int64_t step = 0;
  for (int epoch = 0; epoch < 6; ++epoch) {
    double total = 0;
    int batches = 0;
    for (size_t i = 0; i + 32 <= graphs.size(); i += 32) {
      Batch b = test::batchOf(std::vector<Graph>(graphs.begin() + i, graphs.begin() + i + 32), 30);
      ExecutionContext::current().setRandomKey({1, static_cast<uint64_t>(step++), 0});
      opt.zeroGrad();
      Variable loss = l1Loss(model.forward(b), b.y, b.yMask);
      loss.backward();
      opt.step();
      total += loss.value().item();
      ++batches;
    }
    epochLoss.push_back(total / batches);
  }
  // The HOMO-LUMO gaps are about 5.6 eV and the predictions start near 0 (the head is N(0, 0.02), its bias
  // 0).
  EXPECT_GT(epochLoss.front(), 2.0);
  EXPECT_LT(epochLoss.back(), 0.6 * epochLoss.front()) << epochLoss.front() << " -> " << epochLoss.back();
  for (double l : epochLoss) EXPECT_TRUE(std::isfinite(l));
}

TEST(Graphormer, BaseRunsATrainingStep) {
  const std::vector<Graph> graphs = test::pcqmStyle(4);
  Generator gen(13);
  Graphormer model(GraphormerOptions::base(), gen);
  EXPECT_GT(model.numParameters(), 40'000'000);
  model.train();
  Adam opt({ParamGroup{model.parameters()}}, 2e-4);
  Batch b = test::batchOf(graphs, 30);
  ExecutionContext::current().setRandomKey({1, 0, 0});
  const Tensor before = model.parameters()[0].value().clone();
  Variable loss = l1Loss(model.forward(b), b.y, b.yMask);
  loss.backward();
  opt.step();
  EXPECT_TRUE(std::isfinite(loss.value().item()));
  EXPECT_NE(model.parameters()[0].value().at(0), before.at(0));
}

}  // namespace
}  // namespace gnn
