// Dmpnn (Chemprop's D-MPNN) and its parts: reverse edges for every layout, the bond message against its
// definition written as loops, OneHotLinear against nn.Linear on explicit one-hot vectors, the whole model against
// Chemprop v2's equations written as plain loops in double, finite-difference gradients (the message step, the
// one-hot layer, the whole model on small molecules), padding invariance (outputs, loss, gradients) for every
// packing, and the same bits for reruns, clones and 1 or 2 threads.
#include "models/Dmpnn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "../gnn/CloneCheck.h"
#include "../gnn/GradCheck.h"
#include "ByHand.h"
#include "Molecules.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"
#include "models/BondMessages.h"
#include "models/OneHotLinear.h"

namespace gnn {
namespace {

DmpnnOptions smallOptions(DType dt) {
  DmpnnOptions o;
  o.hidden = 6;
  o.depth = 3;
  o.ffnHidden = 5;
  o.tasks = 1;
  o.dtype = dt;
  return o;
}

Batch unpadded(const Dataset& ds, const Batch& b) {
  std::vector<Graph> graphs;
  for (int64_t idx : b.graphIndex) graphs.push_back(ds.get(static_cast<size_t>(idx)));
  std::vector<const Graph*> ptrs;
  for (const Graph& g : graphs) ptrs.push_back(&g);
  return FixedSizeCollator::concatenate(ptrs, b.graphIndex);
}

// ---- reverse edges ----

void expectReverses(const Tensor& ei, const ReverseEdges& rev, const std::string& what) {
  const int64_t E = ei.dim(1);
  const int64_t* src = ei.data<int64_t>();
  const int64_t* dst = src + E;
  for (int64_t e = 0; e < E; ++e) {
    const int64_t r = rev.index.data<int64_t>()[e];
    ASSERT_TRUE(r >= 0 && r < E) << what << " edge " << e;
    const bool has = !rev.mask.defined() || rev.mask.at(e) == 1.0;
    if (!has) continue;
    EXPECT_EQ(src[r], dst[e]) << what << " edge " << e;
    EXPECT_EQ(dst[r], src[e]) << what << " edge " << e;
    EXPECT_EQ(rev.index.data<int64_t>()[r], e) << what << ": pairing is one to one";
  }
}

TEST(DmpnnReverseEdges, Smiles2graphLayoutShuffledLayoutSelfLoopsAndMissingReverses) {
  // smiles2graph: bond k is edges 2k (i -> j) and 2k + 1 (j -> i); then two padding self-loops on atom 4.
  Tensor paired = Tensor::fromVector<int64_t>({0, 1, 1, 2, 2, 3, 4, 4, 1, 0, 2, 1, 3, 2, 4, 4}, {2, 8});
  ReverseEdges r = reverseEdges(paired);
  EXPECT_FALSE(r.mask.defined());
  EXPECT_EQ(std::vector<int64_t>(r.index.data<int64_t>(), r.index.data<int64_t>() + 8),
            (std::vector<int64_t>{1, 0, 3, 2, 5, 4, 6, 7}));
  expectReverses(paired, r, "paired");
  // The same edges in another order, with a parallel bond 0 - 1 and an odd count of self-loops: sorted path.
  // Edges: 2->1, 0->1, 4->4, 1->2, 0->1, 1->0, 0->3, 1->0, 4->4, 3->0, 4->4.
  Tensor mixed = Tensor::fromVector<int64_t>({2, 0, 4, 1, 0, 1, 0, 1, 4, 3, 4,
                                              1, 1, 4, 2, 1, 0, 3, 0, 4, 0, 4},
                                             {2, 11});
  r = reverseEdges(mixed);
  EXPECT_FALSE(r.mask.defined());
  expectReverses(mixed, r, "mixed");
  EXPECT_EQ(std::vector<int64_t>(r.index.data<int64_t>(), r.index.data<int64_t>() + 11),
            (std::vector<int64_t>{3, 5, 2, 0, 7, 1, 9, 4, 8, 6, 10}));  // k-th 0 -> 1 with k-th 1 -> 0; loops alone
  // A trimmed direction: 2 -> 3 has no 3 -> 2; masked, so it subtracts nothing.
  Tensor trimmed = Tensor::fromVector<int64_t>({0, 1, 2, 1, 0, 3}, {2, 3});
  r = reverseEdges(trimmed, DType::F64);
  ASSERT_TRUE(r.mask.defined());
  EXPECT_EQ(r.mask.dtype(), DType::F64);
  EXPECT_EQ(r.mask.at(0), 1.0);
  EXPECT_EQ(r.mask.at(1), 1.0);
  EXPECT_EQ(r.mask.at(2), 0.0);
  expectReverses(trimmed, r, "trimmed");
  // No edges at all.
  EXPECT_EQ(reverseEdges(Tensor({2, 0}, DType::I64)).index.numel(), 0);
}

// ---- the message step ----

// m_uv = sum_{k -> u} h_ku - h_vu by loops (the reverse found by search), in double.
std::vector<double> messagesByLoops(const Tensor& h, const Tensor& ei) {
  const int64_t E = ei.dim(1), H = h.dim(1);
  const int64_t* src = ei.data<int64_t>();
  const int64_t* dst = src + E;
  std::vector<double> m(static_cast<size_t>(E * H), 0.0);
  for (int64_t e = 0; e < E; ++e)
    for (int64_t k = 0; k < E; ++k) {
      if (dst[k] == src[e])
        for (int64_t j = 0; j < H; ++j) m[e * H + j] += h.at(k * H + j);
      if (src[k] == dst[e] && dst[k] == src[e])
        for (int64_t j = 0; j < H; ++j) m[e * H + j] -= h.at(k * H + j);
    }
  return m;
}

TEST(DmpnnBondMessages, MatchTheDefinitionAndTheirGradient) {
  // A ring 0-1-2-3 with a branch 1-4, each bond as two directed edges, in a shuffled order, plus a trimmed 2 -> 4.
  Tensor ei = Tensor::fromVector<int64_t>({0, 2, 1, 3, 4, 1, 2, 1, 3, 0, 2,
                                           1, 3, 0, 2, 1, 4, 1, 2, 0, 3, 4},
                                          {2, 11});
  ReverseEdges rev = reverseEdges(ei, DType::F64);
  ASSERT_TRUE(rev.mask.defined());
  Tensor h = testing::randomTensor({11, 4}, 3);
  Tensor m = bondMessages(Variable(h), ei, rev, 5).value();
  std::vector<double> want = messagesByLoops(h, ei);
  for (int64_t i = 0; i < m.numel(); ++i) EXPECT_NEAR(m.at(i), want[static_cast<size_t>(i)], 1e-12) << i;
  testing::expectGradientsMatch([&](const std::vector<Variable>& v) { return bondMessages(v[0], ei, rev, 5); },
                                {h});
  // smiles2graph's layout (the one-pass pairing) on real-looking molecules.
  auto ds = test::molecules(6, 11);
  Batch b = unpadded(*ds, test::batchesOf(ds, FixedSizeOptions{128, 256, 8}, PackingStrategy::PadToMax)[0]);
  ReverseEdges r2 = reverseEdges(b.edgeIndex, DType::F64);
  EXPECT_FALSE(r2.mask.defined());
  Tensor h2 = testing::randomTensor({b.numEdges, 3}, 4);
  Tensor m2 = bondMessages(Variable(h2), b.edgeIndex, r2, b.numNodes).value();
  std::vector<double> want2 = messagesByLoops(h2, b.edgeIndex);
  for (int64_t i = 0; i < m2.numel(); ++i) EXPECT_NEAR(m2.at(i), want2[static_cast<size_t>(i)], 1e-12) << i;
  testing::expectGradientsMatch(
      [&](const std::vector<Variable>& v) { return bondMessages(v[0], b.edgeIndex, r2, b.numNodes); }, {h2});
}

// ---- OneHotLinear ----

TEST(DmpnnOneHotLinear, IsLinearOnOneHotVectorsAndItsGradientsMatch) {
  Generator g(2);
  const std::vector<int64_t> dims = {3, 2, 4};
  OneHotLinear layer(dims, 5, 7, g, true, DType::F64);
  auto P = test::paramsOf(layer);
  ASSERT_EQ(P["table"].shape(), (Shape{9, 7}));
  ASSERT_EQ(P["weight"].shape(), (Shape{7, 5}));
  // nn.Linear(9 + 5, 7)'s initialisation: every weight and bias within 1/sqrt(14).
  for (const auto& [name, v] : P)
    for (int64_t i = 0; i < v.value().numel(); ++i) EXPECT_LE(std::abs(v.value().at(i)), 1 / std::sqrt(14.0)) << name;
  Tensor cats = Tensor::fromVector<int64_t>({0, 1, 3, 2, 0, 0, 1, 1, 2}, {3, 3});
  Tensor dense = testing::randomTensor({3, 5}, 8);
  Tensor y = layer.forward(cats, Variable(dense)).value();
  // W [one-hot || dense] + b, with W = [table^T | weight].
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t o = 0; o < 7; ++o) {
      double want = P["bias"].value().at(o);
      int64_t offset = 0;
      for (size_t c = 0; c < dims.size(); ++c) {
        for (int64_t v = 0; v < dims[c]; ++v)
          want += (cats.data<int64_t>()[i * 3 + static_cast<int64_t>(c)] == v ? 1.0 : 0.0) *
                  P["table"].value().at((offset + v) * 7 + o);
        offset += dims[c];
      }
      for (int64_t k = 0; k < 5; ++k) want += P["weight"].value().at(o * 5 + k) * dense.at(i * 5 + k);
      EXPECT_NEAR(y.at(i * 7 + o), want, 1e-12);
    }
  // Gradients of the table, the dense weight, the bias and the dense input through the layer's own function.
  testing::expectGradientsMatch(
      [&](const std::vector<Variable>& v) {
        Tensor rows = cats.clone();
        int64_t* p = rows.data<int64_t>();
        for (int64_t i = 0; i < 3; ++i) p[i * 3 + 1] += 3, p[i * 3 + 2] += 5;
        return add(embeddingBag(v[0], rows), linear(v[3], v[1], v[2]));
      },
      {P["table"].value(), P["weight"].value(), P["bias"].value(), dense});
  EXPECT_THROW(layer.forward(Tensor::fromVector<int64_t>({3, 0, 0}, {1, 3}), Variable(testing::randomTensor({1, 5}, 1))),
               std::invalid_argument);
  EXPECT_THROW(layer.forward(cats), std::invalid_argument);  // the dense part is missing
}

// ---- the whole model against its equations ----

// Chemprop v2's BondMessagePassing, mean aggregation and FFN, as loops in double over an unpadded batch.
std::vector<double> dmpnnByLoops(const Dmpnn& model, const Batch& b) {
  auto P = test::paramsOf(model);
  const DmpnnOptions& o = model.options();
  const int64_t H = o.hidden, E = b.numEdges, N = b.numNodes, F = o.ffnHidden;
  const int64_t* src = b.edgeIndex.data<int64_t>();
  const int64_t* dst = src + E;
  const auto atomDims = AtomEncoder::featureDims(), bondDims = BondEncoder::featureDims();
  int64_t atomRows = 0;
  for (int64_t d : atomDims) atomRows += d;
  auto row = [](const Variable& v, int64_t r, int64_t c) { return v.value().at(r * v.dim(1) + c); };
  auto relu = [](double x) { return x > 0 ? x : 0.0; };
  // Sum of the table rows of the categories: the one-hot vector times W.
  auto oneHot = [&](const Variable& table, const std::vector<int64_t>& dims, const int64_t* cats, int64_t first,
                    int64_t j) {
    double s = 0;
    int64_t offset = first;
    for (size_t c = 0; c < dims.size(); ++c) {
      s += row(table, offset + cats[c], j);
      offset += dims[c];
    }
    return s;
  };
  std::vector<double> h0(static_cast<size_t>(E * H)), h(static_cast<size_t>(E * H));
  for (int64_t e = 0; e < E; ++e)
    for (int64_t j = 0; j < H; ++j) {
      h0[e * H + j] = oneHot(P["W_i.table"], atomDims, b.x.data<int64_t>() + src[e] * 9, 0, j) +
                      oneHot(P["W_i.table"], bondDims, b.edgeAttr.data<int64_t>() + e * 3, atomRows, j);
      h[e * H + j] = relu(h0[e * H + j]);
    }
  for (int64_t t = 1; t < o.depth; ++t) {
    std::vector<double> next(h.size());
    for (int64_t e = 0; e < E; ++e) {
      std::vector<double> m(static_cast<size_t>(H), 0.0);
      for (int64_t k = 0; k < E; ++k) {
        if (dst[k] == src[e])
          for (int64_t j = 0; j < H; ++j) m[j] += h[k * H + j];
        if (src[k] == dst[e] && dst[k] == src[e])
          for (int64_t j = 0; j < H; ++j) m[j] -= h[k * H + j];
      }
      for (int64_t j = 0; j < H; ++j) {
        double s = h0[e * H + j];
        for (int64_t k = 0; k < H; ++k) s += row(P["W_h.weight"], j, k) * m[k];
        next[e * H + j] = relu(s);
      }
    }
    h = next;
  }
  std::vector<double> atoms(static_cast<size_t>(N * H));
  for (int64_t v = 0; v < N; ++v) {
    std::vector<double> m(static_cast<size_t>(H), 0.0);
    for (int64_t k = 0; k < E; ++k)
      if (dst[k] == v)
        for (int64_t j = 0; j < H; ++j) m[j] += h[k * H + j];
    for (int64_t j = 0; j < H; ++j) {
      double s = P["W_o.bias"].value().at(j) + oneHot(P["W_o.table"], atomDims, b.x.data<int64_t>() + v * 9, 0, j);
      for (int64_t k = 0; k < H; ++k) s += row(P["W_o.weight"], j, k) * m[k];
      atoms[v * H + j] = relu(s);
    }
  }
  std::vector<double> out;
  const int64_t* ptr = b.ptr.data<int64_t>();
  for (int64_t g = 0; g < b.numRealGraphs; ++g) {
    std::vector<double> mol(static_cast<size_t>(H), 0.0), hid(static_cast<size_t>(F));
    for (int64_t v = ptr[g]; v < ptr[g + 1]; ++v)
      for (int64_t j = 0; j < H; ++j) mol[j] += atoms[v * H + j] / static_cast<double>(ptr[g + 1] - ptr[g]);
    for (int64_t f = 0; f < F; ++f) {
      double s = P["ffn.0.bias"].value().at(f);
      for (int64_t j = 0; j < H; ++j) s += row(P["ffn.0.weight"], f, j) * mol[j];
      hid[f] = relu(s);
    }
    for (int64_t t = 0; t < o.tasks; ++t) {
      double s = P["ffn.1.bias"].value().at(t);
      for (int64_t f = 0; f < F; ++f) s += row(P["ffn.1.weight"], t, f) * hid[f];
      out.push_back(s);
    }
  }
  return out;
}

TEST(Dmpnn, ComputesChempropsEquations) {
  auto ds = test::molecules(24, 5);
  Generator g(6);
  DmpnnOptions o = smallOptions(DType::F64);
  o.tasks = 2;
  Dmpnn model(o, g);
  EXPECT_EQ(model.blockNames(), (std::vector<std::string>{"input", "layers/0", "layers/1", "atoms", "head"}));
  // Chemprop's parameters: W_i and W_h without bias, W_o with, the FFN's two layers.
  std::vector<std::string> names;
  for (const auto& [name, v] : model.namedParameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"W_i.table", "W_h.weight", "W_o.table", "W_o.weight", "W_o.bias",
                                             "ffn.0.weight", "ffn.0.bias", "ffn.1.weight", "ffn.1.bias"}));
  for (const Batch& padded : test::batchesOf(ds, FixedSizeOptions{64, 128, 8}, PackingStrategy::PlannedPack)) {
    Batch b = unpadded(*ds, padded);
    Tensor y = model.forward(b).value();
    std::vector<double> want = dmpnnByLoops(model, b);
    ASSERT_EQ(static_cast<int64_t>(want.size()), b.numRealGraphs * 2);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y.at(static_cast<int64_t>(i)), want[i], 1e-12) << i;
  }
}

