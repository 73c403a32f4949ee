// Same inputs, 1 vs 2 threads: every parallel op must give the same bits.
#include <gtest/gtest.h>

#include "gnn/Init.h"
#include "gnn/Ops.h"
#include "gnn/Parallel.h"

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
  Variable loss = mean(logSoftmax(y));
  loss.backward();
  return {{h.value(), s.value(), y.value(), loss.value(), x.grad(), w.grad()}};
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
