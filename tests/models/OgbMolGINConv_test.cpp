// GINConv through MessagePassing: the fused path (reluMessageSum in messageAndAggregate) and the unfused one
// (gather -> message -> scatter -> update) give the same bits, and both the numbers of the layer written out
// by hand.
#include "models/OgbMolGINConv.h"

#include <gtest/gtest.h>

#include "ByHand.h"
#include "Molecules.h"
#include "gnn/nn/Init.h"

namespace gnn {
namespace {

struct Result {
  Tensor out;
  std::vector<Tensor> grads;  // parameters, then h
};

Result runConv(OgbMolGINConv& conv, const Tensor& h0, const Batch& b, const Tensor& seed) {
  conv.zeroGrad();
  Variable h(h0, true);
  Variable out = conv.forward(h, b.edgeIndex, b.edgeAttr);
  out.backward(seed);
  Result r{out.value(), {}};
  for (const auto& p : conv.parameters()) r.grads.push_back(p.grad().clone());
  r.grads.push_back(h.grad());
  return r;
}

void expectSame(const Result& a, const Result& b, const std::string& what) {
  EXPECT_TRUE(a.out.bitEqual(b.out)) << what;
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i) EXPECT_TRUE(a.grads[i].bitEqual(b.grads[i])) << what << " grad " << i;
}

TEST(OgbMolGINConv, FusedAndUnfusedPathsAgreeBitForBit) {
  auto ds = test::molecules(40, 4);
  for (DType dt : {DType::F32, DType::F64}) {
    for (const Batch& b : test::batchesOf(ds, FixedSizeOptions{64, 128, 8}, PackingStrategy::PlannedPack)) {
      Generator g(5);
      OgbMolGINConv conv(8, g, true, dt);
      Tensor h0 = init::uniform({b.numNodes, 8}, -1, 1, g, dt);
      Tensor seed = init::uniform({b.numNodes, 8}, -1, 1, g, dt);
      Result fused = runConv(conv, h0, b, seed);
      conv.setFused(false);
      Result unfused = runConv(conv, h0, b, seed);
      expectSame(fused, unfused, dtypeName(dt));

      // The layer as it was written before it went through propagate: the fused op with its self term.
      conv.zeroGrad();
      auto P = test::paramsOf(conv);
      Variable h(h0, true);
      Variable out = test::ginConv(P, "", h, b);
      out.backward(seed);
      Result byHand{out.value(), {}};
      for (const auto& p : conv.parameters()) byHand.grads.push_back(p.grad().clone());
      byHand.grads.push_back(h.grad());
      expectSame(fused, byHand, std::string("by hand ") + dtypeName(dt));
    }
  }
}

TEST(OgbMolGINConv, WithoutEdgeFeaturesSumsNeighbours) {
  Generator g(6);
  OgbMolGINConv conv(4, g, /*edgeFeatures=*/false, DType::F64);
  Tensor h0 = init::uniform({3, 4}, -1, 1, g, DType::F64);
  Tensor ei = Tensor::fromVector<int64_t>({0, 1, 2, 2, 2, 0}, {2, 3});  // 0->2, 1->2, 2->0
  Tensor out = conv.forward(Variable(h0), ei, Tensor()).value();
  auto P = test::paramsOf(conv);
  Variable z = add(Variable(h0), scatterSum(gatherRows(Variable(h0), edgeRow(ei, 0)), edgeRow(ei, 1), 3));
  z = linear(layerNormRelu(linear(z, P["mlp.0.weight"], P["mlp.0.bias"]), P["mlp.1.weight"], P["mlp.1.bias"]),
             P["mlp.3.weight"], P["mlp.3.bias"]);
  EXPECT_TRUE(out.bitEqual(z.value()));
}

}  // namespace
}  // namespace gnn