TEST(Dmpnn, AggregationsDepthOneAndFfnLayers) {
  auto ds = test::molecules(12, 7);
  Batch b = test::batchesOf(ds, FixedSizeOptions{96, 192, 8}, PackingStrategy::PlannedPack)[0];
  DmpnnOptions o = smallOptions(DType::F64);
  Generator g1(9), g2(9);
  Dmpnn mean(o, g1);
  o.aggregation = "norm";
  o.aggregationNorm = 4;
  Dmpnn norm(o, g2);
  // Same weights: norm's molecule vectors are the atom sums / 4, mean's the atom sums / atom count.
  Tensor em = mean.moleculeEmbeddings(b).value(), en = norm.moleculeEmbeddings(b).value();
  const int64_t* ptr = b.ptr.data<int64_t>();
  for (int64_t gr = 0; gr < b.numRealGraphs; ++gr)
    for (int64_t j = 0; j < o.hidden; ++j)
      EXPECT_NEAR(en.at(gr * o.hidden + j) * 4 / static_cast<double>(ptr[gr + 1] - ptr[gr]), em.at(gr * o.hidden + j),
                  1e-12);
  for (int64_t r = b.numRealGraphs * o.hidden; r < en.numel(); ++r) EXPECT_EQ(en.at(r), 0.0);
  o.depth = 1;
  o.ffnLayers = 0;
  Generator g3(9);
  Dmpnn shallow(o, g3);
  EXPECT_EQ(shallow.blockNames(), (std::vector<std::string>{"input", "atoms", "head"}));
  EXPECT_EQ(shallow.namedParameters().back().second.shape(), (Shape{1}));  // one Linear(hidden, tasks)
  EXPECT_EQ(shallow.forward(b).value().shape(), (Shape{b.numGraphs, 1}));
  o.ffnLayers = 3;
  Generator g4(9);
  EXPECT_EQ(Dmpnn(o, g4).namedParameters().size(), 5u + 8u);
  o.aggregation = "max";
  Generator g5(9);
  EXPECT_THROW(Dmpnn(o, g5), std::invalid_argument);
}

