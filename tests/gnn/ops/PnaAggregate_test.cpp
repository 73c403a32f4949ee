// PNA's fused ops (gnn/ops/PnaAggregate.h, gnn/ops/ScaledBlockSum.h) against the unfused chains they replace, and
// pnaAggregate's cached edge groupings following an edge list rewritten in place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "GradCheck.h"
#include "gnn/ops/Ops.h"
#include "gnn/ops/PnaAggregate.h"
#include "gnn/ops/ScaledBlockSum.h"

namespace gnn {
namespace {

void expectNear(const Tensor& a, const Tensor& b, double tol, const char* what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i)
    EXPECT_NEAR(a.at(i), b.at(i), tol * std::max(1.0, std::abs(b.at(i)))) << what << " at " << i;
}

// 40 edges over 9 nodes (node 8 receives none) from 7 sources.
Tensor sources() {
  std::vector<int64_t> v(40);
  for (int64_t e = 0; e < 40; ++e) v[e] = (e * 5 + 1) % 7;
  return Tensor::fromVector(v, {40});
}
Tensor targets() {
  std::vector<int64_t> v(40);
  for (int64_t e = 0; e < 40; ++e) v[e] = (e * 7) % 9 == 3 ? 0 : (e * 3) % 8;
  return Tensor::fromVector(v, {40});
}

TEST(PnaAggregate, MatchesTheGatheredMessagesAggregated) {
  const std::vector<std::string> all = {"mean", "min", "max", "std", "var", "sum"};
  const Tensor src = sources(), dst = targets();
  Variable t(testing::randomTensor({9, 3}, 21), true), s(testing::randomTensor({7, 3}, 22), true),
      e(testing::randomTensor({40, 3}, 23), true);
  Variable t2(t.value().clone(), true), s2(s.value().clone(), true), e2(e.value().clone(), true);
  Variable fused = pnaAggregate(t, s, e, src, dst, 9, all);
  Variable plain = scatterMultiAggregate(add(add(gatherRows(t2, dst), gatherRows(s2, src)), e2), dst, 9, all);
  expectNear(fused.value(), plain.value(), 1e-12, "output");
  const Variable w(testing::randomTensor(fused.shape(), 24));
  sum(mul(fused, w)).backward();
  sum(mul(plain, w)).backward();
  expectNear(t.grad(), t2.grad(), 1e-12, "target gradient");
  expectNear(s.grad(), s2.grad(), 1e-12, "source gradient");
  expectNear(e.grad(), e2.grad(), 1e-12, "edge gradient");
}

TEST(PnaAggregate, FollowsAnEdgeListRewrittenInPlace) {
  Tensor edges = Tensor::fromVector<int64_t>({0, 1, 2, 2, 1, 0, 1, 1}, {2, 4});
  const Variable x(testing::randomTensor({3, 2}, 25));
  auto run = [&] {
    return pnaAggregate(x, x, Variable(), edges.slice(0, 1).reshape({4}), edges.slice(1, 2).reshape({4}), 3,
                        {"sum"})
        .value()
        .clone();
  };
  const Tensor before = run();
  edges.data<int64_t>()[4] = 2;  // edge 0 now ends at node 2 (the write bumps the buffer's version)
  const Tensor after = run();
  Tensor want = Tensor::zeros({3, 2}, DType::F64);
  const int64_t* ei = std::as_const(edges).data<int64_t>();
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t f = 0; f < 2; ++f)
      want.data<double>()[ei[4 + k] * 2 + f] += x.value().at(ei[4 + k] * 2 + f) + x.value().at(ei[k] * 2 + f);
  expectNear(after, want, 1e-12, "after the rewrite");
  EXPECT_FALSE(after.bitEqual(before));
}

TEST(ScaledBlockSum, MatchesScaledSlicesAdded) {
  Variable base(testing::randomTensor({6, 4}, 31), true), blocks(testing::randomTensor({6, 12}, 32), true),
      f1(testing::randomTensor({6, 1}, 33), true), f2(testing::randomTensor({6, 1}, 34), true);
  Variable base2(base.value().clone(), true), blocks2(blocks.value().clone(), true),
      g1(f1.value().clone(), true), g2(f2.value().clone(), true);
  Variable fused = scaledBlockSum(base, blocks, {Variable(), f1, f2});
  Variable plain = add(add(add(base2, sliceCols(blocks2, 0, 4)), mul(sliceCols(blocks2, 4, 8), g1)),
                       mul(sliceCols(blocks2, 8, 12), g2));
  expectNear(fused.value(), plain.value(), 1e-12, "output");
  const Variable w(testing::randomTensor({6, 4}, 35));
  sum(mul(fused, w)).backward();
  sum(mul(plain, w)).backward();
  expectNear(base.grad(), base2.grad(), 1e-12, "base gradient");
  expectNear(blocks.grad(), blocks2.grad(), 1e-12, "blocks gradient");
  expectNear(f1.grad(), g1.grad(), 1e-12, "factor gradient");
  expectNear(f2.grad(), g2.grad(), 1e-12, "factor gradient");
}

}  // namespace
}  // namespace gnn
