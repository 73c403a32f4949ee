// The one product entry point (gnn/ops/Product.h): each of its paths against a plain triple loop in double
// (row blocks with and without a transposed operand and a bias; the weight-gradient shape P^T Q unchunked, in
// chunks, and in chunks computed transposed, with P's column sums; batched products with either operand
// transposed), the same bits on one and two threads, and operands rounded to bfloat16 beforehand giving the bits
// of the products that round them themselves.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "PrecisionScope.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Product.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using ops::Operand;

double at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::F32 ? static_cast<double>(t.data<float>()[i]) : t.data<double>()[i];
}

// op(a) op(b) (+ bias) of one matrix (a batch's `m`-th), summed in double.
std::vector<double> reference(const Tensor& a, bool ta, const Tensor& b, bool tb, const Tensor* bias, int64_t m = 0) {
  const int64_t ar = a.dim(-2), ac = a.dim(-1), br = b.dim(-2), bc = b.dim(-1);
  const int64_t M = ta ? ac : ar, K = ta ? ar : ac, N = tb ? br : bc;
  std::vector<double> out(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = bias ? at(*bias, j) : 0.0;
      for (int64_t k = 0; k < K; ++k)
        s += at(a, m * ar * ac + (ta ? k * ac + i : i * ac + k)) * at(b, m * br * bc + (tb ? j * bc + k : k * bc + j));
      out[static_cast<size_t>(i * N + j)] = s;
    }
  return out;
}

void expectNear(const Tensor& got, const std::vector<double>& want, double tol, int64_t offset = 0) {
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = at(got, offset + static_cast<int64_t>(i));
    ASSERT_NEAR(g, want[i], tol * (1.0 + std::fabs(want[i]))) << "element " << i;
  }
}

double tolerance(DType dt) { return dt == DType::F32 ? 2e-5 : 1e-12; }

struct ThreadsGuard {
  ~ThreadsGuard() { setNumThreads(0); }
};

TEST(Product, RowBlocksMatchAReferenceWithAndWithoutATransposeAndABias) {
  for (DType dt : {DType::F32, DType::F64})
    for (int64_t M : {1, 7, 50, 301}) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + " M=" + std::to_string(M));
      Generator g(M);
      const int64_t K = 37, N = 20;
      const Tensor a = init::normal({M, K}, 1.0, g, dt), bKN = init::normal({K, N}, 1.0, g, dt);
      const Tensor bNK = init::normal({N, K}, 1.0, g, dt), bias = init::normal({N}, 1.0, g, dt);
      expectNear(ops::product({&a}, {&bKN}), reference(a, false, bKN, false, nullptr), tolerance(dt));
      expectNear(ops::product({&a}, {&bNK, true}, &bias), reference(a, false, bNK, true, &bias), tolerance(dt));
    }
}

// Few rows: one kernel call; many: chunks summed in order; [R, C] with C not a multiple of 16 and R one: the
// chunks computed transposed.
TEST(Product, WeightGradientShapeMatchesAReferenceWithTheColumnSums) {
  struct Shape3 {
    int64_t L, R, C;
  };
  for (DType dt : {DType::F32, DType::F64})
    for (Shape3 s : {Shape3{100, 24, 40}, Shape3{2000, 24, 40}, Shape3{3000, 64, 50}}) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + " L=" + std::to_string(s.L) + " C=" + std::to_string(s.C));
      Generator g(s.L + s.C);
      const Tensor P = init::normal({s.L, s.R}, 1.0, g, dt), Q = init::normal({s.L, s.C}, 1.0, g, dt);
      Tensor sums;
      const Tensor out = ops::product({&P, true}, {&Q}, nullptr, &sums);
      ASSERT_EQ(out.shape(), (Shape{s.R, s.C}));
      expectNear(out, reference(P, true, Q, false, nullptr), tolerance(dt) * 10);
      std::vector<double> want(static_cast<size_t>(s.R), 0.0);
      for (int64_t i = 0; i < s.L; ++i)
        for (int64_t j = 0; j < s.R; ++j) want[static_cast<size_t>(j)] += at(P, i * s.R + j);
      expectNear(sums, want, tolerance(dt) * 10);
    }
}