// ---- gradients of the whole model ----

TEST(Dmpnn, ParameterGradientsMatchFiniteDifferences) {
  auto ds = test::molecules(5, 13);
  // Padded, with a trimmed-looking layout left to the other tests: four small molecules and the padding graph.
  Batch b = test::batchesOf(ds, FixedSizeOptions{48, 80, 5}, PackingStrategy::PlannedPack)[0];
  DmpnnOptions o = smallOptions(DType::F64);
  o.hidden = 4;
  o.ffnHidden = 3;
  o.tasks = 2;
  for (const std::string agg : {"mean", "norm"}) {
    o.aggregation = agg;
    Generator g(14);
    Dmpnn model(o, g);
    Tensor r = testing::randomTensor({b.numGraphs, 2}, 99);
    auto loss = [&] { return sum(mul(model.forward(b), Variable(r))); };
    model.zeroGrad();
    loss().backward();
    const double eps = 1e-6;
    int64_t checked = 0;
    for (auto& [name, p] : model.namedParameters()) {
      ASSERT_TRUE(p.hasGrad()) << name;
      Tensor analytic = p.grad().clone();
      double* v = p.value().data<double>();
      for (int64_t j = 0; j < p.value().numel(); ++j) {
        const double saved = v[j];
        NoGradGuard ng;
        v[j] = saved + eps;
        const double up = loss().value().item();
        v[j] = saved - eps;
        const double down = loss().value().item();
        v[j] = saved;
        const double numeric = (up - down) / (2 * eps);
        EXPECT_NEAR(analytic.at(j), numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << agg << " " << name << " " << j;
        checked += numeric != 0.0;
      }
    }
    EXPECT_GT(checked, 100) << agg;  // the check saw real gradients, not only unused table rows
  }
}

// ---- padding invariance ----

struct Layout {
  std::string name;
  PackingStrategy strategy;
  FixedSizeOptions fixed;
};

std::vector<Layout> layouts(const Dataset& ds) {
  FixedSizeOptions pad = FixedSizeOptions::fromDataset(ds, 6), padExtra = pad;
  padExtra.numNodes += 37;  // more padding atoms and edges than PadToMax needs (an odd count of padding edges)
  padExtra.numEdges += 53;
  std::vector<Layout> out{{"pad", PackingStrategy::PadToMax, pad},
                          {"pad_extra", PackingStrategy::PadToMax, padExtra},
                          {"stream", PackingStrategy::StreamPack, FixedSizeOptions{64, 128, 8}},
                          {"plan", PackingStrategy::PlannedPack, FixedSizeOptions{64, 128, 8}},
                          {"plan_extra", PackingStrategy::PlannedPack, FixedSizeOptions{101, 191, 13}}};
  for (Layout& l : out) {
    l.fixed.nodePadValue = 1;  // padding rows with valid, non-zero categories: they must still not leak
    l.fixed.edgePadValue = 1;
  }
  return out;
}

double relativeError(const Tensor& padded, const Tensor& plain, int64_t rows) {
  const int64_t c = plain.cols();
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < rows * c; ++i) {
    diff = std::max(diff, std::abs(padded.at(i) - plain.at(i)));
    scale = std::max(scale, std::abs(plain.at(i)));
  }
  return scale > 0 ? diff / scale : diff;
}

