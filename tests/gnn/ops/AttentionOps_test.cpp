// bmm, bmmNT and softmax: against per-matrix products and expanded biases, the mask's semantics, what the
// tape keeps. (Gradients against finite differences, float32 and threads: the op table.)
#include <gtest/gtest.h>

#include <cmath>

#include "GradCheck.h"

namespace gnn {
namespace {
using testing::randomTensor;

// Matrix i of a batch of [rows, cols] matrices.
RowMatrix<double> matrixOf(const Tensor& t, int64_t i, int64_t rows, int64_t cols) {
  return ConstMatrixMap<double>(t.data<double>() + i * rows * cols, rows, cols);
}

TEST(Bmm, EqualsPerMatrixProductsForwardAndBackward) {
  // Two matrices of 300 rows: fewer than 8, so each is split into row blocks (forward and gradients).
  for (const auto& lead : {Shape{2}, Shape{2, 3}}) {
    Shape as = lead, bs = lead;
    as.insert(as.end(), {300, 20});
    bs.insert(bs.end(), {20, 40});
    Variable a(randomTensor(as, 1), true), b(randomTensor(bs, 2), true);
    Variable y = bmm(a, b);
    Tensor r = randomTensor(y.shape(), 3);
    y.backward(r);
    const int64_t n = shapeNumel(lead);
    for (int64_t i = 0; i < n; ++i) {
      RowMatrix<double> A = matrixOf(a.value(), i, 300, 20), B = matrixOf(b.value(), i, 20, 40),
                        R = matrixOf(r, i, 300, 40);
      EXPECT_LT((matrixOf(y.value(), i, 300, 40) - A * B).cwiseAbs().maxCoeff(), 1e-12);
      EXPECT_LT((matrixOf(a.grad(), i, 300, 20) - R * B.transpose()).cwiseAbs().maxCoeff(), 1e-12);
      EXPECT_LT((matrixOf(b.grad(), i, 20, 40) - A.transpose() * R).cwiseAbs().maxCoeff(), 1e-12);
    }
  }
}

TEST(BmmNT, EqualsBmmWithTheSecondOperandTransposed) {
  Variable q(randomTensor({2, 4, 9, 8}, 4), true), k(randomTensor({2, 4, 7, 8}, 5), true);
  Variable s = bmmNT(q, k);
  ASSERT_EQ(s.shape(), (Shape{2, 4, 9, 7}));
  Tensor r = randomTensor(s.shape(), 6);
  s.backward(r);
  Variable q2(q.value().clone(), true), k2(k.value().clone(), true);
  Variable s2 = bmm(q2, transpose(k2, -1, -2));
  s2.backward(r);
  for (int64_t i = 0; i < s.value().numel(); ++i) EXPECT_NEAR(s.value().at(i), s2.value().at(i), 1e-13);
  for (int64_t i = 0; i < q.grad().numel(); ++i) EXPECT_NEAR(q.grad().at(i), q2.grad().at(i), 1e-13);
  for (int64_t i = 0; i < k.grad().numel(); ++i) EXPECT_NEAR(k.grad().at(i), k2.grad().at(i), 1e-13);
}

TEST(Bmm, RejectsShapesThatDoNotChainNamingBoth) {
  Variable a(Tensor({2, 3, 4})), b(Tensor({2, 5, 6})), c(Tensor({3, 4, 6}));
  try {
    bmm(a, b);
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3, 4]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2, 5, 6]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(bmm(a, c), std::invalid_argument);                          // batch 2 vs 3
  EXPECT_THROW(bmmNT(a, b), std::invalid_argument);                        // K 4 vs 6
  EXPECT_THROW(bmm(Variable(Tensor({3, 4})), Variable(Tensor({4, 2}))), std::invalid_argument);  // rank 2: matmul
  EXPECT_THROW(bmm(a, Variable(Tensor({2, 4, 6}, DType::F64))), std::invalid_argument);         // dtypes
}

TEST(Softmax, RowsSumToOneAndMatchExpOfLogSoftmax) {
  Tensor x = randomTensor({6, 9}, 7);
  Tensor y = softmax(Variable(x)).value();
  Tensor ref = gnn::exp(logSoftmax(Variable(x))).value();
  for (int64_t i = 0; i < 6; ++i) {
    double s = 0;
    for (int64_t j = 0; j < 9; ++j) s += y.at(i * 9 + j);
    EXPECT_NEAR(s, 1.0, 1e-14);
  }
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_NEAR(y.at(i), ref.at(i), 1e-14);
}

// bias [1, H, N, N] against an explicitly expanded [B, H, N, N] copy: same output, and the broadcast bias's
// gradient is the expanded one's summed over B.
TEST(Softmax, BroadcastBiasEqualsTheExpandedBias) {
  const int64_t B = 3, H = 2, N = 5;
  Tensor x = randomTensor({B, H, N, N}, 8);
  Tensor bias = randomTensor({1, H, N, N}, 9);
  Tensor expanded({B, H, N, N}, DType::F64);
  for (int64_t b = 0; b < B; ++b)
    std::copy(bias.data<double>(), bias.data<double>() + H * N * N, expanded.data<double>() + b * H * N * N);
  Tensor r = randomTensor({B, H, N, N}, 10);
  Variable xb(x, true), bb(bias, true), xe(x.clone(), true), be(expanded, true);
  Variable yb = softmax(xb, -1, bb), ye = softmax(xe, 3, be);
  EXPECT_TRUE(yb.value().bitEqual(ye.value()));
  yb.backward(r);
  ye.backward(r);
  EXPECT_TRUE(xb.grad().bitEqual(xe.grad()));
  for (int64_t i = 0; i < H * N * N; ++i) {
    double s = 0;
    for (int64_t b = 0; b < B; ++b) s += be.grad().at(b * H * N * N + i);
    EXPECT_NEAR(bb.grad().at(i), s, 1e-15);
  }
}

TEST(Softmax, MaskedEntriesAreExactlyZeroAndFullyMaskedRowsAreZeroNotNaN) {
  const int64_t N = 4;
  Tensor x = randomTensor({2, N, N}, 11);
  // Graph 0: row 1 keeps columns 0 and 2; row 3 keeps nothing. Graph 1: all kept.
  Tensor mask = Tensor::full({2, N, N}, 1, DType::U8);
  uint8_t* m = mask.data<uint8_t>();
  m[1 * N + 1] = m[1 * N + 3] = 0;
  for (int64_t j = 0; j < N; ++j) m[3 * N + j] = 0;
  Variable xv(x, true);
  Variable y = softmax(xv, -1, Variable(), mask);
  const Tensor& Y = y.value();
  EXPECT_EQ(Y.at(1 * N + 1), 0.0);
  EXPECT_EQ(Y.at(1 * N + 3), 0.0);
  // The kept entries: a softmax over the kept ones alone.
  const double e0 = std::exp(x.at(1 * N + 0)), e2 = std::exp(x.at(1 * N + 2));
  EXPECT_NEAR(Y.at(1 * N + 0), e0 / (e0 + e2), 1e-15);
  EXPECT_NEAR(Y.at(1 * N + 2), e2 / (e0 + e2), 1e-15);
  for (int64_t j = 0; j < N; ++j) EXPECT_EQ(Y.at(3 * N + j), 0.0);
  y.backward(randomTensor({2, N, N}, 12));
  for (int64_t i = 0; i < xv.grad().numel(); ++i) EXPECT_FALSE(std::isnan(xv.grad().at(i))) << i;
  EXPECT_EQ(xv.grad().at(1 * N + 1), 0.0);
  for (int64_t j = 0; j < N; ++j) EXPECT_EQ(xv.grad().at(3 * N + j), 0.0);
  // A key-padding mask [B, 1, N] broadcasts over the rows.
  Tensor keys = Tensor::fromVector<uint8_t>({1, 1, 0, 1, 0, 0, 0, 0}, {2, 1, N});
  Tensor yk = softmax(Variable(x), -1, Variable(), keys).value();
  for (int64_t i = 0; i < N; ++i) {
    EXPECT_EQ(yk.at(i * N + 2), 0.0);
    for (int64_t j = 0; j < N; ++j) EXPECT_EQ(yk.at(N * N + i * N + j), 0.0);
  }
}

TEST(Softmax, SavesOnlyItsOutput) {
  Variable x(randomTensor({2, 2, 3, 3}, 13), true), bias(randomTensor({2, 1, 3, 3}, 14), true);
  Tensor mask = Tensor::full({2, 1, 1, 3}, 1, DType::U8);
  Variable y = softmax(x, -1, bias, mask);
  TapeStats st = tapeStats(y);
  EXPECT_EQ(st.ops, 1);
  EXPECT_EQ(st.savedTensors, 1);
  EXPECT_EQ(st.savedBytes, static_cast<int64_t>(y.value().nbytes()));
}

TEST(Softmax, RejectsOtherAxesAndBiasesThatDoNotBroadcast) {
  Variable x(Tensor({2, 3, 4}));
  EXPECT_THROW(softmax(x, 1), std::invalid_argument);
  EXPECT_NO_THROW(softmax(x, 2));
  EXPECT_THROW(softmax(x, -1, Variable(Tensor({2, 3, 5}))), std::invalid_argument);
  EXPECT_THROW(softmax(x, -1, Variable(Tensor({2, 3, 1}))), std::invalid_argument);  // bias's last must be x's
  EXPECT_THROW(softmax(x, -1, Variable(Tensor({3, 3, 4}))), std::invalid_argument);
  EXPECT_THROW(softmax(x, -1, Variable(Tensor({2, 3, 4}, DType::F64))), std::invalid_argument);
  EXPECT_THROW(softmax(x, -1, Variable(), Tensor({2, 3, 4})), std::invalid_argument);  // mask must be uint8
  EXPECT_THROW(softmax(x, -1, Variable(), Tensor({2, 2, 4}, DType::U8)), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
