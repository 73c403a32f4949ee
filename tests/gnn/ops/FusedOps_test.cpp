// Fused ops (linear, embeddingBag, reluMessageSum): gradients against finite differences, and the same
// values and gradients, bit for bit, as the chains of plain ops they replace.
#include "GradCheck.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {
using testing::expectGradientsMatch;
using testing::randomTensor;
using V = std::vector<Variable>;

Tensor randomIndex(const Shape& shape, int64_t limit, uint64_t seed) {
  Generator g(seed);
  Tensor t(shape, DType::I64);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = static_cast<int64_t>(g.nextBelow(limit));
  return t;
}

Tensor edgeIndexOf(const Tensor& src, const Tensor& dst) {
  const int64_t E = src.numel();
  Tensor ei({2, E}, DType::I64);
  std::copy(src.data<int64_t>(), src.data<int64_t>() + E, ei.data<int64_t>());
  std::copy(dst.data<int64_t>(), dst.data<int64_t>() + E, ei.data<int64_t>() + E);
  return ei;
}

void expectSameBits(const Tensor& a, const Tensor& b, const char* what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.at(i), b.at(i)) << what << " element " << i;
}

TEST(GradCheck, Linear) {
  expectGradientsMatch([](const V& v) { return linear(v[0], v[1], v[2]); },
                       {randomTensor({5, 3}, 1), randomTensor({4, 3}, 2), randomTensor({4}, 3)});
  expectGradientsMatch([](const V& v) { return linear(v[0], v[1]); }, {randomTensor({5, 3}, 4), randomTensor({4, 3}, 5)});
}

TEST(GradCheck, EmbeddingBag) {
  Tensor index = Tensor::fromVector<int64_t>({0, 3, 4, 1, 3, 4, 2, 3, 5, 0, 3, 4}, {4, 3});
  expectGradientsMatch([&](const V& v) { return embeddingBag(v[0], index); }, {randomTensor({6, 5}, 6)});
}

// A batch without edges (one single-atom molecule, concatenated without padding) gives the bond encoder an
// index of shape [0, 3]: the result is [0, D] and the weight's gradient is zero. Row-less tensors once divided
// by their zero row count to find their width (a floating-point exception).
TEST(EmbeddingBag, NoRowsGivesAnEmptyResultAndAZeroGradient) {
  Tensor empty = Tensor::empty({0, 3}, DType::I64);
  EXPECT_EQ(empty.cols(), 3);
  EXPECT_EQ(Tensor::empty({0, 4, 5}, DType::F32).cols(), 20);
  Variable w(randomTensor({6, 5}, 7), true);
  Variable y = embeddingBag(w, empty);
  ASSERT_EQ(y.shape(), (Shape{0, 5}));
  sum(y).backward();
  ASSERT_TRUE(w.grad().defined());
  for (int64_t i = 0; i < w.grad().numel(); ++i) EXPECT_EQ(w.grad().at(i), 0.0) << i;
}

TEST(GradCheck, ReluMessageSum) {
  // Node 3 receives nothing; node 0 receives twice; one self-loop.
  Tensor ei = Tensor::fromVector<int64_t>({0, 1, 2, 2, 4, 1, 0, 2, 0, 1, 0, 4}, {2, 6});
  expectGradientsMatch([&](const V& v) { return reluMessageSum(v[0], v[1], ei, 5); },
                       {randomTensor({5, 4}, 7), randomTensor({6, 4}, 8)});
  // With GIN's self term (1 + eps) x.
  expectGradientsMatch([&](const V& v) { return reluMessageSum(v[0], v[1], ei, 5, 1.3); },
                       {randomTensor({5, 4}, 7), randomTensor({6, 4}, 8)});
}

TEST(GradCheck, LayerNormRelu) {
  expectGradientsMatch([](const V& v) { return layerNormRelu(v[0], v[1], v[2]); },
                       {randomTensor({6, 5}, 9), randomTensor({5}, 10), randomTensor({5}, 11)});
}

// Large enough for several parallel chunks; run at 2 threads so chunking is exercised.
class FusedEqualsComposite : public ::testing::Test {
 protected:
  void SetUp() override { setNumThreads(2); }
  void TearDown() override { setNumThreads(0); }
};

TEST_F(FusedEqualsComposite, Linear) {
  Generator g(11);
  Tensor x = init::uniform({700, 96}, -1, 1, g, DType::F32), w = init::uniform({160, 96}, -1, 1, g, DType::F32);
  Tensor b = init::uniform({160}, -1, 1, g, DType::F32), r = init::uniform({700, 160}, -1, 1, g, DType::F32);
  auto run = [&](bool fused) {
    Variable xv(x.clone(), true), wv(w.clone(), true), bv(b.clone(), true);
    Variable y = fused ? linear(xv, wv, bv) : add(matmulNT(xv, wv), bv);
    sum(mul(y, Variable(r))).backward();
    return std::vector<Tensor>{y.value(), xv.grad(), wv.grad(), bv.grad()};
  };
  auto f = run(true), c = run(false);
  // The bias is added before the product accumulates (not after), so values agree to rounding, not bits.
  for (size_t k = 0; k < f.size(); ++k)
    for (int64_t i = 0; i < f[k].numel(); ++i)
      ASSERT_NEAR(f[k].at(i), c[k].at(i), 1e-4 * (1 + std::abs(c[k].at(i)))) << "output " << k << " element " << i;
  // Weight and input gradients do not involve the bias: identical. (The bias gradient is summed in the weight
  // gradient's row chunks, so it agrees to rounding, checked above.)
  expectSameBits(f[1], c[1], "input gradient");
  expectSameBits(f[2], c[2], "weight gradient");
}

