// The kernels of GCN on large graphs: the normalised adjacency built by a counting sort (the same bits as the
// coordinate-sorting construction it replaced), SpMM at every feature width (register strips for widths without
// a kernel of their own), the same bits for 1 and 2 threads, a symmetric adjacency as its own transpose, and
// one adjacency per graph for NodeGCN's layers.
#include <gtest/gtest.h>

#include <cmath>

#include "gnn/autograd/Profiler.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"
#include "models/NodeGCN.h"

namespace gnn {
namespace {

// The construction normalizedAdjacency had before the counting sort: every entry's weight in double, then
// SparseMatrix::fromCoo (sorted by (row, column), duplicates summed in order, rounded once to dtype).
SparseMatrix referenceAdjacency(const Tensor& ei, int64_t n, bool addSelfLoops, bool normalize, DType dtype) {
  const int64_t E = ei.dim(1);
  const int64_t* s = ei.data<int64_t>();
  const int64_t* d = s + E;
  std::vector<int64_t> rows, cols;
  // PyG's add_remaining_self_loops (unit weights): the edges' self-loops dropped, one added per node.
  for (int64_t e = 0; e < E; ++e) {
    if (addSelfLoops && s[e] == d[e]) continue;
    rows.push_back(d[e]);
    cols.push_back(s[e]);
  }
  if (addSelfLoops)
    for (int64_t i = 0; i < n; ++i) {
      rows.push_back(i);
      cols.push_back(i);
    }
  std::vector<double> w(rows.size(), 1.0);
  if (normalize) {
    std::vector<double> deg(static_cast<size_t>(n), 0.0);
    for (int64_t r : rows) deg[r] += 1.0;
    for (size_t k = 0; k < rows.size(); ++k) {
      const double a = deg[rows[k]] > 0 ? 1.0 / std::sqrt(deg[rows[k]]) : 0.0;
      const double b = deg[cols[k]] > 0 ? 1.0 / std::sqrt(deg[cols[k]]) : 0.0;
      w[k] = a * b;
    }
  }
  return SparseMatrix::fromCoo(n, n, rows, cols, w, dtype);
}

// A directed multigraph with duplicates (up to 4 copies), existing self-loops, isolated nodes and a hub.
Tensor awkwardEdges(int64_t n, int64_t E, uint64_t seed) {
  Generator g(seed);
  Tensor ei({2, E}, DType::I64);
  int64_t* s = ei.data<int64_t>();
  int64_t* d = s + E;
  for (int64_t e = 0; e < E; ++e) {
    const uint64_t kind = g.nextBelow(10);
    s[e] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n - 10)));  // the last 10 nodes are isolated
    d[e] = kind == 0 ? 0 : kind == 1 ? s[e] : static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n - 10)));
    if (kind == 2 && e >= 3) {  // repeat an earlier edge
      s[e] = s[e - 3];
      d[e] = d[e - 3];
    }
  }
  return ei;
}

void expectSameMatrix(const SparseMatrix& a, const SparseMatrix& b) {
  ASSERT_EQ(a.rows(), b.rows());
  ASSERT_EQ(a.nnz(), b.nnz());
  EXPECT_EQ(a.rowPtr(), b.rowPtr());
  EXPECT_EQ(a.colIdx(), b.colIdx());
  EXPECT_TRUE(a.values().bitEqual(b.values()));
}

TEST(LargeGraphKernels, AdjacencyHasTheBitsOfTheCoordinateSortedConstruction) {
  const Tensor ei = awkwardEdges(500, 6000, 1);
  for (DType dtype : {DType::F32, DType::F64})
    for (bool loops : {true, false})
      for (bool norm : {true, false}) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + (loops ? " loops" : "") + (norm ? " normalized" : ""));
        expectSameMatrix(GCNConv::normalizedAdjacency(ei, 500, loops, norm, dtype),
                         referenceAdjacency(ei, 500, loops, norm, dtype));
      }
  // Over 2^20 edges the counting sort runs in 4 chunks: still the order (and the bits) of one pass.
  const Tensor many = awkwardEdges(20000, 1100000, 11);
  expectSameMatrix(GCNConv::normalizedAdjacency(many, 20000),
                   referenceAdjacency(many, 20000, true, true, DType::F32));
  // No edges at all: the identity (self-loops only).
  const Tensor none({2, 0}, DType::I64);
  expectSameMatrix(GCNConv::normalizedAdjacency(none, 7), referenceAdjacency(none, 7, true, true, DType::F32));
}

TEST(LargeGraphKernels, AdjacencySameBitsForOneAndTwoThreads) {
  const Tensor ei = awkwardEdges(20000, 1200000, 2);  // 4 chunks
  setNumThreads(1);
  SparseMatrix one = GCNConv::normalizedAdjacency(ei, 20000);
  setNumThreads(2);
  SparseMatrix two = GCNConv::normalizedAdjacency(ei, 20000);
  setNumThreads(0);
  expectSameMatrix(one, two);
}

