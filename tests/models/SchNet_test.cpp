// SchNet and its layers: float64 gradients against finite differences (layers, a tiny model's parameters and
// its positions, i.e. forces), energies invariant to rotating and translating a molecule, real molecules'
// outputs bit-identical however the batch is padded, the radius graph against brute force, pairs of edges,
// clone and blocks, PyG's parameter count, a few training steps on shipped QM7 molecules, and the radius graph
// built by the model per batch (radiusGraphOnDevice) against the host's.
#include "models/SchNet.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../gnn/CloneCheck.h"
#include "../gnn/GradCheck.h"
#include "data/MoleculeSource.h"
#include "data/RadiusGraph.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/CFConv.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"
#include "loaders/FixedSizeCollator.h"

namespace gnn {
namespace {

// The first `count` QM7 molecules of the shipped XYZ file, with their PBE0 atomisation energy (kcal/mol) and
// the radius graph of SchNet's defaults.
std::vector<Graph> qm7(int64_t count, double cutoff = 10.0, int64_t maxNeighbors = 32) {
  MoleculeSourceOptions o;
  o.path = std::string(GNN_SOURCE_DIR) + "/examples/data/qm7_3d/qm7.xyz.gz";
  o.targetColumns = {"e_pbe0_atomization_kcal_mol"};
  auto src = openMoleculeSource(o);
  std::vector<Graph> out;
  MoleculeRecord r;
  while (static_cast<int64_t>(out.size()) < count && src->next(r)) {
    EXPECT_TRUE(r.error.empty()) << r.error;
    Graph g;
    const int64_t n = static_cast<int64_t>(r.atomicNumbers.size());
    g.numNodes = n;
    g.x = Tensor({n, 9}, DType::I64);
    for (int64_t i = 0; i < n; ++i) g.x.data<int64_t>()[i * 9] = r.atomicNumbers[i] - 1;
    g.pos = Tensor::fromVector(r.pos, {n, 3});
    g.edgeIndex = radiusGraph(g.pos, cutoff, maxNeighbors);
    g.y = Tensor::fromVector(r.y, {1});
    g.yMask = Tensor::fromVector(std::vector<uint8_t>{1}, {1});
    out.push_back(g);
  }
  return out;
}

Batch batchOf(const std::vector<Graph>& graphs, int64_t padGraphs = 1, int64_t extraNodes = 0,
              int64_t extraEdges = 0) {
  FixedSizeOptions o;
  int64_t nodes = 0, edges = 0;
  for (const Graph& g : graphs) nodes += g.numNodes, edges += g.numEdges();
  o.numGraphs = static_cast<int64_t>(graphs.size()) + padGraphs;
  o.numNodes = nodes + padGraphs + extraNodes;
  o.numEdges = edges + padGraphs + extraEdges;
  return FixedSizeCollator(o).collate(graphs);
}

SchNetOptions tiny(DType dtype) {
  SchNetOptions o;
  o.hidden = 6;
  o.filters = 5;
  o.interactions = 2;
  o.gaussians = 7;
  o.cutoff = 4.0;  // some QM7 pairs lie beyond it
  o.dtype = dtype;
  return o;
}

Tensor rotated(const Tensor& pos, double a, double b, double c, const double shift[3]) {
  // R = Rz(a) Ry(b) Rx(c), then a translation.
  const double ca = std::cos(a), sa = std::sin(a), cb = std::cos(b), sb = std::sin(b), cc = std::cos(c),
               sc = std::sin(c);
  const double R[3][3] = {{ca * cb, ca * sb * sc - sa * cc, ca * sb * cc + sa * sc},
                          {sa * cb, sa * sb * sc + ca * cc, sa * sb * cc - ca * sc},
                          {-sb, cb * sc, cb * cc}};
  Tensor p64 = pos.to(DType::F64);
  Tensor out({pos.dim(0), 3}, DType::F64);
  for (int64_t i = 0; i < pos.dim(0); ++i)
    for (int r = 0; r < 3; ++r) {
      double s = shift[r];
      for (int k = 0; k < 3; ++k) s += R[r][k] * p64.data<double>()[i * 3 + k];
      out.data<double>()[i * 3 + r] = s;
    }
  return out.to(pos.dtype());
}

TEST(RadiusGraph, MatchesBruteForceWithAndWithoutCellList) {
  for (int64_t n : {int64_t{12}, kCellListAtoms + 60}) {
    Generator g(5);
    Tensor pos = init::uniform({n, 3}, -8, 8, g, DType::F32);
    const double cutoff = 5.0;
    const int64_t maxN = 9;
    Tensor e = radiusGraph(pos, cutoff, maxN);
    // Brute force: per target, sources by (distance, index), the nearest maxN within the cutoff.
    std::vector<int64_t> src, dst;
    Tensor p = pos.to(DType::F64);
    for (int64_t i = 0; i < n; ++i) {
      std::vector<std::pair<double, int64_t>> c;
      for (int64_t j = 0; j < n; ++j) {
        if (j == i) continue;
        double d2 = 0;
        for (int k = 0; k < 3; ++k) {
          const double d = p.data<double>()[3 * i + k] - p.data<double>()[3 * j + k];
          d2 += d * d;
        }
        if (d2 < cutoff * cutoff) c.push_back({d2, j});
      }
      std::sort(c.begin(), c.end());
      for (size_t k = 0; k < c.size() && k < static_cast<size_t>(maxN); ++k) src.push_back(c[k].second), dst.push_back(i);
    }
    ASSERT_EQ(e.dim(1), static_cast<int64_t>(src.size())) << n << " atoms";
    for (size_t k = 0; k < src.size(); ++k) {
      EXPECT_EQ(e.data<int64_t>()[k], src[k]) << n << " atoms, edge " << k;
      EXPECT_EQ(e.data<int64_t>()[e.dim(1) + k], dst[k]) << n << " atoms, edge " << k;
    }
  }
}

TEST(RadiusGraph, RefusesBadPositions) {
  Tensor pos = Tensor::fromVector<float>({0, 0, 0, 1, NAN, 0}, {2, 3});
  EXPECT_THROW(radiusGraph(pos, 10, 32), std::invalid_argument);
  EXPECT_THROW(radiusGraph(Tensor({3, 2}), 10, 32), std::invalid_argument);
  Graph noPos;
  noPos.numNodes = 1;
  auto ds = std::make_shared<InMemoryDataset>(std::vector<Graph>{noPos});
  try {
    RadiusGraphDataset r(ds, 10, 32);
    FAIL() << "a graph without positions was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("graph 0: no atom positions"), std::string::npos) << e.what();
  }
}

TEST(EdgePairs, BothDirectionsShareOnePair) {
  // 0->1, 1->0, 2->2 (self-loop), 1->2 (no reverse), 0->1 again (a duplicate: its own pair unless a reverse is
  // left), 1->0 again.
  Tensor e = Tensor::fromVector<int64_t>({0, 1, 2, 1, 0, 1, /**/ 1, 0, 2, 2, 1, 0}, {2, 6});
  EdgePairs p = edgePairs(e);
  std::vector<int64_t> of(p.pairOf.data<int64_t>(), p.pairOf.data<int64_t>() + 6);
  EXPECT_EQ(of, (std::vector<int64_t>{0, 0, 1, 2, 3, 3}));
  ASSERT_EQ(p.edgeIndex.dim(1), 4);
  EXPECT_EQ(p.edgeIndex.data<int64_t>()[2], 1);  // pair 2 is edge 1 -> 2
  EXPECT_EQ(p.edgeIndex.data<int64_t>()[4 + 2], 2);
}

// Each edge's pair by brute force: a new pair, or the pair of the lowest-index earlier edge in the opposite
// direction that no other edge has joined yet.
std::vector<int64_t> pairsByHand(const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  const size_t E = src.size();
  std::vector<int64_t> of(E, -1);
  std::vector<bool> joined(E, false);
  int64_t next = 0;
  for (size_t e = 0; e < E; ++e) {
    for (size_t f = 0; f < e && of[e] < 0; ++f)
      if (!joined[f] && src[f] != dst[f] && src[f] == dst[e] && dst[f] == src[e]) {
        of[e] = of[f];
        joined[f] = joined[e] = true;
      }
    if (of[e] < 0) of[e] = next++;
  }
  return of;
}

// Radius graphs come grouped by target (the sources of a target in distance order) and take a scan of the
// groups; other orders are sorted and searched. Both give the brute-force pairs, duplicates and self-loops
// included.
TEST(EdgePairs, GroupedByTargetAndUnorderedEdgesPairAsByHand) {
  Generator g(21);
  // Modes: grouped by target; unordered; grouped with gaps (targets 0, 2, .., 58: empty groups between) and
  // sources beyond the last target.
  for (int mode : {0, 1, 2}) {
    std::vector<int64_t> src, dst;
    for (int64_t t = 0; t < 30; ++t)
      for (int k = 0; k < 12; ++k) {
        src.push_back(static_cast<int64_t>(g.nextBelow(mode == 2 ? 70 : 30)));  // self-loops and repeats among them
        dst.push_back(mode == 0 ? t : mode == 2 ? 2 * t : static_cast<int64_t>(g.nextBelow(30)));
      }
    std::vector<int64_t> flat(src);
    flat.insert(flat.end(), dst.begin(), dst.end());
    const int64_t E = static_cast<int64_t>(src.size());
    EdgePairs p = edgePairs(Tensor::fromVector(flat, {2, E}));
    std::vector<int64_t> of(p.pairOf.data<int64_t>(), p.pairOf.data<int64_t>() + E);
    EXPECT_EQ(of, pairsByHand(src, dst)) << "mode " << mode;
    const int64_t P = p.edgeIndex.dim(1);
    for (int64_t e = 0; e < E; ++e) {  // a pair's edge is the first of its edges, either direction
      const int64_t a = p.edgeIndex.data<int64_t>()[of[e]], b = p.edgeIndex.data<int64_t>()[P + of[e]];
      EXPECT_TRUE((a == src[e] && b == dst[e]) || (a == dst[e] && b == src[e])) << "edge " << e;
    }
  }
}

TEST(EdgePairs, NegativeNodeIndexIsAnError) {
  EXPECT_THROW(edgePairs(Tensor::fromVector<int64_t>({-1, 0, /**/ 0, 1}, {2, 2})), std::invalid_argument);
}

TEST(SchNetGradCheck, CFConvAndInteraction) {
  Generator gen(3);
  SchNetInteraction block(4, 5, 3, gen, DType::F64);
  Tensor edges = Tensor::fromVector<int64_t>({0, 1, 2, 1, 3, 0, /**/ 1, 0, 1, 2, 0, 3}, {2, 6});
  EdgePairs pairs = edgePairs(edges);
  const int64_t P = pairs.edgeIndex.dim(1);
  // Inputs: x, rbf per pair, cutoff per pair; then every parameter.
  Tensor x = testing::randomTensor({4, 4}, 1), rbf = testing::randomTensor({P, 5}, 2);
  Tensor cut = init::uniform({P}, 0, 1, gen, DType::F64);
  testing::expectGradientsMatch(
      [&](const std::vector<Variable>& v) { return block.forward(v[0], edges, v[1], v[2], pairs.pairOf); },
      {x, rbf, cut});
  // Parameters: their gradients against central differences of the same projected output.
  Tensor r = testing::randomTensor({4, 4}, 9);
  auto loss = [&] { return sum(mul(block.forward(Variable(x), edges, Variable(rbf), Variable(cut), pairs.pairOf), Variable(r))); };
  for (auto& [name, param] : block.namedParameters()) {
    Variable p = param;
    p.zeroGrad();
    loss().backward();
    const Tensor analytic = p.grad().clone();
    double* d = p.value().data<double>();
    for (int64_t j = 0; j < p.value().numel(); ++j) {
      const double saved = d[j];
      double up, down;
      {
        NoGradGuard ng;
        d[j] = saved + 1e-6;
        up = loss().value().item();
        d[j] = saved - 1e-6;
        down = loss().value().item();
        d[j] = saved;
      }
      EXPECT_NEAR(analytic.at(j), (up - down) / 2e-6, 1e-6 * std::max(1.0, std::abs(analytic.at(j)))) << name << " " << j;
    }
  }
}

TEST(SchNetGradCheck, TinyModelParametersAndForces) {
  Generator gen(4);
  SchNetOptions o = tiny(DType::F64);
  o.atomref.assign(SchNetOptions::kElements, 0.0);
  o.atomref[1] = -0.5, o.atomref[6] = -1.25;
  o.scale = {2.0};
  o.shift = {0.1};
  SchNet model(o, gen);
  std::vector<Graph> mols = qm7(3, o.cutoff);
  Batch b = batchOf(mols, 1, 2, 3);
  Tensor pos0 = b.pos.to(DType::F64);
  Tensor r = testing::randomTensor({b.numGraphs, 1}, 7);
  // Positions: the gradient of the energy (forces up to the sign) through distances, expansion and cutoff.
  testing::expectGradientsMatch(
      [&](const std::vector<Variable>& v) {
        BlockState s;
        s.set("pos", v[0]);
        return model.runBlocks(s, b, 0, model.numBlocks()).get("out");
      },
      {pos0}, 1e-6, 2e-6);
  Variable posVar(pos0);
  auto loss = [&] {
    BlockState s;
    s.set("pos", posVar);
    return sum(mul(model.runBlocks(s, b, 0, model.numBlocks()).get("out"), Variable(r)));
  };
  for (auto& [name, param] : model.namedParameters()) {
    Variable p = param;
    p.zeroGrad();
    loss().backward();
    ASSERT_TRUE(p.hasGrad()) << name;
    const Tensor analytic = p.grad().clone();
    double* d = p.value().data<double>();
    for (int64_t j = 0; j < p.value().numel(); j += std::max<int64_t>(1, p.value().numel() / 9)) {
      const double saved = d[j];
      double up, down;
      {
        NoGradGuard ng;
        d[j] = saved + 1e-6;
        up = loss().value().item();
        d[j] = saved - 1e-6;
        down = loss().value().item();
        d[j] = saved;
      }
      EXPECT_NEAR(analytic.at(j), (up - down) / 2e-6, 1e-6 * std::max(1.0, std::abs(analytic.at(j)))) << name << " " << j;
    }
  }
}

TEST(SchNet, EnergyInvariantToRotationAndTranslation) {
  for (DType dt : {DType::F64, DType::F32}) {
    Generator gen(11);
    SchNetOptions o;
    o.dtype = dt;
    SchNet model(o, gen);
    model.eval();
    std::vector<Graph> mols = qm7(16);
    // Coordinates in the model's dtype before the move, so float64 measures the model and not the rounding of
    // the rotated coordinates to float32.
    for (Graph& g : mols) g.pos = g.pos.to(dt);
    std::vector<Graph> moved = mols;
    const double shift[3] = {3.5, -12.25, 40.0};
    for (size_t i = 0; i < moved.size(); ++i) {
      moved[i].pos = rotated(mols[i].pos, 0.3 + 0.2 * i, -1.1, 2.0 + i, shift);
      moved[i].edgeIndex = radiusGraph(moved[i].pos, o.cutoff, o.maxNeighbors);
    }
    NoGradGuard ng;
    Tensor a = model.forward(batchOf(mols)).value().to(DType::F64);
    Tensor b = model.forward(batchOf(moved)).value().to(DType::F64);
    // Relative to the largest energy of the batch (an untrained model puts some molecules near 0).
    double scale = 0, worst = 0;
    for (size_t i = 0; i < mols.size(); ++i) {
      scale = std::max(scale, std::abs(a.at(i)));
      worst = std::max(worst, std::abs(a.at(i) - b.at(i)));
    }
    ASSERT_GT(scale, 0.1);
    EXPECT_LE(worst / scale, dt == DType::F64 ? 1e-12 : 1e-5) << dtypeName(dt);
  }
}

TEST(SchNet, RealMoleculesAreBitIdenticalWithAnyPadding) {
  Generator gen(12);
  SchNet model(SchNetOptions{}, gen);
  model.eval();
  std::vector<Graph> mols = qm7(10);
  NoGradGuard ng;
  Tensor tight = model.forward(batchOf(mols, 1)).value();
  Tensor loose = model.forward(batchOf(mols, 5, 37, 211)).value();
  for (int64_t g = 0; g < static_cast<int64_t>(mols.size()); ++g)
    EXPECT_EQ(tight.at(g), loose.at(g)) << "molecule " << g;
  // Padding graphs' rows are 0.
  for (int64_t g = static_cast<int64_t>(mols.size()); g < loose.dim(0); ++g) EXPECT_EQ(loose.at(g), 0.0);
  // One molecule alone: the same bits as in the batch.
  Tensor alone = model.forward(batchOf({mols[3]}, 1)).value();
  EXPECT_EQ(alone.at(0), tight.at(3));
}

// The cutoff inside filterMessageSum (the default) and as a separate mul (the simulated IPU's ops): the same
// energies and the same gradients of every parameter and of the positions (forces), to the bit, in float32.
// The CPU's shortcuts (the cutoff inside the message sum, one message plan for all interactions) against the
// ops a compiled graph runs: the same energies, forces and parameter gradients, to the bit.
TEST(SchNet, FusedCutoffAndSharedPlanGiveTheSeparateOpsBits) {
  Generator gen(14);
  SchNet fused(SchNetOptions{}, gen);
  ASSERT_TRUE(fused.options().fusedCutoff);
  ASSERT_TRUE(fused.options().sharedMessagePlan);
  const Batch b = batchOf(qm7(6), 2, 5, 40);
  const Tensor r = init::uniform({b.numGraphs, 1}, -1, 1, gen);
  auto run = [&](SchNet& model, Variable& pos) {
    BlockState s;
    s.set("pos", pos);
    Variable out = model.runBlocks(s, b, 0, model.numBlocks()).get("out");
    sum(mul(out, Variable(r))).backward();
    return out.value();
  };
  Variable posA(b.pos.clone(), true);
  const Tensor a = run(fused, posA);
  for (const auto& [cutoffFused, planShared] : {std::pair{false, false}, {true, false}, {false, true}}) {
    SCOPED_TRACE(std::string("fused cutoff ") + (cutoffFused ? "on" : "off") + ", shared plan " +
                 (planShared ? "on" : "off"));
    auto copy = cloneModule(fused);
    auto& other = dynamic_cast<SchNet&>(*copy);
    other.setFusedCutoff(cutoffFused);
    other.setSharedMessagePlan(planShared);
    for (auto& [name, p] : other.namedParameters()) p.zeroGrad();
    Variable posB(b.pos.clone(), true);
    const Tensor c = run(other, posB);
    EXPECT_TRUE(a.bitEqual(c));
    EXPECT_TRUE(posA.grad().bitEqual(posB.grad())) << "forces";
    const auto pa = fused.namedParameters(), pb = other.namedParameters();
    ASSERT_EQ(pa.size(), pb.size());
    for (size_t i = 0; i < pa.size(); ++i)
      EXPECT_TRUE(pa[i].second.grad().bitEqual(pb[i].second.grad())) << pa[i].first;
  }
}

TEST(SchNet, DefaultsArePygs) {
  Generator gen(1);
  SchNet model(SchNetOptions{}, gen);
  EXPECT_EQ(model.numParameters(), 455809);  // torch_geometric.nn.models.SchNet() with its defaults
  EXPECT_EQ(model.blockNames(), (std::vector<std::string>{"input", "interactions/0", "interactions/1", "interactions/2",
                                                          "interactions/3", "interactions/4", "interactions/5", "head"}));
  auto copy = cloneModule(model);
  testing::expectDeepCopy(model, *copy);
  std::vector<Graph> mols = qm7(4);
  Batch b = batchOf(mols);
  NoGradGuard ng;
  EXPECT_TRUE(model.forward(b).value().bitEqual(copy->forward(b).value()));
  GaussianSmearing rbf;
  EXPECT_EQ(rbf.count(), 50);
  EXPECT_DOUBLE_EQ(rbf.offsets().back(), 10.0);
  EXPECT_NEAR(rbf.coeff(), -0.5 / std::pow(10.0 / 49, 2), 1e-12);
}

// The head hands on its output alone: neither what the blocks before it put in the state nor the positions a
// caller put there move on with it.
TEST(SchNet, TheHeadHandsOnOnlyTheOutput) {
  Generator gen(2);
  SchNet model(tiny(DType::F64), gen);
  Batch b = batchOf(qm7(2, 4.0));
  BlockState s;
  s.set("pos", Variable(b.pos.to(DType::F64)));
  s = model.runBlocks(s, b, 0, model.numBlocks() - 1);
  EXPECT_EQ(s.names(), (std::vector<std::string>{"pos", "h", "rbf", "cut", "pair_of", "message_plan", "z"}));
  EXPECT_EQ(model.runBlocks(s, b, model.numBlocks() - 1, model.numBlocks()).names(), std::vector<std::string>{"out"});
}

TEST(SchNet, ErrorsNameTheFix) {
  Generator gen(1);
  SchNet model(SchNetOptions{}, gen);
  std::vector<Graph> mols = qm7(2);
  mols[0].pos = Tensor();
  mols[1].pos = Tensor();
  try {
    model.forward(batchOf(mols));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no atom positions"), std::string::npos) << e.what();
  }
  SchNetOptions bad;
  bad.readout = "max";
  EXPECT_THROW(SchNet(bad, gen), std::invalid_argument);
}

TEST(SchNet, TrainsOnQm7) {
  Generator gen(21);
  SchNetOptions o;
  o.hidden = 32;
  o.filters = 32;
  o.interactions = 3;
  std::vector<Graph> mols = qm7(64);
  // Per-atom shift so that the untrained model starts near the mean energy per atom.
  double ySum = 0, atoms = 0;
  for (const Graph& g : mols) ySum += g.y.at(0), atoms += static_cast<double>(g.numNodes);
  o.shift = {ySum / atoms};
  o.scale = {10.0};
  SchNet model(o, gen);
  Adam opt({{model.parameters()}}, 5e-3);
  std::vector<Batch> batches;
  for (size_t i = 0; i < mols.size(); i += 16)
    batches.push_back(batchOf(std::vector<Graph>(mols.begin() + i, mols.begin() + i + 16)));
  auto epochLoss = [&](bool train) {
    double total = 0;
    for (const Batch& b : batches) {
      Variable loss = l1Loss(model.forward(b), b.y, b.yMask);
      total += loss.value().item();
      if (train) {
        opt.zeroGrad();
        loss.backward();
        opt.step();
      }
    }
    return total / static_cast<double>(batches.size());
  };
  const double before = epochLoss(false);
  for (int e = 0; e < 30; ++e) epochLoss(true);
  const double after = epochLoss(false);
  EXPECT_LT(after, 0.5 * before) << "L1 " << before << " -> " << after << " kcal/mol";
}


// radiusGraphOnDevice: SchNet builds the radius graph per batch (knnGraph) from molecules without edges. tiny()'s
// cutoff of 4 A with at most 5 neighbours leaves some QM7 atoms more neighbours than that and others fewer.
SchNetOptions onDevice(DType dtype) {
  SchNetOptions o = tiny(dtype);
  o.maxNeighbors = 5;
  o.radiusGraphOnDevice = true;
  return o;
}

// Batches of these still need an edge slot per graph slot (FixedSizeOptions::validate): batchOf's extraEdges.
std::vector<Graph> withoutEdges(std::vector<Graph> mols) {
  for (Graph& g : mols) g.edgeIndex = Tensor({2, 0}, DType::I64);
  return mols;
}

// Energies, forces and parameter gradients of one model run on a batch: sum(out * r) backpropagated.
struct RunResults {
  Tensor out, forces;
  std::vector<Tensor> grads;
};
RunResults runModel(SchNet& model, const Batch& b, const Tensor& r) {
  for (auto& [name, p] : model.namedParameters()) p.zeroGrad();
  Variable pos(b.pos.to(model.options().dtype), true);
  BlockState s;
  s.set("pos", pos);
  Variable out = model.runBlocks(s, b, 0, model.numBlocks()).get("out");
  sum(mul(out, Variable(r))).backward();
  RunResults run{out.value(), pos.grad(), {}};
  for (auto& [name, p] : model.namedParameters()) run.grads.push_back(p.grad().clone());
  return run;
}

void expectClose(const Tensor& a, const Tensor& b, double tol, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i)
    EXPECT_NEAR(a.at(i), b.at(i), tol * std::max(1.0, std::abs(b.at(i)))) << what << " [" << i << "]";
}

TEST(SchNetRadiusGraphOnDevice, MatchesTheHostRadiusGraphsEnergiesForcesAndGradients) {
  for (DType dt : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dt));
    SchNetOptions hostOptions = onDevice(dt);
    hostOptions.radiusGraphOnDevice = false;
    Generator g1(31), g2(31);
    SchNet host(hostOptions, g1), device(onDevice(dt), g2);
    const std::vector<Graph> mols = qm7(8, hostOptions.cutoff, hostOptions.maxNeighbors);
    int64_t full = 0, fewer = 0;
    for (const Graph& g : mols)
      for (int64_t i = 0; i < g.numNodes; ++i) {
        int64_t in = 0;
        for (int64_t e = 0; e < g.numEdges(); ++e) in += g.edgeIndex.data<int64_t>()[g.numEdges() + e] == i;
        (in == hostOptions.maxNeighbors ? full : fewer) += 1;
      }
    ASSERT_GT(full, 0) << "atoms with more neighbours within the cutoff than maxNeighbors";
    ASSERT_GT(fewer, 0) << "atoms with fewer";
    const Batch hostBatch = batchOf(mols, 2, 7, 11), deviceBatch = batchOf(withoutEdges(mols), 2, 7, 8);
    const Tensor r = init::uniform({hostBatch.numGraphs, 1}, -1, 1, g1, dt);
    const RunResults a = runModel(host, hostBatch, r), b = runModel(device, deviceBatch, r);
    // The same neighbours and, per atom, the same messages in the same order; the pairs' filter rows may come in
    // another order, which the tolerance allows.
    const double tol = dt == DType::F64 ? 1e-12 : 1e-5;
    expectClose(b.out, a.out, tol, "energies");
    expectClose(b.forces, a.forces, tol, "forces");
    for (size_t i = 0; i < a.grads.size(); ++i)
      expectClose(b.grads[i], a.grads[i], tol, host.namedParameters()[i].first);
    // The batch's own edges are ignored: the host's radius graph in the batch changes nothing.
    EXPECT_TRUE(runModel(device, hostBatch, r).out.bitEqual(b.out));
  }
}