TEST_F(FusedEqualsComposite, EmbeddingBag) {
  Generator g(12);
  Tensor w = init::uniform({40, 64}, -1, 1, g, DType::F32);
  Tensor index = randomIndex({3000, 3}, 40, 13);
  Tensor r = init::uniform({3000, 64}, -1, 1, g, DType::F32);
  auto run = [&](bool fused) {
    Variable wv(w.clone(), true);
    Variable y;
    if (fused) {
      y = embeddingBag(wv, index);
    } else {
      std::vector<int64_t> ptr(3001);
      for (int64_t i = 0; i <= 3000; ++i) ptr[i] = 3 * i;
      y = segmentSum(embedding(wv, index.reshape({9000})), Tensor::fromVector(ptr));
    }
    sum(mul(y, Variable(r))).backward();
    return std::vector<Tensor>{y.value(), wv.grad()};
  };
  auto f = run(true), c = run(false);
  expectSameBits(f[0], c[0], "output");
  expectSameBits(f[1], c[1], "weight gradient");
}

TEST_F(FusedEqualsComposite, ReluMessageSum) {
  Generator g(14);
  const int64_t N = 900, E = 2500, F = 48;
  Tensor x = init::uniform({N, F}, -1, 1, g, DType::F32), a = init::uniform({E, F}, -1, 1, g, DType::F32);
  Tensor src = randomIndex({E}, N, 15), dst = randomIndex({E}, N, 16);
  Tensor ei = edgeIndexOf(src, dst);
  Tensor r = init::uniform({N, F}, -1, 1, g, DType::F32);
  for (double self : {0.0, 1.0}) {
    auto run = [&](bool fused) {
      Variable xv(x.clone(), true), av(a.clone(), true);
      Variable y;
      if (fused) {
        y = reluMessageSum(xv, av, ei, N, self);
      } else {
        y = scatterSum(relu(add(gatherRows(xv, src), av)), dst, N);
        if (self != 0) y = add(xv, y);  // GIN: h + aggregated
      }
      sum(mul(y, Variable(r))).backward();
      return std::vector<Tensor>{y.value(), xv.grad(), av.grad()};
    };
    auto f = run(true), c = run(false);
    expectSameBits(f[0], c[0], "output");
    expectSameBits(f[1], c[1], "node gradient");
    expectSameBits(f[2], c[2], "edge gradient");
  }
}

TEST_F(FusedEqualsComposite, LayerNormRelu) {
  Generator g(17);
  Tensor x = init::uniform({500, 200}, -2, 2, g, DType::F32), r = init::uniform({500, 200}, -1, 1, g, DType::F32);
  Tensor gamma = init::uniform({200}, 0.5, 1.5, g, DType::F32), beta = init::uniform({200}, -0.5, 0.5, g, DType::F32);
  auto run = [&](bool fused) {
    Variable xv(x.clone(), true), gv(gamma.clone(), true), bv(beta.clone(), true);
    Variable y = fused ? layerNormRelu(xv, gv, bv) : relu(layerNorm(xv, gv, bv));
    sum(mul(y, Variable(r))).backward();
    return std::vector<Tensor>{y.value(), xv.grad(), gv.grad(), bv.grad()};
  };
  auto f = run(true), c = run(false);
  for (size_t k = 0; k < f.size(); ++k)
    for (int64_t i = 0; i < f[k].numel(); ++i)
      ASSERT_NEAR(f[k].at(i), c[k].at(i), 1e-5 * (1 + std::abs(c[k].at(i)))) << "output " << k << " element " << i;
}

// The ReLU's mask comes back from x_hat in the backward: the tape keeps the input, the row statistics and the
// affine parameters, not the [M, F] output (a tensor no other op keeps when the next product rounds its input
// to bfloat16). The gradients match the composite ops above and the finite differences of the op table.
TEST(LayerNormRelu, KeepsTheInputNotTheOutput) {
  Generator g(18);
  const int64_t M = 300, F = 64;
  Variable x(init::uniform({M, F}, -2, 2, g, DType::F32), true);
  Variable gamma(init::uniform({F}, 0.5, 1.5, g, DType::F32), true), beta(init::uniform({F}, -0.5, 0.5, g, DType::F32), true);
  const Variable y = layerNormRelu(x, gamma, beta);
  const TapeStats st = tapeStats(y);
  EXPECT_EQ(st.ops, 1);
  EXPECT_EQ(st.savedBytes, static_cast<int64_t>(x.value().nbytes() + M * 2 * sizeof(float) + gamma.value().nbytes() +
                                                beta.value().nbytes()));
}

TEST(FusedOpErrors, NameTheOffendingEntry) {
  Variable w(Tensor({4, 2}));
  try {
    embeddingBag(w, Tensor::fromVector<int64_t>({0, 1, 2, 4}, {2, 2}));
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("index 4 at row 1 column 1"), std::string::npos) << e.what();
  }
  Variable x(Tensor({3, 2})), a(Tensor({2, 2}));
  EXPECT_THROW(reluMessageSum(x, a, Tensor::fromVector<int64_t>({0, 1, 2, 3}, {2, 2}), 3), std::invalid_argument);
  EXPECT_THROW(reluMessageSum(x, Variable(Tensor({3, 2})), Tensor::fromVector<int64_t>({0, 1, 2, 0}, {2, 2}), 3),
               std::invalid_argument);
  EXPECT_THROW(reluMessageSum(x, a, Tensor::fromVector<int64_t>({0, 1, 2, 0}, {2, 2}), 4, 1.0),
               std::invalid_argument);  // a self term needs one output row per input row
  EXPECT_THROW(linear(x, Variable(Tensor({4, 3}))), std::invalid_argument);
  EXPECT_THROW(linear(x, Variable(Tensor({4, 2})), Variable(Tensor({3}))), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
