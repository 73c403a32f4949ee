// Every op with a backward: analytic gradients against central finite differences in float64.
#include <gtest/gtest-spi.h>

#include "GradCheck.h"

namespace gnn {
namespace {
using testing::expectGradientsMatch;
using testing::randomTensor;
using V = std::vector<Variable>;

Tensor idx(std::vector<int64_t> v) { return Tensor::fromVector(v); }

TEST(GradCheck, Matmul) {
  expectGradientsMatch([](const V& v) { return matmul(v[0], v[1]); }, {randomTensor({5, 3}, 1), randomTensor({3, 4}, 2)});
}
TEST(Matmul, BlockedProductEqualsPlainProduct) {
  // Many row blocks, so the seams of the blocked product (forward and both gradients) are covered.
  Variable a(randomTensor({1000, 300}, 1), true), b(randomTensor({300, 40}, 2), true);
  Tensor r = randomTensor({1000, 40}, 3);
  sum(mul(matmul(a, b), Variable(r))).backward();
  RowMatrix<double> am = a.value().matrix<double>(), bm = b.value().matrix<double>(), rm = r.matrix<double>();
  EXPECT_LT((a.grad().matrix<double>() - rm * bm.transpose()).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((b.grad().matrix<double>() - am.transpose() * rm).cwiseAbs().maxCoeff(), 1e-10);
  NoGradGuard ng;
  EXPECT_LT((matmul(a, b).value().matrix<double>() - am * bm).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((matmulNT(a, Variable(randomTensor({40, 300}, 4))).value().matrix<double>() -
             am * randomTensor({40, 300}, 4).matrix<double>().transpose())
                .cwiseAbs()
                .maxCoeff(),
            1e-10);
}
TEST(GradCheck, MatmulNT) {
  expectGradientsMatch([](const V& v) { return matmulNT(v[0], v[1]); },
                       {randomTensor({5, 3}, 1), randomTensor({4, 3}, 2)});
}
TEST(GradCheck, AddSameRowColumn) {
  expectGradientsMatch([](const V& v) { return add(v[0], v[1]); }, {randomTensor({4, 3}, 1), randomTensor({4, 3}, 2)});
  expectGradientsMatch([](const V& v) { return add(v[0], v[1]); }, {randomTensor({4, 3}, 1), randomTensor({3}, 2)});
  expectGradientsMatch([](const V& v) { return add(v[0], v[1]); }, {randomTensor({4, 3}, 1), randomTensor({1, 3}, 2)});
  expectGradientsMatch([](const V& v) { return add(v[0], v[1]); }, {randomTensor({4, 3}, 1), randomTensor({4, 1}, 2)});
}
TEST(GradCheck, Sub) {
  expectGradientsMatch([](const V& v) { return sub(v[0], v[1]); }, {randomTensor({4, 3}, 1), randomTensor({3}, 2)});
}
TEST(GradCheck, MulSameRowColumn) {
  expectGradientsMatch([](const V& v) { return mul(v[0], v[1]); }, {randomTensor({4, 3}, 1), randomTensor({4, 3}, 2)});
  expectGradientsMatch([](const V& v) { return mul(v[0], v[1]); }, {randomTensor({4, 3}, 1), randomTensor({3}, 2)});
  expectGradientsMatch([](const V& v) { return mul(v[0], v[1]); }, {randomTensor({4, 3}, 1), randomTensor({4, 1}, 2)});
}
TEST(GradCheck, ScaleSumMeanConcat) {
  expectGradientsMatch([](const V& v) { return scale(v[0], -2.5); }, {randomTensor({3, 2}, 1)});
  expectGradientsMatch([](const V& v) { return sum(v[0]); }, {randomTensor({3, 2}, 1)});
  expectGradientsMatch([](const V& v) { return mean(v[0]); }, {randomTensor({3, 2}, 1)});
  expectGradientsMatch([](const V& v) { return concatCols({v[0], v[1]}); },
                       {randomTensor({3, 2}, 1), randomTensor({3, 4}, 2)});
}
TEST(GradCheck, Activations) {
  Tensor x = randomTensor({6, 5}, 3);
  x.flat<double>() *= 3.0;  // cover both sides of every kink and the saturating ranges
  expectGradientsMatch([](const V& v) { return relu(v[0]); }, {x});
  expectGradientsMatch([](const V& v) { return elu(v[0], 1.3); }, {x});
  expectGradientsMatch([](const V& v) { return gelu(v[0]); }, {x});
  expectGradientsMatch([](const V& v) { return tanh(v[0]); }, {x});
  expectGradientsMatch([](const V& v) { return sigmoid(v[0]); }, {x});
  expectGradientsMatch([](const V& v) { return softplus(v[0], 2.0, 5.0); }, {x});
  expectGradientsMatch([](const V& v) { return shiftedSoftplus(v[0]); }, {x});
}
TEST(GradCheck, Dropout) {
  // A fresh generator per call makes the mask part of the function.
  expectGradientsMatch(
      [](const V& v) {
        Generator g(7);
        return dropout(v[0], 0.4, g, true);
      },
      {randomTensor({8, 5}, 4)});
}
TEST(GradCheck, LogSoftmaxAndLayerNorm) {
  expectGradientsMatch([](const V& v) { return logSoftmax(v[0]); }, {randomTensor({4, 5}, 5)});
  expectGradientsMatch([](const V& v) { return layerNorm(v[0], v[1], v[2]); },
                       {randomTensor({4, 6}, 6), randomTensor({6}, 7), randomTensor({6}, 8)});
}
TEST(GradCheck, Embedding) {
  expectGradientsMatch([](const V& v) { return embedding(v[0], idx({2, 0, 2, 3})); }, {randomTensor({4, 3}, 9)});
}
TEST(GradCheck, Losses) {
  Tensor labels = idx({1, 0, 3, 2});
  Tensor mask = Tensor::fromVector<uint8_t>({1, 0, 1, 1});
  Tensor target = randomTensor({4, 2}, 10);
  Tensor rowMask = Tensor::fromVector<uint8_t>({1, 1, 0, 1});
  expectGradientsMatch([&](const V& v) { return nllLoss(logSoftmax(v[0]), labels, mask); }, {randomTensor({4, 4}, 11)});
  expectGradientsMatch([&](const V& v) { return crossEntropy(v[0], labels); }, {randomTensor({4, 4}, 12)});
  expectGradientsMatch([&](const V& v) { return mseLoss(v[0], target, rowMask); }, {randomTensor({4, 2}, 13)});
  expectGradientsMatch([&](const V& v) { return l1Loss(v[0], target); }, {randomTensor({4, 2}, 14)});
  Tensor binary = Tensor::fromVector<double>({1, 0, 0, 1, 1, 0, 1, 1}, {4, 2});
  expectGradientsMatch([&](const V& v) { return bceWithLogits(v[0], binary, rowMask); }, {randomTensor({4, 2}, 15)});
}
TEST(GradCheck, GatherAndScatter) {
  Tensor index = idx({3, 0, 3, 1, 0, 3});
  expectGradientsMatch([&](const V& v) { return gatherRows(v[0], index); }, {randomTensor({5, 3}, 16)});
  expectGradientsMatch([&](const V& v) { return scatterSum(v[0], index, 5); }, {randomTensor({6, 3}, 17)});
  expectGradientsMatch([&](const V& v) { return scatterMean(v[0], index, 5); }, {randomTensor({6, 3}, 18)});
  expectGradientsMatch([&](const V& v) { return scatterMax(v[0], index, 5); }, {randomTensor({6, 3}, 19)});
}
TEST(GradCheck, Segments) {
  Tensor ptr = idx({0, 2, 2, 5, 6});  // includes an empty segment
  expectGradientsMatch([&](const V& v) { return segmentSum(v[0], ptr); }, {randomTensor({6, 3}, 20)});
  expectGradientsMatch([&](const V& v) { return segmentMean(v[0], ptr); }, {randomTensor({6, 3}, 21)});
  expectGradientsMatch([&](const V& v) { return segmentMax(v[0], ptr); }, {randomTensor({6, 3}, 22)});
  expectGradientsMatch([&](const V& v) { return segmentSoftmax(v[0], ptr); }, {randomTensor({6, 2}, 23)});
}
TEST(GradCheck, Spmm) {
  SparseMatrix a = SparseMatrix::fromCoo(4, 5, {0, 0, 1, 3, 3, 3}, {1, 4, 0, 2, 2, 3}, {0.5, -1, 2, 1, 0.25, 3},
                                         DType::F64);
  expectGradientsMatch([&](const V& v) { return spmm(a, v[0]); }, {randomTensor({5, 3}, 24)});
}
TEST(GradCheck, ComposedTwoLayerNetwork) {
  // A chain of ops sharing inputs: gradients from several paths must accumulate.
  Tensor index = idx({0, 1, 2, 2, 1});
  expectGradientsMatch(
      [&](const V& v) {
        Variable h = tanh(add(matmul(v[0], v[1]), v[2]));
        Variable agg = scatterSum(gatherRows(h, index), idx({1, 2, 0, 1, 0}), 3);
        return add(mul(agg, h), h);
      },
      {randomTensor({3, 4}, 25), randomTensor({4, 2}, 26), randomTensor({2}, 27)});
}

TEST(OpErrors, ShapeMismatchNamesBothShapes) {
  Variable a(Tensor({2, 3})), b(Tensor({4, 5}));
  try {
    matmul(a, b);
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
    EXPECT_NE(m.find("[4, 5]"), std::string::npos) << m;
  }
  EXPECT_THROW(add(a, b), std::invalid_argument);
  EXPECT_THROW(gatherRows(a, idx({0, 2})), std::invalid_argument);  // index 2 is past the 2 rows
  EXPECT_THROW(segmentSum(a, idx({0, 3})), std::invalid_argument);  // ptr must end at the row count
}

}  // namespace
}  // namespace gnn

namespace gnn {
namespace {
// The checker itself must catch a wrong backward: an op whose gradient is off by a factor of two.
Variable wrongDouble(const Variable& a) {
  Tensor y = a.value().clone();
  y.flat<double>() *= 2.0;
  return Variable::record(OpInfo{"wrongDouble"}, y, {a}, {},
                          [](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>&) {
                            in[0].addGrad(gy);
                          });
}
TEST(GradCheck, DetectsAWrongBackward) {
  EXPECT_NONFATAL_FAILURE(
      testing::expectGradientsMatch([](const std::vector<Variable>& v) { return wrongDouble(v[0]); },
                                    {testing::randomTensor({1}, 1)}),
      "analytic");
}
}  // namespace
}  // namespace gnn