TEST(SchNetRadiusGraphOnDevice, RealMoleculesAreBitIdenticalWithAnyPaddingAndThreads) {
  Generator gen(32);
  SchNet model(onDevice(DType::F32), gen);
  model.eval();
  const std::vector<Graph> mols = withoutEdges(qm7(10));
  NoGradGuard ng;
  setNumThreads(1);
  const Tensor tight = model.forward(batchOf(mols, 1, 0, 10)).value();
  const Tensor loose1 = model.forward(batchOf(mols, 5, 37, 13)).value();
  setNumThreads(2);
  const Tensor loose2 = model.forward(batchOf(mols, 5, 37, 13)).value();
  setNumThreads(0);
  EXPECT_TRUE(loose1.bitEqual(loose2)) << "1 against 2 threads";
  for (int64_t g = 0; g < static_cast<int64_t>(mols.size()); ++g)
    EXPECT_EQ(tight.at(g), loose1.at(g)) << "molecule " << g;
  for (int64_t g = static_cast<int64_t>(mols.size()); g < loose1.dim(0); ++g) EXPECT_EQ(loose1.at(g), 0.0);
}

TEST(SchNetRadiusGraphOnDevice, HandsTheEdgesToTheInteractionsAndNeedsNeighbours) {
  Generator gen(33);
  SchNet model(onDevice(DType::F64), gen);
  const Batch b = batchOf(withoutEdges(qm7(2, 4.0)), 1, 0, 2);
  BlockState s = model.runBlocks(BlockState(), b, 0, 1);
  ASSERT_TRUE(s.has("edge_index"));
  EXPECT_EQ(s.get("edge_index").shape(), (Shape{2, b.numNodes * 5}));
  SchNetOptions none = onDevice(DType::F64);
  none.maxNeighbors = 0;
  EXPECT_THROW(SchNet(none, gen), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
