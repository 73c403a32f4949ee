// gatAttention and gatv2Attention's meanHeads: the same bits as meanAxis over the heads of the full output, in
// the forward and in every input's gradient, with and without attention dropout. (Gradients against finite
// differences, float32 and threads: the op table.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "GradCheck.h"
#include "gnn/ops/GraphAttention.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {
namespace {

// Random float32 values, U(-1, 1).
Tensor randomTensor(const Shape& shape, uint64_t seed) { return testing::randomTensor(shape, seed).to(DType::F32); }

// A random graph of `nodes` nodes and `edges` edges with a few self-loops (which the attention skips).
Tensor randomEdges(int64_t nodes, int64_t edges, uint64_t seed) {
  Generator g(seed);
  std::vector<int64_t> ei(static_cast<size_t>(2 * edges));
  for (auto& v : ei) v = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(nodes)));
  ei[0] = ei[static_cast<size_t>(edges)] = 3;
  return Tensor::fromVector(ei, {2, edges});
}

// f(options) -> the attention's output; its mean over the heads computed inside the op and by meanAxis.
template <class F>
void expectMeanHeadsEqualsMeanAxis(int64_t N, int64_t H, int64_t C, std::vector<Variable> inputs, F f,
                                   bool dropout) {
  auto run = [&](bool inside) {
    for (Variable& v : inputs) v.zeroGrad();
    ExecutionContext::current().setRandomKey({5, 1, 2});
    GraphAttentionOptions o;
    o.training = dropout;
    o.dropout = dropout ? 0.4 : 0.0;
    o.meanHeads = inside;
    Variable y = f(o);
    if (!inside) y = meanAxis(reshape(y, {N, H, C}), 1);
    EXPECT_EQ(y.shape(), (Shape{N, C}));
    // Weighted so that every output element's gradient differs.
    Variable loss = sum(mul(y, Variable(randomTensor({N, C}, 9))));
    loss.backward();
    std::vector<Tensor> out{y.value()};
    for (const Variable& v : inputs) out.push_back(v.grad());
    return out;
  };
  const std::vector<Tensor> inside = run(true), outside = run(false);
  ASSERT_EQ(inside.size(), outside.size());
  for (size_t k = 0; k < inside.size(); ++k) EXPECT_TRUE(inside[k].bitEqual(outside[k])) << "tensor " << k;
}

TEST(GatAttention, MeanHeadsHasTheBitsOfMeanAxisOverTheHeads) {
  const int64_t N = 37, H = 4, C = 7;
  const Tensor edges = randomEdges(N, 200, 3);
  Variable h(randomTensor({N, H * C}, 1), true), as(randomTensor({N, H}, 2), true),
      ad(randomTensor({N, H}, 3), true);
  for (bool dropout : {false, true})
    expectMeanHeadsEqualsMeanAxis(
        N, H, C, {h, as, ad},
        [&](const GraphAttentionOptions& o) { return gatAttention(h, as, ad, edges, Variable(), Variable(), o); },
        dropout);
}

TEST(Gatv2Attention, MeanHeadsHasTheBitsOfMeanAxisOverTheHeads) {
  const int64_t N = 29, H = 3, C = 5;
  const Tensor edges = randomEdges(N, 150, 4);
  Variable xl(randomTensor({N, H * C}, 4), true), xr(randomTensor({N, H * C}, 5), true),
      att(randomTensor({H, C}, 6), true);
  for (bool dropout : {false, true})
    expectMeanHeadsEqualsMeanAxis(
        N, H, C, {xl, xr, att},
        [&](const GraphAttentionOptions& o) { return gatv2Attention(xl, xr, att, edges, Variable(), Variable(), o); },
        dropout);
}

