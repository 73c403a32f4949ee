// Same inputs, 1 vs 2 threads: every parallel op must give the same bits.
#include <gtest/gtest.h>

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

struct Outputs {
  std::vector<Tensor> values;
};

Outputs runAll() {
  Generator gen(11);
  Variable x(init::uniform({3000, 40}, -1, 1, gen), true);
  Variable w(init::uniform({40, 24}, -1, 1, gen), true);
  std::vector<int64_t> idx(20000), rows, cols;
  std::vector<double> vals;
  for (int64_t i = 0; i < 20000; ++i) {
    idx[i] = static_cast<int64_t>(gen.nextBelow(3000));
    rows.push_back(static_cast<int64_t>(gen.nextBelow(3000)));
    cols.push_back(static_cast<int64_t>(gen.nextBelow(3000)));
    vals.push_back(gen.nextUniform());
  }
  SparseMatrix a = SparseMatrix::fromCoo(3000, 3000, rows, cols, vals);
  Tensor index = Tensor::fromVector(idx);
  Generator drop(5);
  Variable h = relu(matmul(dropout(x, 0.3, drop, true), w));
  Variable g = gatherRows(h, index);
  Variable s = scatterSum(g, index, 3000);
  Variable y = add(spmm(a, h), s);
  // The fused layers of GIN: bond-style embedding bags, the ReLU message sum, linear and layer norm (its
  // parameter gradients are column sums, the linear weight gradient a product split over the 3000 rows).
  Variable table(init::uniform({30, 24}, -1, 1, gen), true);
  Tensor bags({20000, 3}, DType::I64), edgeIndex({2, 20000}, DType::I64);
  for (int64_t i = 0; i < 20000; ++i) {
    for (int64_t k = 0; k < 3; ++k) bags.data<int64_t>()[i * 3 + k] = static_cast<int64_t>(gen.nextBelow(10)) + 10 * k;
    edgeIndex.data<int64_t>()[i] = rows[i];
    edgeIndex.data<int64_t>()[20000 + i] = cols[i];
  }
  Variable m = reluMessageSum(y, embeddingBag(table, bags), edgeIndex, 3000);
  Variable lw(init::uniform({64, 24}, -1, 1, gen), true), lb(init::uniform({64}, -1, 1, gen), true);
  Variable gamma(init::uniform({64}, 0.5, 1.5, gen), true), beta(init::uniform({64}, -1, 1, gen), true);
  Variable z = layerNorm(linear(m, lw, lb), gamma, beta);
  Variable loss = mean(logSoftmax(z));
  loss.backward();
  return {{h.value(), s.value(), y.value(), m.value(), z.value(), loss.value(), x.grad(), w.grad(), table.grad(),
           lw.grad(), lb.grad(), gamma.grad(), beta.grad()}};
}

TEST(Determinism, OneAndTwoThreadsGiveTheSameBits) {
  setNumThreads(1);
  Outputs one = runAll();
  setNumThreads(2);
  Outputs two = runAll();
  setNumThreads(0);
  ASSERT_EQ(one.values.size(), two.values.size());
  for (size_t i = 0; i < one.values.size(); ++i) EXPECT_TRUE(one.values[i].bitEqual(two.values[i])) << "output " << i;
}

TEST(Determinism, GeneratorIsCounterBased) {
  Generator a(42), b(42);
  uint64_t fa = a.reserve(100);
  b.reserve(50);
  EXPECT_EQ(a.bits(fa + 70), b.bits(70));
  EXPECT_NE(Generator(1).bits(0), Generator(2).bits(0));
}

}  // namespace
}  // namespace gnn
