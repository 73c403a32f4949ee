// NNConv with its edge network's last Linear folded into the messages (x_j Theta_e = h_e A_j + B_j, A and B per
// node) gives the outputs and gradients of the layer as written: Theta_e made per edge, x_j Theta_e by bmm,
// summed at the targets (float64, so only the order of the sums differs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "gnn/nn/Init.h"
#include "gnn/nn/conv/NNConv.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

TEST(NNConv, FoldedEdgeNetworkGivesTheWrittenLayersNumbers) {
  Generator gen(4);
  const nlohmann::json args = {
      {"in_channels", 5},
      {"out_channels", 3},
      {"nn", {{"class", "MLP"}, {"args", {{"channel_list", {2, 6, 15}}, {"norm", nullptr}}}}}};
  std::unique_ptr<NNConv> conv = NNConv::fromPyG(args, gen, DType::F64);
  const Tensor edges = Tensor::fromVector<int64_t>({0, 1, 1, 2, 3, 3, 4, 1, 2, 0, 0, 1, 4, 2}, {2, 7});
  Variable x(init::normal({5, 5}, 1.0, gen, DType::F64), true);
  Variable e(init::normal({7, 2}, 1.0, gen, DType::F64), true);
  ASSERT_TRUE(conv->nn().endsInPlainLinear());

  Variable folded = conv->forward(x, edges, e);
  sum(mul(folded, folded)).backward();
  const Tensor gx = x.grad(), ge = e.grad();
  std::vector<Tensor> gp;
  for (auto& [name, p] : conv->namedParameters()) gp.push_back(p.grad());

  // The layer as written, from the same parameters.
  x.zeroGrad();
  e.zeroGrad();
  conv->zeroGrad();
  const Tensor src = Tensor::fromVector<int64_t>({0, 1, 1, 2, 3, 3, 4}, {7});
  const Tensor dst = Tensor::fromVector<int64_t>({1, 2, 0, 0, 1, 4, 2}, {7});
  const Variable theta = reshape(conv->nn().forward(e), {7, 5, 3});
  const Variable messages = reshape(bmm(reshape(gatherRows(x, src), {7, 1, 5}), theta), {7, 3});
  Variable written = scatterSum(messages, dst, 5);
  for (auto& [name, p] : conv->namedParameters())
    if (name == "lin.weight") written = add(written, matmulNT(x, p));
    else if (name == "bias") written = add(written, p);
  sum(mul(written, written)).backward();

  auto close = [](const Tensor& a, const Tensor& b) {
    double d = 0;
    for (int64_t i = 0; i < a.numel(); ++i) d = std::max(d, std::abs(a.at(i) - b.at(i)));
    return d;
  };
  EXPECT_LT(close(folded.value(), written.value()), 1e-12);
  EXPECT_LT(close(gx, x.grad()), 1e-12);
  EXPECT_LT(close(ge, e.grad()), 1e-12);
  size_t k = 0;
  for (auto& [name, p] : conv->namedParameters()) EXPECT_LT(close(gp[k++], p.grad()), 1e-12) << name;
}

}  // namespace
}  // namespace gnn