// The bias added inside the op: the bits of add(attention, bias) in the forward, in both output layouts; its
// gradient the columns' sums of the output's gradient, and the other inputs' gradients unchanged.
TEST(GatAttention, BiasInsideHasTheBitsOfAnAddAfter) {
  const int64_t N = 33, H = 2, C = 6;
  const Tensor edges = randomEdges(N, 180, 5);
  for (bool mean : {false, true}) {
    const int64_t W = mean ? C : H * C;
    Variable h(randomTensor({N, H * C}, 21), true), as(randomTensor({N, H}, 22), true),
        ad(randomTensor({N, H}, 23), true), b(randomTensor({W}, 24), true);
    const Tensor weights = randomTensor({N, W}, 25);
    auto run = [&](bool inside) {
      for (Variable* v : {&h, &as, &ad, &b}) v->zeroGrad();
      GraphAttentionOptions o;
      o.meanHeads = mean;
      Variable y = inside ? gatAttention(h, as, ad, edges, Variable(), Variable(), o, b)
                          : add(gatAttention(h, as, ad, edges, Variable(), Variable(), o), b);
      sum(mul(y, Variable(weights))).backward();
      return std::vector<Tensor>{y.value(), h.grad(), as.grad(), ad.grad(), b.grad()};
    };
    const std::vector<Tensor> inside = run(true), after = run(false);
    for (size_t k = 0; k < 4; ++k) EXPECT_TRUE(inside[k].bitEqual(after[k])) << "mean " << mean << ", tensor " << k;
    ASSERT_EQ(inside[4].shape(), after[4].shape());
    for (int64_t i = 0; i < W; ++i) EXPECT_NEAR(inside[4].at(i), after[4].at(i), 1e-5) << "bias gradient " << i;
  }
}

// Attention dropout: the mask of edge e's head h is element e * H + h of the first stream after the key, the self
// term's of node i element i * H + h of the second (dropoutMask's draws), multiplying the normalised attention;
// against a direct float64 computation of GAT's attention with those masks.
TEST(GatAttention, DropoutMasksAreThoseOfTheEdgesAndNodesStreams) {
  const int64_t N = 9, E = 40, H = 2, C = 3;
  const double p = 0.35;
  const Tensor edges = randomEdges(N, E, 8);
  const Tensor V = testing::randomTensor({N, H * C}, 31), as = testing::randomTensor({N, H}, 32),
               ad = testing::randomTensor({N, H}, 33);
  ExecutionContext::current().setRandomKey({9, 4, 2});
  Generator edgeStream = ExecutionContext::current().nextRandomStream();
  Generator selfStream = ExecutionContext::current().nextRandomStream();
  const Tensor me = dropoutMask({E, H}, DType::F64, p, edgeStream), ms = dropoutMask({N, H}, DType::F64, p, selfStream);
  ExecutionContext::current().setRandomKey({9, 4, 2});
  GraphAttentionOptions o;
  o.training = true;
  o.dropout = p;
  const Tensor y = gatAttention(Variable(V), Variable(as), Variable(ad), edges, Variable(), Variable(), o).value();
  const int64_t* src = std::as_const(edges).data<int64_t>();
  const int64_t* dst = src + E;
  auto leaky = [](double z) { return z > 0 ? z : 0.2 * z; };
  for (int64_t i = 0; i < N; ++i)
    for (int64_t h = 0; h < H; ++h) {
      // The row's terms: its incoming edges that are not self-loops, then its self term (-1).
      std::vector<int64_t> terms;
      for (int64_t e = 0; e < E; ++e)
        if (dst[e] == i && src[e] != i) terms.push_back(e);
      terms.push_back(-1);
      std::vector<double> z;
      for (int64_t e : terms) z.push_back(leaky(as.at((e >= 0 ? src[e] : i) * H + h) + ad.at(i * H + h)));
      const double top = *std::max_element(z.begin(), z.end());
      double total = 0;
      for (double& v : z) total += (v = std::exp(v - top));
      for (int64_t c = 0; c < C; ++c) {
        double want = 0;
        for (size_t t = 0; t < terms.size(); ++t) {
          const int64_t e = terms[t], from = e >= 0 ? src[e] : i;
          const double mask = e >= 0 ? me.at(e * H + h) : ms.at(i * H + h);
          want += z[t] / total * mask * V.at(from * H * C + h * C + c);
        }
        EXPECT_NEAR(y.at(i * H * C + h * C + c), want, 1e-12) << "node " << i << ", head " << h << ", channel " << c;
      }
    }
}

}  // namespace
}  // namespace gnn