TEST(LargeGraphKernels, AdjacencyRefusesAnEdgeOutsideTheNodes) {
  const Tensor ei = Tensor::fromVector<int64_t>({0, 1, 1, 5}, {2, 2});
  EXPECT_THROW(GCNConv::normalizedAdjacency(ei, 3), std::invalid_argument);
}

// Every width from 1 to 70 (the widths with a kernel of their own, and the register strips for the rest, with
// their overlapping last strip) against a float64 dense product, rows of several lengths, an isolated node.
TEST(LargeGraphKernels, SpmmEveryWidthMatchesTheDenseProduct) {
  Generator gen(3);
  const Tensor ei = awkwardEdges(300, 5000, 3);
  const SparseMatrix a = GCNConv::normalizedAdjacency(ei, 300);
  const RowMatrix<double> dense = a.toDense().matrix<float>().cast<double>();
  for (int64_t f = 1; f <= 70; ++f) {
    SCOPED_TRACE("width " + std::to_string(f));
    Tensor x = init::uniform({300, f}, -1, 1, gen);
    Tensor y = spmm(a, Variable(x)).value();
    const RowMatrix<double> ref = dense * x.matrix<float>().cast<double>();
    EXPECT_LT((y.matrix<float>().cast<double>() - ref).cwiseAbs().maxCoeff(), 1e-5);
  }
}

TEST(LargeGraphKernels, SpmmForwardAndBackwardSameBitsForOneAndTwoThreads) {
  const Tensor ei = awkwardEdges(30000, 600000, 4);
  const SparseMatrix a = GCNConv::normalizedAdjacency(ei, 30000);
  for (int64_t f : {16, 47, 100}) {
    SCOPED_TRACE("width " + std::to_string(f));
    Generator gen(static_cast<uint64_t>(f));
    const Tensor x0 = init::uniform({30000, f}, -1, 1, gen);
    auto run = [&](int threads) {
      setNumThreads(threads);
      Variable x(x0.clone(), true);
      Variable y = spmm(a, x);
      sum(mul(y, y)).backward();
      setNumThreads(0);
      return std::pair<Tensor, Tensor>{y.value(), x.grad()};
    };
    auto one = run(1), two = run(2);
    EXPECT_TRUE(one.first.bitEqual(two.first));
    EXPECT_TRUE(one.second.bitEqual(two.second));
  }
}

// An undirected graph (each edge both ways) gives a symmetric adjacency: its backward uses the matrix itself,
// nothing is transposed, and the gradient has the bits of a product with an explicitly built transpose.
TEST(LargeGraphKernels, SymmetricAdjacencyIsItsOwnTranspose) {
  Generator gen(9);
  const Tensor directed = awkwardEdges(400, 3000, 9);
  const int64_t E = directed.dim(1);
  Tensor both({2, 2 * E}, DType::I64);
  const int64_t* d = directed.data<int64_t>();
  int64_t* b = both.data<int64_t>();
  for (int64_t e = 0; e < E; ++e) {
    b[e] = d[e];
    b[2 * E + e] = d[E + e];
    b[E + e] = d[E + e];
    b[3 * E + e] = d[e];
  }
  const SparseMatrix sym = GCNConv::normalizedAdjacency(both, 400);
  const SparseMatrix asym = GCNConv::normalizedAdjacency(directed, 400);
  EXPECT_TRUE(sym.symmetric());
  EXPECT_FALSE(asym.symmetric());
  EXPECT_EQ(&sym.transposed(), &sym);
  EXPECT_NE(&asym.transposed(), &asym);
  // A value changed on one side only, or a non-square matrix: not symmetric.
  Tensor v = sym.values().clone();
  v.data<float>()[1] *= 2;
  EXPECT_FALSE(sym.withValues(v).symmetric());
  EXPECT_FALSE(SparseMatrix::fromCoo(2, 3, {0, 1}, {1, 0}, {1, 1}).symmetric());
  for (const SparseMatrix* a : {&sym, &asym}) {
    // The transpose built independently: coordinates swapped, sorted by fromCoo.
    std::vector<int64_t> rows, cols;
    std::vector<double> vals;
    for (int64_t r = 0; r < a->rows(); ++r)
      for (int64_t k = a->rowPtr()[r]; k < a->rowPtr()[r + 1]; ++k) {
        rows.push_back(a->colIdx()[k]);
        cols.push_back(r);
        vals.push_back(a->values().data<float>()[k]);
      }
    const SparseMatrix at = SparseMatrix::fromCoo(400, 400, rows, cols, vals);
    for (int64_t f : {7, 16, 47}) {
      Variable x(init::uniform({400, f}, -1, 1, gen), true);
      Tensor seed = init::uniform({400, f}, -1, 1, gen);
      Variable y = spmm(*a, x);
      sum(mul(y, Variable(seed))).backward();
      EXPECT_TRUE(x.grad().bitEqual(spmm(at, Variable(seed)).value())) << "width " << f;
    }
  }
}