TEST(Dmpnn, RealMoleculesDoNotDependOnPadding) {
  auto ds = test::molecules(60, 3);
  for (DType dt : {DType::F32, DType::F64}) {
    const double tol = dt == DType::F32 ? 1e-6 : 1e-12;
    Generator g(8);
    DmpnnOptions o = smallOptions(dt);
    o.hidden = 16;
    o.ffnHidden = 12;
    Dmpnn model(o, g);
    const size_t atomsBlock = model.blockIndex("head");
    for (const Layout& layout : layouts(*ds)) {
      const std::string what = std::string(dtypeName(dt)) + " " + layout.name;
      for (const Batch& b : test::batchesOf(ds, layout.fixed, layout.strategy)) {
        Batch u = unpadded(*ds, b);
        model.eval();
        Tensor hp = model.runBlocks(BlockState(), b, 0, atomsBlock).get("h").value();
        Tensor hu = model.runBlocks(BlockState(), u, 0, atomsBlock).get("h").value();
        EXPECT_LE(relativeError(hp, hu, b.numRealNodes), tol) << what << " atom states";
        Tensor op = model.forward(b).value(), ou = model.forward(u).value();
        EXPECT_LE(relativeError(op, ou, b.numRealGraphs), tol) << what << " outputs";
        for (int64_t r = b.numRealGraphs; r < op.numel(); ++r) EXPECT_EQ(op.at(r), 0.0) << what << " padding graph row";
        // The training gradients of the masked loss.
        model.train();
        auto grads = [&](const Batch& batch) {
          model.zeroGrad();
          l1Loss(model.forward(batch), batch.y, batch.yMask).backward();
          std::vector<Tensor> out;
          for (const auto& p : model.parameters()) out.push_back(p.grad().clone());
          return out;
        };
        std::vector<Tensor> gp = grads(b), gu = grads(u);
        auto names = model.namedParameters();
        for (size_t i = 0; i < gp.size(); ++i)
          EXPECT_LE(relativeError(gp[i], gu[i], gu[i].rows()), tol) << what << " gradient of " << names[i].first;
      }
    }
  }
}

