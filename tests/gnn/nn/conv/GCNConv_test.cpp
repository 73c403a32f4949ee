// GCNConv against a dense float64 reference of D^-1/2 (A + I) D^-1/2 X W^T + b (W: PyG's lin.weight [out, in]).
#include <gtest/gtest.h>

#include "gnn/nn/Init.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

// Directed edges with a duplicate-free pattern, one existing self-loop (node 2) and an isolated node (4).
Tensor edges() { return Tensor::fromVector<int64_t>({0, 1, 1, 2, 3, 2, 0, 1, 0, 2, 2, 3, 1, 2}, {2, 7}); }

RowMatrix<double> denseReference(const Tensor& ei, int64_t n, const RowMatrix<double>& x, const RowMatrix<double>& w,
                                 const Eigen::VectorXd& b) {
  RowMatrix<double> a = RowMatrix<double>::Zero(n, n);
  const int64_t* e = ei.data<int64_t>();
  int64_t E = ei.dim(1);
  for (int64_t k = 0; k < E; ++k) a(e[E + k], e[k]) += 1;  // row = target, column = source
  for (int64_t i = 0; i < n; ++i) a(i, i) = 1;  // add_remaining_self_loops: one self-loop per node, weight 1
  Eigen::VectorXd deg = a.rowwise().sum();
  Eigen::VectorXd dis = deg.array().rsqrt();
  RowMatrix<double> norm = dis.asDiagonal() * a * dis.asDiagonal();
  RowMatrix<double> out = norm * x * w.transpose();  // w: PyG's lin.weight [out, in]
  out.rowwise() += b.transpose();
  return out;
}