TEST(LargeGraphKernels, NodeGcnBuildsOneAdjacencyPerGraphForBothLayers) {
  Generator gen(5);
  for (bool cached : {true, false}) {
    SCOPED_TRACE(cached ? "cached" : "uncached");
    NodeGCNOptions o;
    o.cached = cached;
    o.dropout = 0;
    NodeGCN net(8, 4, 3, gen, o);
    const Tensor ei = awkwardEdges(200, 1500, 6);
    Variable x(init::uniform({200, 8}, -1, 1, gen));
    Tensor first = net.forward(x, ei).value();
    EXPECT_EQ(net.conv1().adjacencyBuilds() + net.conv2().adjacencyBuilds(), 1);
    Tensor again = net.forward(x, ei).value();
    EXPECT_TRUE(first.bitEqual(again));
    // Cached: the graph's matrix is kept; uncached: it went with the forward.
    EXPECT_EQ(net.conv1().adjacencyBuilds() + net.conv2().adjacencyBuilds(), cached ? 1 : 2);
    // The same output as two layers each building their own.
    GCNConv c1(8, 4, gen), c2(4, 3, gen);
    c1.weight().value() = net.conv1().weight().value().clone();
    c2.weight().value() = net.conv2().weight().value().clone();
    Tensor ref = c2.forward(relu(c1.forward(x, ei)), ei).value();
    EXPECT_TRUE(ref.bitEqual(first));
  }
}

TEST(LargeGraphKernels, AdjacencyBuildIsItsOwnOpInAProfile) {
  Generator gen(7);
  GCNConv conv(4, 4, gen);
  const Tensor ei = awkwardEdges(100, 800, 7);
  OpProfiler prof;
  {
    ObserverScope watch(prof);
    ObserverScope::mark();
    conv.forward(Variable(init::uniform({100, 4}, -1, 1, gen)), ei);
    conv.forward(Variable(init::uniform({100, 4}, -1, 1, gen)), ei);  // cached: no second build
  }
  int64_t calls = 0;
  for (const OpProfiler::Row& r : prof.rows())
    if (r.op == "gcnNorm") calls += r.calls;
  EXPECT_EQ(calls, 1);
}

TEST(LargeGraphKernels, SharedCacheRequiresTheSameOptions) {
  Generator gen(8);
  GCNConvOptions plain;
  plain.normalize = false;
  GCNConv a(2, 2, gen), b(2, 2, gen, plain);
  EXPECT_THROW(b.shareAdjacencyWith(a), std::invalid_argument);
}

}  // namespace
}  // namespace gnn

namespace gnn {
namespace {

// Cluster-GCN's evaluations: an uncached model keeps the whole graph's matrix between batches whose matrices
// go with their forward (and with more batches prepared than the cache holds), and computes the same bits.
TEST(LargeGraphKernels, AKeptGraphIsBuiltOnceAmongBatchesThatAreNot) {
  Generator gen(9);
  NodeGCNOptions o;
  o.cached = false;
  o.dropout = 0;
  NodeGCN net(8, 4, 3, gen, o);
  const Tensor whole = awkwardEdges(200, 1500, 6);
  net.keepAdjacencyOf(whole, 200);
  Variable x(init::uniform({200, 8}, -1, 1, gen));
  auto builds = [&] { return net.conv1().adjacencyBuilds() + net.conv2().adjacencyBuilds(); };
  const Tensor first = net.forward(x, whole).value();
  EXPECT_EQ(builds(), 1);
  for (int k = 0; k < 3; ++k) {  // three batches, each prepared ahead and then run
    const Tensor batch = awkwardEdges(200, 400 + 50 * k, 10 + k);
    Batch b;
    b.edgeIndex = batch;
    b.x = x.value();
    net.prepare(b);
    (void)net.forward(x, batch);
  }
  EXPECT_EQ(builds(), 4);
  const Tensor again = net.forward(x, whole).value();
  EXPECT_EQ(builds(), 4) << "the kept graph's matrix was rebuilt";
  EXPECT_TRUE(first.bitEqual(again));
  // Written in place (a new graph in the same buffer): built again, not served stale.
  Tensor edited = whole.clone();
  net.keepAdjacencyOf(edited, 200);
  (void)net.forward(x, edited);
  EXPECT_EQ(builds(), 5);
  edited.data<int64_t>()[0] = (edited.data<int64_t>()[0] + 1) % 200;
  (void)net.forward(x, edited);
  EXPECT_EQ(builds(), 6);
}

}  // namespace
}  // namespace gnn