// ---- reproducibility ----

std::vector<Tensor> trainThreeSteps(int threads, const std::vector<Batch>& batches) {
  const int before = numThreads();
  setNumThreads(threads);
  Generator g(21);
  DmpnnOptions o;  // Chemprop's sizes, with dropout to exercise the random stream
  o.hidden = 64;
  o.ffnHidden = 32;
  o.dropout = 0.1;
  Dmpnn model(o, g);
  Adam opt({{model.parameters(), 0.0}}, 1e-3);
  std::vector<Tensor> out;
  for (uint64_t step = 0; step < 3; ++step) {
    ExecutionContext::current().setRandomKey({5, step, 0});
    opt.zeroGrad();
    const Batch& b = batches[step % batches.size()];
    Variable pred = model.forward(b);
    mseLoss(pred, b.y, b.yMask).backward();
    opt.step();
    out.push_back(pred.value().clone());
  }
  for (const auto& p : model.parameters()) out.push_back(p.value().clone());
  setNumThreads(before);
  return out;
}

TEST(Dmpnn, SameBitsForRerunsThreadCountsAndClones) {
  auto ds = test::molecules(200, 17);
  std::vector<Batch> batches = test::batchesOf(ds, FixedSizeOptions{512, 1024, 51}, PackingStrategy::PlannedPack);
  std::vector<Tensor> one = trainThreeSteps(1, batches), again = trainThreeSteps(1, batches);
  std::vector<Tensor> two = trainThreeSteps(std::min(2, machineCores()), batches);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_TRUE(one[i].bitEqual(again[i])) << "rerun " << i;
    EXPECT_TRUE(one[i].bitEqual(two[i])) << "2 threads " << i;
  }
  Generator g(4);
  DmpnnOptions o = smallOptions(DType::F32);
  o.dropout = 0.3;
  Dmpnn model(o, g);
  std::unique_ptr<Dmpnn> copy = cloneModule(model);
  testing::expectDeepCopy(model, *copy);
  EXPECT_EQ(copy->blockNames(), model.blockNames());
  ExecutionContext::current().setRandomKey({1, 0, 0});
  Tensor a = model.forward(batches[0]).value();
  ExecutionContext::current().setRandomKey({1, 0, 0});
  EXPECT_TRUE(copy->forward(batches[0]).value().bitEqual(a));
}

}  // namespace
}  // namespace gnn
