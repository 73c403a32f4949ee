// gnn/kernels: the float32 and bfloat16 GEMMs against a float64 reference, bfloat16 rounding, and the ops in
// bfloat16 precision against float32 (forward and gradients within bfloat16's error, the same bits for any
// thread count).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "PrecisionScope.h"
#include "gnn/kernels/BFloat16.h"
#include "gnn/kernels/Gemm.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

// C = op(A) op(B) in float64 from the stored matrices.
std::vector<double> reference(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const std::vector<float>& A,
                              const std::vector<float>& B) {
  std::vector<double> C(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double a = ta ? A[k * M + i] : A[i * K + k];
        const double b = tb ? B[j * K + k] : B[k * N + j];
        s += a * b;
      }
      C[i * N + j] = s;
    }
  return C;
}

std::vector<float> randomValues(size_t n, uint64_t seed) {
  Generator g(seed);
  Tensor t = init::normal({static_cast<int64_t>(n)}, 1.0, g, DType::F32);
  return std::vector<float>(t.data<float>(), t.data<float>() + n);
}

// K = 0 (a sum over no edges) gives zeros, or leaves C as it is when accumulating.
TEST(GemmKernels, Float32MatchesFloat64ReferenceForEveryLayout) {
  for (auto [M, N, K] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 1}, {49, 17, 7}, {96, 40, 1300}, {3, 4, 0}}) {
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool accumulate : {false, true}) {
          const auto A = randomValues(static_cast<size_t>(M * K), 1), B = randomValues(static_cast<size_t>(K * N), 2);
          std::vector<float> C(static_cast<size_t>(M * N), accumulate ? 1.5f : -7.0f);
          kernels::gemmF32(ta, tb, M, N, K, A.data(), ta ? M : K, B.data(), tb ? K : N, C.data(), N, accumulate);
          const auto R = reference(ta, tb, M, N, K, A, B);
          for (size_t i = 0; i < C.size(); ++i)
            ASSERT_NEAR(C[i], R[i] + (accumulate ? 1.5 : 0.0), 1e-4 * std::sqrt(static_cast<double>(K)) + 1e-5)
                << "M=" << M << " N=" << N << " K=" << K << " ta=" << ta << " tb=" << tb << " i=" << i;
        }
  }
}

TEST(GemmKernels, BFloat16ProductsAreExactProductsSummedInFloat32) {
  // Products of bfloat16 values are exact in float32, so against a float64 reference on the rounded inputs only
  // the float32 summation differs.
  for (auto [M, N, K] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{3, 5, 9}, {50, 33, 700}}) {
    for (bool tb : {false, true}) {
      auto A = randomValues(static_cast<size_t>(M * K), 3), B = randomValues(static_cast<size_t>(K * N), 4);
      std::vector<uint16_t> a(A.size()), b(B.size());
      for (size_t i = 0; i < A.size(); ++i) A[i] = kernels::fromBf16(a[i] = kernels::toBf16(A[i]));
      for (size_t i = 0; i < B.size(); ++i) B[i] = kernels::fromBf16(b[i] = kernels::toBf16(B[i]));
      std::vector<float> C(static_cast<size_t>(M * N));
      kernels::gemmBf16(false, tb, M, N, K, a.data(), K, b.data(), tb ? K : N, C.data(), N, false);
      const auto R = reference(false, tb, M, N, K, A, B);
      for (size_t i = 0; i < C.size(); ++i) ASSERT_NEAR(C[i], R[i], 1e-4 * std::sqrt(static_cast<double>(K))) << i;
    }
  }
}

// Weight gradients (A stored [K, M]) have a batch's row count as their depth: every depth runs on one primitive
// (per accumulate flag), so a training loop stops making primitives after its first batch, and each depth's sums are
// right, including depths past one chunk (kGemmDepthChunkBf16) and ones between chunks.
TEST(GemmKernels, BFloat16WeightGradientsOfEveryDepthShareAPrimitive) {
  if (!kernels::bf16Supported()) GTEST_SKIP() << "no oneDNN bfloat16 matmul below AVX-512";
  const int64_t M = 40, N = 24;
  const int64_t before = kernels::bf16PrimitivesMade();
  for (const int64_t K : {1, 7, 48, 333, 1023, 1024, 1025, 2500, 4097}) {
    auto A = randomValues(static_cast<size_t>(K * M), 5), B = randomValues(static_cast<size_t>(K * N), 6);
    std::vector<uint16_t> a(A.size()), b(B.size());
    for (size_t i = 0; i < A.size(); ++i) A[i] = kernels::fromBf16(a[i] = kernels::toBf16(A[i]));
    for (size_t i = 0; i < B.size(); ++i) B[i] = kernels::fromBf16(b[i] = kernels::toBf16(B[i]));
    std::vector<float> C(static_cast<size_t>(M * N));
    kernels::gemmBf16(true, false, M, N, K, a.data(), M, b.data(), N, C.data(), N, false);
    const auto R = reference(true, false, M, N, K, A, B);
    for (size_t i = 0; i < C.size(); ++i)
      ASSERT_NEAR(C[i], R[i], 1e-4 * std::sqrt(static_cast<double>(K))) << "K=" << K << " i=" << i;
  }
  // One primitive for the first chunk (C overwritten) and one for the later ones (summed into C).
  EXPECT_EQ(kernels::bf16PrimitivesMade() - before, 2);
}

