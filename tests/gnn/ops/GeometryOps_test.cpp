// edgeDistances and pairwiseDistances: values, zero distances, what the tape keeps, bad indices.
// (Gradients against finite differences, float32 and threads: the op table.)
#include <gtest/gtest.h>

#include <cmath>

#include "GradCheck.h"

namespace gnn {
namespace {
using testing::randomTensor;

double distance(const Tensor& pos, int64_t i, int64_t j) {
  const int64_t D = pos.dim(-1);
  double s = 0;
  for (int64_t d = 0; d < D; ++d) s += (pos.at(i * D + d) - pos.at(j * D + d)) * (pos.at(i * D + d) - pos.at(j * D + d));
  return std::sqrt(s);
}

TEST(EdgeDistances, AreTheEdgeLengthsAndAZeroLengthEdgeHasGradientZero) {
  Tensor pos = randomTensor({4, 3}, 1);
  // Edge 2 is a self-loop; edge 3 joins node 3 to a copy of itself (node 0 moved onto node 3).
  pos.data<double>()[0] = pos.at(9), pos.data<double>()[1] = pos.at(10), pos.data<double>()[2] = pos.at(11);
  Tensor ei = Tensor::fromVector<int64_t>({0, 1, 2, 3, 1, 3, 2, 0}, {2, 4});
  Variable p(pos, true);
  Variable d = edgeDistances(p, ei);
  ASSERT_EQ(d.shape(), (Shape{4}));
  EXPECT_EQ(d.value().at(0), distance(pos, 1, 0));
  EXPECT_EQ(d.value().at(1), distance(pos, 3, 1));
  EXPECT_EQ(d.value().at(2), 0.0);
  EXPECT_EQ(d.value().at(3), 0.0);
  d.backward(Tensor::fromVector<double>({0, 0, 1, 1}));  // only the zero-length edges
  for (int64_t i = 0; i < p.grad().numel(); ++i) EXPECT_EQ(p.grad().at(i), 0.0) << i;
}

TEST(EdgeDistances, KeepsPositionsIndexAndOutputOnly) {
  Tensor ei = Tensor::fromVector<int64_t>({0, 1, 2, 1, 2, 0}, {2, 3});
  Variable p(randomTensor({3, 3}, 2), true);
  Variable d = edgeDistances(p, ei);
  EXPECT_EQ(tapeStats(d).savedBytes, static_cast<int64_t>(p.value().nbytes() + ei.nbytes() + d.value().nbytes()));
}

TEST(EdgeDistances, RejectsBadEdgeIndices) {
  Variable p(Tensor({3, 3}));
  EXPECT_THROW(edgeDistances(p, Tensor::fromVector<int64_t>({0, 3}, {2, 1})), std::invalid_argument);
  EXPECT_THROW(edgeDistances(p, Tensor::fromVector<int64_t>({0, -1}, {2, 1})), std::invalid_argument);
  EXPECT_THROW(edgeDistances(p, Tensor::fromVector<int64_t>({0, 1, 2}, {3, 1})), std::invalid_argument);
  EXPECT_THROW(edgeDistances(p, Tensor::fromVector<int32_t>({0, 1}, {2, 1})), std::invalid_argument);
}

TEST(PairwiseDistances, AreExactlySymmetricWithAZeroDiagonalAndMatchEdgeDistances) {
  Tensor pos = randomTensor({2, 5, 3}, 3);
  Tensor d = pairwiseDistances(Variable(pos)).value();
  ASSERT_EQ(d.shape(), (Shape{2, 5, 5}));
  std::vector<int64_t> src, dst;
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      src.push_back(j);
      dst.push_back(i);
    }
  std::vector<int64_t> both(src);
  both.insert(both.end(), dst.begin(), dst.end());
  Tensor ei = Tensor::fromVector(both, {2, 25});
  for (int64_t b = 0; b < 2; ++b) {
    Tensor one = pos.slice(b, b + 1).reshape({5, 3});
    Tensor e = edgeDistances(Variable(one), ei).value();
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        EXPECT_EQ(d.at((b * 5 + i) * 5 + j), d.at((b * 5 + j) * 5 + i));
        EXPECT_EQ(d.at((b * 5 + i) * 5 + j), e.at(i * 5 + j));
      }
    for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(d.at((b * 5 + i) * 5 + i), 0.0);
  }
  Variable p(pos, true);
  pairwiseDistances(p).backward(Tensor::full({2, 5, 5}, 1.0, DType::F64));
  for (int64_t i = 0; i < p.grad().numel(); ++i) EXPECT_TRUE(std::isfinite(p.grad().at(i)));
  EXPECT_THROW(pairwiseDistances(Variable(Tensor({5}))), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
