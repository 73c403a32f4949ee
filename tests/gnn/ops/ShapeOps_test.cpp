// reshape, transpose, permute and cast: values, views, saved tensors, float16 as a storage type. (Gradients
// against finite differences: the op table.)
#include <gtest/gtest.h>

#include <cmath>

#include "ErrorMessage.h"
#include "GradCheck.h"

namespace gnn {
namespace {
using testing::messageOf;
using testing::randomTensor;


TEST(Reshape, IsAViewThatSavesNothingAndInfersMinusOne) {
  Variable x(randomTensor({3, 4}, 1), true);
  Variable y = reshape(x, {2, -1, 3});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(y.value().storageId(), x.value().storageId());
  EXPECT_EQ(tapeStats(y).savedBytes, 0);
  Tensor seed = randomTensor({2, 2, 3}, 2);
  y.backward(seed);
  EXPECT_EQ(x.grad().shape(), (Shape{3, 4}));
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(x.grad().at(i), seed.at(i));
}

TEST(Reshape, RejectsBadShapes) {
  Variable x(Tensor({3, 4}));
  EXPECT_NE(messageOf([&] { reshape(x, {5, 2}); }).find("[3, 4]"), std::string::npos);
  EXPECT_THROW(reshape(x, {-1, -1}), std::invalid_argument);
  EXPECT_THROW(reshape(x, {5, -1}), std::invalid_argument);
  EXPECT_THROW(reshape(x, {1, 1, 1, 3, 4}), std::invalid_argument);
}

TEST(Permute, MatchesIndexArithmeticForRankFour) {
  const Shape s{2, 3, 4, 5};
  Tensor x = randomTensor(s, 3);
  const std::vector<int> dims{2, 0, 3, 1};
  Tensor y = permute(Variable(x), dims).value();
  ASSERT_EQ(y.shape(), (Shape{4, 2, 5, 3}));
  int64_t k = 0;
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 5; ++c)
        for (int64_t d = 0; d < 3; ++d) {
          // Output index (a, b, c, d) reads input (b, d, a, c).
          EXPECT_EQ(y.at(k++), x.at(((b * 3 + d) * 4 + a) * 5 + c));
        }
}

TEST(Transpose, OfAMatrixIsEigensTransposeAndWorksOnAnyDtype) {
  Tensor x = randomTensor({7, 5}, 4);
  Tensor y = transpose(Variable(x), 0, 1).value();
  RowMatrix<double> want = x.matrix<double>().transpose();
  EXPECT_EQ(y.matrix<double>(), want);
  // Index and float16 tensors are moved without arithmetic.
  Tensor idx = Tensor::fromVector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(transpose(Variable(idx), -1, -2).value().at(1), 4);
  Tensor h = x.to(DType::F16);
  EXPECT_TRUE(transpose(Variable(h), 0, 1).value().bitEqual(Tensor(y).to(DType::F16)));
}

// The last two dimensions swapped go through 32 x 32 tiles: sizes that leave partial tiles on both sides, a
// batch dimension, one-wide matrices, a size large enough to split across threads; every element lands where
// the index arithmetic says. Float's 4-byte elements take 8 x 8 register blocks inside the tiles (with rows and
// columns left over in every tile for these sizes), double's 8-byte ones the element copy.
TEST(Transpose, OfTheLastTwoDimensionsInTilesMatchesIndexArithmetic) {
  for (DType dt : {DType::F64, DType::F32})
    for (const Shape& s : {Shape{3, 45, 70}, Shape{1, 33, 1}, Shape{1, 1, 65}, Shape{2, 700, 300}, Shape{1, 64, 1433},
                           Shape{1, 1433, 64}, Shape{2, 13, 11}}) {
      const Tensor x = randomTensor(s, 7).to(dt);
      const Tensor y = transpose(Variable(x), 1, 2).value();
      ASSERT_EQ(y.shape(), (Shape{s[0], s[2], s[1]}));
      for (int64_t b = 0; b < s[0]; ++b)
        for (int64_t r = 0; r < s[1]; ++r)
          for (int64_t c = 0; c < s[2]; ++c)
            ASSERT_EQ(y.at((b * s[2] + c) * s[1] + r), x.at((b * s[1] + r) * s[2] + c))
                << dtypeName(dt) << " " << shapeString(s);
    }
}

TEST(Transpose, TransposedIsTheOpsCopyOffTheTape) {
  const Tensor x = randomTensor({3, 5}, 9);
  const Tensor y = transposed(x);
  EXPECT_TRUE(y.bitEqual(transpose(Variable(x), 0, 1).value()));
  EXPECT_NE(y.storageId(), x.storageId());
  EXPECT_THROW(transposed(Tensor({2, 3, 4})), std::invalid_argument);
}

TEST(Permute, RejectsBadDimensionsNamingTheShape) {
  Variable x(Tensor({2, 3, 4}));
  EXPECT_NE(messageOf([&] { permute(x, {0, 1}); }).find("[2, 3, 4]"), std::string::npos);
  EXPECT_THROW(permute(x, {0, 1, 1}), std::invalid_argument);
  EXPECT_THROW(permute(x, {0, 1, 3}), std::invalid_argument);
  EXPECT_THROW(transpose(x, 0, 3), std::invalid_argument);
}

TEST(Transpose, SavesNothingAndItsGradientIsTheInversePermutation) {
  Variable x(randomTensor({2, 3, 4}, 5), true);
  Variable y = permute(x, {1, 2, 0});
  EXPECT_EQ(tapeStats(y).savedBytes, 0);
  Tensor seed = randomTensor(y.shape(), 6);
  y.backward(seed);
  // Permuting the seed back with the inverse permutation gives the gradient.
  Tensor back = permute(Variable(seed), {2, 0, 1}).value();
  EXPECT_TRUE(x.grad().bitEqual(back));
}

TEST(Cast, RoundTripsValuesEachDtypeHolds) {
  // Values float16 holds exactly survive float32 -> float16 -> float32; float32 values survive via float64.
  Tensor x = Tensor::fromVector<float>({0.5f, -1.25f, 1024.0f, 0.0f, -0.0f, 65504.0f, 6.103515625e-05f}, {7});
  Variable back = cast(cast(Variable(x), DType::F16), DType::F32);
  EXPECT_TRUE(back.value().bitEqual(x));
  Tensor y = randomTensor({50}, 7).to(DType::F32);
  EXPECT_TRUE(cast(cast(Variable(y), DType::F64), DType::F32).value().bitEqual(y));
  // Out of float16's range: infinity, as a float16 conversion does.
  Tensor big = Tensor::fromVector<double>({70000.0, -1e300}, {2});
  Tensor h = cast(Variable(big), DType::F16).value();
  EXPECT_TRUE(std::isinf(h.at(0)) && h.at(0) > 0);
  EXPECT_TRUE(std::isinf(h.at(1)) && h.at(1) < 0);
}

TEST(Cast, FromFloat64ToFloat16RoundsOnce) {
  // 1 + 2^-11 + 2^-30 lies just above the midpoint of 1 and 1 + 2^-10: the nearest float16 is 1 + 2^-10.
  // Through float it would first round to 1 + 2^-11, a tie, and then to 1 (ties to even).
  const double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  Tensor h = cast(Variable(Tensor::fromVector<double>({v, -v}, {2})), DType::F16).value();
  EXPECT_EQ(h.at(0), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(h.at(1), -(1.0 + std::ldexp(1.0, -10)));
}

TEST(Cast, SameDtypeIsTheVariableItself) {
  Variable x(randomTensor({3}, 8), true);
  Variable y = cast(x, DType::F64);
  EXPECT_EQ(y.value().storageId(), x.value().storageId());
  EXPECT_STREQ(y.opName(), "");
  EXPECT_THROW(cast(x, DType::I64), std::invalid_argument);
  EXPECT_THROW(cast(Variable(Tensor({3}, DType::I32)), DType::F32), std::invalid_argument);
}

TEST(Cast, Float16GradientIsTheCastOfTheIncomingGradient) {
  // float32 -> float16: the float16 gradient comes back as float32, exactly (float32 holds every float16).
  Variable x(randomTensor({4, 5}, 9).to(DType::F32), true);
  Variable h = cast(x, DType::F16);
  ASSERT_EQ(h.dtype(), DType::F16);
  Tensor seed16 = randomTensor({4, 5}, 10).to(DType::F16);
  h.backward(seed16);
  EXPECT_TRUE(x.grad().bitEqual(seed16.to(DType::F32)));

  // float16 -> float32: the float32 gradient is rounded to float16 (to nearest even, as Tensor::to).
  Variable x16(randomTensor({4, 5}, 11).to(DType::F16), true);
  Variable y = cast(x16, DType::F32);
  Tensor seed32 = randomTensor({4, 5}, 12).to(DType::F32);
  y.backward(seed32);
  ASSERT_EQ(x16.grad().dtype(), DType::F16);
  EXPECT_TRUE(x16.grad().bitEqual(seed32.to(DType::F16)));
}

TEST(Cast, Float16GradientsAccumulateInFloat32) {
  // x16 feeds two casts: its two gradients are added in float32, the sum stored as float16.
  Variable x16(randomTensor({6}, 13).to(DType::F16), true);
  Variable y = add(cast(x16, DType::F32), scale(cast(x16, DType::F32), 3.0));
  Tensor seed = Tensor::fromVector<float>({1, 0.5f, -2, 0.25f, 1e-3f, 3}, {6});
  y.backward(seed);
  ASSERT_EQ(x16.grad().dtype(), DType::F16);
  for (int64_t i = 0; i < 6; ++i) {
    const float g1 = static_cast<float>(Eigen::half(seed.data<float>()[i]));
    const float g2 = static_cast<float>(Eigen::half(3 * seed.data<float>()[i]));
    EXPECT_EQ(x16.grad().at(i), static_cast<float>(Eigen::half(g1 + g2))) << i;
  }
}

TEST(Cast, Float16ArithmeticIsRejectedWithAPointerToCast) {
  Variable h(randomTensor({3}, 14).to(DType::F16), true);
  const std::string m = messageOf([&] { relu(h); });
  EXPECT_NE(m.find("float16 is a storage type here: cast to float32 for arithmetic (gnn::cast)"), std::string::npos)
      << m;
}

TEST(Cast, MixedPrecisionStepKeepsFloat32Weights) {
  // Activations stored as float16 between layers, arithmetic and weights in float32.
  Variable w(randomTensor({3, 4}, 15).to(DType::F32), true);
  Tensor x16 = randomTensor({5, 3}, 16).to(DType::F16);
  Variable h16 = cast(relu(matmul(cast(Variable(x16), DType::F32), w)), DType::F16);
  Variable loss = sum(cast(h16, DType::F32));
  loss.backward();
  ASSERT_TRUE(w.hasGrad());
  EXPECT_EQ(w.grad().dtype(), DType::F32);
  // The same step in float32 throughout: the gradient differs by float16's rounding of the incoming 1s
  // (none: 1 is exact) and of x (exact too: x was float16 to begin with), so they agree exactly.
  Variable w2(w.value().clone(), true);
  sum(relu(matmul(Variable(x16.to(DType::F32)), w2))).backward();
  EXPECT_TRUE(w.grad().bitEqual(w2.grad()));
}

}  // namespace
}  // namespace gnn