TEST(Product, BatchedProductsMatchAReferenceWithEitherOperandTransposed) {
  for (DType dt : {DType::F32, DType::F64}) {
    Generator g(3);
    const int64_t B = 3, M = 40, K = 9, N = 12;
    const Tensor a = init::normal({B, M, K}, 1.0, g, dt), aT = init::normal({B, K, M}, 1.0, g, dt);
    const Tensor b = init::normal({B, K, N}, 1.0, g, dt), bT = init::normal({B, N, K}, 1.0, g, dt);
    const Tensor plain = ops::batchedProduct({&a}, {&b}), left = ops::batchedProduct({&aT, true}, {&b}),
                 right = ops::batchedProduct({&a}, {&bT, true});
    ASSERT_EQ(plain.shape(), (Shape{B, M, N}));
    ASSERT_EQ(left.shape(), (Shape{B, M, N}));
    for (int64_t m = 0; m < B; ++m) {
      expectNear(plain, reference(a, false, b, false, nullptr, m), tolerance(dt), m * M * N);
      expectNear(left, reference(aT, true, b, false, nullptr, m), tolerance(dt), m * M * N);
      expectNear(right, reference(a, false, bT, true, nullptr, m), tolerance(dt), m * M * N);
    }
  }
}

TEST(Product, SameBitsOnOneAndTwoThreads) {
  ThreadsGuard guard;
  Generator g(11);
  const Tensor x = init::normal({1500, 96}, 1.0, g), w = init::normal({80, 96}, 1.0, g);
  const Tensor bias = init::normal({80}, 1.0, g), gy = init::normal({1500, 80}, 1.0, g);
  const Tensor a = init::normal({4, 64, 32}, 1.0, g), b = init::normal({4, 48, 32}, 1.0, g);
  auto runAll = [&] {
    Tensor sums;
    std::vector<Tensor> r{ops::product({&x}, {&w, true}, &bias), ops::product({&gy, true}, {&x}, nullptr, &sums),
                          ops::batchedProduct({&a}, {&b, true})};
    r.push_back(sums);
    return r;
  };
  setNumThreads(1);
  const std::vector<Tensor> one = runAll();
  setNumThreads(2);
  const std::vector<Tensor> two = runAll();
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(one[i].bitEqual(two[i])) << "product " << i;
}

TEST(Product, OperandsRoundedBeforehandGiveTheBitsOfProductsThatRoundThemselves) {
  Generator g(5);
  const Tensor x = init::normal({700, 96}, 1.0, g), w = init::normal({40, 96}, 1.0, g);
  const Tensor bias = init::normal({40}, 1.0, g), gy = init::normal({700, 40}, 1.0, g);
  {
    PrecisionScope fp32(MatmulPrecision::Float32);
    EXPECT_FALSE(ops::roundedOperand(x).defined()) << "float32 precision reads the float32 values";
  }
  PrecisionScope bf16(MatmulPrecision::BFloat16);
  EXPECT_FALSE(ops::roundedOperand(init::normal({4, 4}, 1.0, g, DType::F64)).defined()) << "float64 is never rounded";
  const Tensor x16 = ops::roundedOperand(x), w16 = ops::roundedOperand(w), gy16 = ops::roundedOperand(gy);
  ASSERT_TRUE(x16.defined());
  EXPECT_EQ(x16.dtype(), DType::BF16);
  EXPECT_TRUE(ops::product({&x, false, &x16}, {&w, true, &w16}, &bias).bitEqual(ops::product({&x}, {&w, true}, &bias)));
  EXPECT_TRUE(ops::product({&gy, false, &gy16}, {nullptr, false, &w16}).bitEqual(ops::product({&gy}, {&w})));
  Tensor sums16, sums;
  const Tensor gw16 = ops::product({&gy, true, &gy16}, {nullptr, false, &x16}, nullptr, &sums16);
  EXPECT_TRUE(gw16.bitEqual(ops::product({&gy, true}, {&x}, nullptr, &sums)));
  EXPECT_TRUE(sums16.bitEqual(sums)) << "the bias gradient sums the float32 output gradient either way";
  // And bfloat16 is a different product from float32: the comparison above is not between equal paths.
  PrecisionScope fp32(MatmulPrecision::Float32);
  EXPECT_FALSE(ops::product({&x}, {&w, true}, &bias)
                   .bitEqual(ops::product({&x, false, &x16}, {&w, true, &w16}, &bias)));
}

}  // namespace
}  // namespace gnn