TEST(GemmKernels, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(kernels::toBf16(1.0f), 0x3f80);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
  EXPECT_EQ(kernels::toBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(kernels::toBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(kernels::toBf16(-2.0f), 0xc000);
  EXPECT_TRUE(std::isnan(kernels::fromBf16(kernels::toBf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(kernels::fromBf16(kernels::toBf16(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
  // The vectorised row conversion agrees with the scalar one, NaN payloads included.
  std::vector<float> v = randomValues(1000, 5);
  uint32_t nanBits = 0x7f800001u;  // the smallest NaN payload must not round to infinity
  std::memcpy(&v[7], &nanBits, 4);
  std::vector<uint16_t> rows(v.size());
  kernels::toBf16Rows(v.data(), 10, 100, 100, rows.data());
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(rows[i], kernels::toBf16(v[i])) << i;
  EXPECT_TRUE(std::isnan(kernels::fromBf16(rows[7])));
}

struct LinearGrads {
  Tensor y, gx, gw, gb;
};

LinearGrads linearStep(const Tensor& x, const Tensor& w, const Tensor& b, MatmulPrecision p, int threads) {
  PrecisionScope precision(p);
  const int before = numThreads();
  setNumThreads(threads);
  Variable X(x.clone(), true), W(w.clone(), true), B(b.clone(), true);
  Variable y = linear(X, W, B);
  Variable loss = sum(mul(y, y));
  loss.backward();
  setNumThreads(before);
  return {y.value(), X.grad(), W.grad(), B.grad()};
}

double relativeError(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = a.data<float>()[i] - b.data<float>()[i];
    num += d * d;
    den += static_cast<double>(b.data<float>()[i]) * b.data<float>()[i];
  }
  return std::sqrt(num / den);
}

TEST(GemmKernels, LinearInBFloat16IsFloat32WithinBFloat16Error) {
  Generator g(11);
  Tensor x = init::normal({300, 200}, 1.0, g, DType::F32), w = init::normal({96, 200}, 0.1, g, DType::F32);
  Tensor b = init::normal({96}, 0.1, g, DType::F32);
  const LinearGrads f32 = linearStep(x, w, b, MatmulPrecision::Float32, 2);
  const LinearGrads bf16 = linearStep(x, w, b, MatmulPrecision::BFloat16, 2);
  // bfloat16 keeps 8 significant bits: one rounding of each input gives ~2^-9 relative error per product,
  // averaging down over the sum; the gradients pass through two rounded products.
  EXPECT_LT(relativeError(bf16.y, f32.y), 6e-3);
  EXPECT_GT(relativeError(bf16.y, f32.y), 1e-5) << "bf16 path not taken";
  EXPECT_LT(relativeError(bf16.gx, f32.gx), 1e-2);
  EXPECT_LT(relativeError(bf16.gw, f32.gw), 1e-2);
  EXPECT_LT(relativeError(bf16.gb, f32.gb), 1e-2);
  // The same bits for one thread and two.
  const LinearGrads one = linearStep(x, w, b, MatmulPrecision::BFloat16, 1);
  for (auto [a, c] : {std::pair{one.y, bf16.y}, {one.gx, bf16.gx}, {one.gw, bf16.gw}, {one.gb, bf16.gb}})
    EXPECT_EQ(std::memcmp(a.raw(), c.raw(), a.nbytes()), 0);
}

// linear rounds its input and weight to bfloat16 once in the forward, keeps them for the backward, and rounds the
// output gradient once for both backward products; matmulNT rounds every operand of every product itself. The
// same products either way, so the same bits: a last partial panel (M not a multiple of 48), the weight gradient
// in one product (M = 100) and summed over chunks of rows (M = 300, 2,007), an input without a gradient.
TEST(GemmKernels, LinearRoundsEachInputOnceWithTheBitsOfRoundingPerProduct) {
  PrecisionScope precision(MatmulPrecision::BFloat16);
  for (const int64_t M : {100, 300, 2007}) {
    Generator g(static_cast<uint64_t>(M));
    Tensor x = init::normal({M, 200}, 1.0, g, DType::F32), w = init::normal({96, 200}, 0.1, g, DType::F32);
    Tensor seed = init::normal({M, 96}, 1.0, g, DType::F32);
    for (const bool inputGrad : {true, false}) {
      Variable X1(x.clone(), inputGrad), W1(w.clone(), true), X2(x.clone(), inputGrad), W2(w.clone(), true);
      Variable viaLinear = linear(X1, W1, Variable()), viaMatmul = matmulNT(X2, W2);
      viaLinear.backward(seed);
      viaMatmul.backward(seed);
      EXPECT_TRUE(viaLinear.value().bitEqual(viaMatmul.value())) << M;
      EXPECT_TRUE(W1.grad().bitEqual(W2.grad())) << M;
      if (inputGrad) {
        EXPECT_TRUE(X1.grad().bitEqual(X2.grad())) << M;
      }
    }
  }
}

TEST(GemmKernels, ReportsTheInstructionSet) {
  const std::string isa = kernels::gemmIsa();
  EXPECT_FALSE(isa.empty());
  // libxsmm names the target of its JIT kernels; "generic" or "none" would mean no JIT (oneDNN does the work).
  const std::string plain = kernels::plainGemmTarget();
  EXPECT_FALSE(plain.empty());
  if (isa.rfind("avx", 0) == 0) {
    EXPECT_NE(plain, "none");
    EXPECT_NE(plain, "generic");
  }
  if (kernels::bf16Native()) {
    EXPECT_TRUE(kernels::bf16Supported());
  }
}

}  // namespace
}  // namespace gnn