TEST(GCNConv, MatchesDenseReference) {
  Generator gen(3);
  GCNConvOptions opt;
  opt.dtype = DType::F64;
  GCNConv conv(3, 2, gen, opt);
  conv.bias()->value() = Tensor::fromVector<double>({0.1, -0.2});
  Tensor x = init::uniform({5, 3}, -1, 1, gen, DType::F64);
  Variable out = conv.forward(Variable(x), edges());
  RowMatrix<double> ref = denseReference(edges(), 5, x.matrix<double>(), conv.weight().value().matrix<double>(),
                                         conv.bias()->value().flat<double>().matrix());
  ASSERT_EQ(out.shape(), (Shape{5, 2}));
  EXPECT_LT((out.value().matrix<double>() - ref).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(GCNConv, SparseInputEqualsDenseInput) {
  Generator gen(4);
  GCNConv conv(3, 2, gen);
  Tensor x = Tensor::fromVector<float>({0, 1, 0, 0.5f, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0}, {5, 3});
  SparseMatrix xs = SparseMatrix::fromCoo(5, 3, {0, 1, 3, 4}, {1, 0, 2, 0}, {1, 0.5, 2, 1});
  Tensor dense = conv.forward(Variable(x), edges()).value();
  Tensor sparse = conv.forward(xs, edges()).value();
  EXPECT_LT((dense.matrix<float>() - sparse.matrix<float>()).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(GCNConv, CacheFollowsTheGraph) {
  // A cached layer given a different edge_index must not reuse the old normalisation.
  Generator gen(5);
  GCNConv cached(2, 2, gen), fresh(2, 2, gen);
  fresh.weight().value() = cached.weight().value().clone();
  Tensor x = init::uniform({5, 2}, -1, 1, gen);
  cached.forward(Variable(x), edges());
  Tensor other = Tensor::fromVector<int64_t>({4, 3, 3, 4}, {2, 2});
  Tensor a = cached.forward(Variable(x), other).value();
  Tensor b = fresh.forward(Variable(x), other).value();
  EXPECT_TRUE(a.bitEqual(b));
}

TEST(GCNConv, CacheSeesAnEdgeIndexOverwrittenInPlace) {
  // A device with static input buffers writes every step's graph into the same edge_index tensor: same
  // storage, same address, same shape. The cache must see the new contents (through the buffer's version).
  Generator gen(8);
  GCNConv cached(2, 2, gen), fresh(2, 2, gen);
  fresh.weight().value() = cached.weight().value().clone();
  Tensor x = init::uniform({5, 2}, -1, 1, gen);
  Tensor ei = edges();
  const void* storage = ei.storageId();
  cached.forward(Variable(x), ei);
  const int64_t other[14] = {4, 3, 2, 1, 0, 1, 2, 0, 0, 1, 4, 3, 3, 4};
  int64_t* p = ei.data<int64_t>();
  std::copy(other, other + 14, p);
  ASSERT_EQ(ei.storageId(), storage);
  Tensor a = cached.forward(Variable(x), ei).value();
  Tensor b = fresh.forward(Variable(x), ei).value();
  EXPECT_TRUE(a.bitEqual(b));
  EXPECT_EQ(cached.adjacencyBuilds(), 2);
}

TEST(GCNConv, CacheSeesAWriteThroughAnEarlierPointerOnceMarked) {
  Generator gen(9);
  GCNConv cached(2, 2, gen), fresh(2, 2, gen);
  fresh.weight().value() = cached.weight().value().clone();
  Tensor x = init::uniform({5, 2}, -1, 1, gen);
  Tensor ei = edges();
  int64_t* p = ei.data<int64_t>();  // taken before the first call: the write below bumps nothing by itself
  cached.forward(Variable(x), ei);
  p[0] = 4;
  ei.bumpVersion();
  EXPECT_TRUE(cached.forward(Variable(x), ei).value().bitEqual(fresh.forward(Variable(x), ei).value()));
}

TEST(GCNConv, CacheHitsForTheSameGraphAndMissesForAnotherView) {
  Generator gen(10);
  GCNConv conv(2, 2, gen);
  Tensor x = init::uniform({5, 2}, -1, 1, gen);
  Tensor ei = edges();
  Tensor first = conv.forward(Variable(x), ei).value();
  Tensor again = conv.forward(Variable(x), ei).value();
  EXPECT_EQ(conv.adjacencyBuilds(), 1);  // reading edge_index does not count as a write
  EXPECT_TRUE(first.bitEqual(again));
  conv.forward(Variable(x), edges());  // equal contents in another buffer: rebuilt, never confused
  EXPECT_EQ(conv.adjacencyBuilds(), 2);
  // Two views of one buffer (same storage and version) are different graphs.
  Tensor both = Tensor::fromVector<int64_t>({0, 1, 1, 2, 3, 4, 4, 3}, {4, 2});
  Tensor top = both.slice(0, 2), bottom = both.slice(2, 4);
  ASSERT_EQ(top.storageId(), bottom.storageId());
  GCNConv fresh(2, 2, gen);
  fresh.weight().value() = conv.weight().value().clone();
  conv.forward(Variable(x), top);
  EXPECT_TRUE(conv.forward(Variable(x), bottom).value().bitEqual(fresh.forward(Variable(x), bottom).value()));
}

TEST(GCNConv, CloneHasEqualWeightsInNewStorageAndItsOwnCache) {
  Generator gen(11);
  GCNConvOptions opt;
  opt.dtype = DType::F64;
  GCNConv conv(3, 2, gen, opt);
  conv.bias()->value() = Tensor::fromVector<double>({0.25, -0.5});
  std::unique_ptr<GCNConv> copy = cloneModule(conv);
  Tensor x = init::uniform({5, 3}, -1, 1, gen, DType::F64);
  EXPECT_TRUE(copy->forward(Variable(x), edges()).value().bitEqual(conv.forward(Variable(x), edges()).value()));
  EXPECT_NE(copy->weight().value().storageId(), conv.weight().value().storageId());
  EXPECT_EQ(copy->adjacencyBuilds(), 1);
}

TEST(GCNConv, GradientsReachWeightAndBias) {
  Generator gen(6);
  GCNConvOptions opt;
  opt.dtype = DType::F64;
  GCNConv conv(3, 2, gen, opt);
  Tensor x = init::uniform({5, 3}, -1, 1, gen, DType::F64);
  Variable loss = sum(conv.forward(Variable(x), edges()));
  loss.backward();
  // d sum(out) / d b = number of nodes; d/dW^T = X^T (Â^T 1) 1^T.
  EXPECT_NEAR(conv.bias()->grad().at(0), 5.0, 1e-12);
  SparseMatrix a = GCNConv::normalizedAdjacency(edges(), 5, true, true, DType::F64);
  RowMatrix<double> ad = a.toDense().matrix<double>();
  Eigen::VectorXd colsum = ad.colwise().sum().transpose();
  RowMatrix<double> expected = x.matrix<double>().transpose() * colsum * Eigen::RowVectorXd::Ones(2);
  ASSERT_EQ(conv.weight().shape(), (Shape{2, 3}));  // PyG's lin.weight [out, in]
  EXPECT_LT((conv.weight().grad().matrix<double>() - expected.transpose()).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(GCNConv, ParametersCarryPyGNamesAndShapes) {
  Generator gen(8);
  GCNConv conv(5, 3, gen);
  auto named = conv.namedParameters();
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].first, "lin.weight");
  EXPECT_EQ(named[0].second.shape(), (Shape{3, 5}));
  EXPECT_EQ(named[1].first, "bias");
  EXPECT_EQ(named[1].second.shape(), (Shape{3}));
}

TEST(GCNConv, SeveralSelfLoopsOnANodeCountAsOne) {
  // add_remaining_self_loops: a node with its own loops gets exactly one (a padding node under many padding
  // edges has degree 1, as in PyG); without added loops every copy counts.
  const Tensor ei = Tensor::fromVector<int64_t>({0, 1, 1, 1, 1, 0, 1, 1}, {2, 4});  // 0->1, 1->0, 1->1 twice
  RowMatrix<double> a = GCNConv::normalizedAdjacency(ei, 2, true, false, DType::F64).toDense().matrix<double>();
  EXPECT_EQ(a(1, 1), 1.0);
  EXPECT_EQ(a(0, 0), 1.0);
  RowMatrix<double> n = GCNConv::normalizedAdjacency(ei, 2, true, true, DType::F64).toDense().matrix<double>();
  EXPECT_NEAR(n(1, 1), 0.5, 1e-15);  // degree 2 (0->1 and one loop), not 3
  RowMatrix<double> raw = GCNConv::normalizedAdjacency(ei, 2, false, false, DType::F64).toDense().matrix<double>();
  EXPECT_EQ(raw(1, 1), 2.0);
}

TEST(GCNConv, RejectsBadInput) {
  Generator gen(7);
  GCNConv conv(3, 2, gen);
  EXPECT_THROW(conv.forward(Variable(Tensor({5, 4})), edges()), std::invalid_argument);
  Tensor bad = Tensor::fromVector<int64_t>({0, 9}, {2, 1});
  EXPECT_THROW(conv.forward(Variable(Tensor({5, 3})), bad), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
