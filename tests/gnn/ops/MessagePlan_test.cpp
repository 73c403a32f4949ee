#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ErrorMessage.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

using namespace gnn;

namespace {
// A radius-graph-like edge list: every ordered pair of 5 atoms, grouped by target, and each edge's pair row.
struct Edges {
  Tensor edgeIndex, pairOf;
  int64_t pairs = 0;
};
Edges allPairs(int64_t n) {
  std::vector<int64_t> src, dst, pair;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i)
      if (i != j) {
        src.push_back(i);
        dst.push_back(j);
        pair.push_back(std::min(i, j) * n + std::max(i, j));
      }
  std::vector<int64_t> ei(src);
  ei.insert(ei.end(), dst.begin(), dst.end());
  return {Tensor::fromVector(ei, {2, static_cast<int64_t>(src.size())}), Tensor::fromVector(pair), n * n};
}
}  // namespace

// One plan serves several sums: each gives the numbers (and gradients) of the op that checks its own indices.
TEST(MessagePlan, SumsOverAPlanMatchTheOwnIndicesOpToTheBit) {
  Generator gen(3);
  const Edges e = allPairs(5);
  const Tensor plan = messagePlan(e.edgeIndex, 5, 5, e.pairOf, e.pairs);
  for (int round = 0; round < 2; ++round) {
    const Tensor xv = init::uniform({5, 8}, -1, 1, gen), wv = init::uniform({e.pairs, 8}, -1, 1, gen);
    const Tensor cv = init::uniform({e.pairs}, 0, 1, gen), seed = init::uniform({5, 8}, -1, 1, gen);
    Variable x1(xv.clone(), true), w1(wv.clone(), true), c1(cv.clone(), true);
    Variable x2(xv.clone(), true), w2(wv.clone(), true), c2(cv.clone(), true);
    Variable y1 = filterMessageSum(x1, w1, e.edgeIndex, 5, e.pairOf, c1);
    Variable y2 = filterMessageSum(x2, w2, plan, c2);
    EXPECT_TRUE(y1.value().bitEqual(y2.value()));
    y1.backward(seed);
    y2.backward(seed);
    EXPECT_TRUE(x1.grad().bitEqual(x2.grad()));
    EXPECT_TRUE(w1.grad().bitEqual(w2.grad()));
    EXPECT_TRUE(c1.grad().bitEqual(c2.grad()));
  }
}

TEST(MessagePlan, ErrorsNameWhatDoesNotMatch) {
  const Edges e = allPairs(4);
  const Tensor plan = messagePlan(e.edgeIndex, 4, 4, e.pairOf, e.pairs);
  Variable x(Tensor::zeros({4, 3}, DType::F32)), w(Tensor::zeros({e.pairs, 3}, DType::F32));
  EXPECT_NE(gnn::testing::messageOf([&] {
              filterMessageSum(x, w, Tensor::zeros({40}, DType::I64));
            }).find("not one messagePlan built"),
            std::string::npos);
  Variable x5(Tensor::zeros({5, 3}, DType::F32));
  EXPECT_NE(gnn::testing::messageOf([&] {
              filterMessageSum(x5, w, plan);
            }).find("x has 5 rows, the plan's sources 4"),
            std::string::npos);
  Variable w2(Tensor::zeros({e.pairs - 1, 3}, DType::F32));
  EXPECT_NE(gnn::testing::messageOf([&] { filterMessageSum(x, w2, plan); }).find("filters"),
            std::string::npos);
  Tensor bad = e.pairOf.clone();
  bad.data<int64_t>()[3] = e.pairs;
  EXPECT_NE(gnn::testing::messageOf([&] { messagePlan(e.edgeIndex, 4, 4, bad, e.pairs); }).find("position 3"),
            std::string::npos);
}
