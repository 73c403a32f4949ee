// BasicGNNBlocks from sparse features: the same outputs and parameter gradients as from dense ones (jumping
// knowledge's layer outputs travelling between blocks included), and a clear refusal for the classes that take
// dense features only.
#include <gtest/gtest.h>

#include "gnn/nn/Init.h"
#include "gnn/system/ExecutionContext.h"
#include "models/BasicGNNBlocks.h"
#include "gnn/nn/SparseInputCheck.h"

namespace gnn {
namespace {

using json = nlohmann::json;

// 6 nodes: a duplicate edge, a self-loop, node 5 isolated.
Tensor graph() { return Tensor::fromVector<int64_t>({0, 0, 1, 1, 2, 3, 4, 4, 1, 1, 0, 2, 2, 4, 0, 3}, {2, 8}); }

std::unique_ptr<BasicGNNBlocks> blocks(const std::string& cls, json extra, Generator& gen, double inputDropout = 0) {
  json args = {{"in_channels", 9}, {"hidden_channels", 8}, {"num_layers", 3}, {"out_channels", 4},
               {"dropout", 0.3}};
  args.update(extra);
  BasicGNNOptions o = BasicGNNOptions::fromPyG(args);
  o.inputDropout = inputDropout;
  return std::make_unique<BasicGNNBlocks>(std::make_unique<BasicGNN>(cls, o, gen));
}

TEST(BasicGNNBlocks, SparseInputGivesTheDenseOutputsAndGradients) {
  const std::pair<std::string, json> models[] = {{"GAT", {{"heads", 2}, {"jk", "cat"}}},
                                                 {"GAT", {{"heads", 2}, {"v2", true}}},
                                                 {"GraphSAGE", {{"jk", "max"}}},
                                                 {"GIN", {{"norm", "batch_norm"}}},
                                                 {"GCN", json::object()}};
  for (const auto& [cls, extra] : models) {
    SCOPED_TRACE(cls + " " + extra.dump());
    Generator gen(3);
    const auto owned = blocks(cls, extra, gen);
    BasicGNNBlocks& net = *owned;
    const Tensor x = testing::sparseLooking(6, 9, gen);
    const SparseMatrix xs = testing::sparseOf(x);
    ExecutionContext& ctx = ExecutionContext::current();
    ctx.setRandomKey({17, 0, 0});
    const auto dense = testing::outputsAndGrads(net, [&] { return net.forward(Variable(x), graph()); });
    ctx.setRandomKey({17, 0, 0});
    const auto sparse = testing::outputsAndGrads(net, [&] { return net.forward(xs, graph()); });
    // At the run's scale: GIN's biases before batch_norm have no gradient in training, only rounding noise.
    // float32 sums in two orders (the sparse rows' and the GEMM kernel's, which the CPU decides), amplified by
    // batch_norm over 6 nodes: 1.04e-5 on an AMD EPYC's kernels, below 1e-5 on a Xeon's.
    testing::expectClose(sparse, dense, 3e-5, testing::largestMagnitude(dense));
    // The whole model's sparse forward is the blocks' one.
    net.eval();
    NoGradGuard ng;
    EXPECT_TRUE(net.forward(xs, graph()).value().bitEqual(net.model().forward(xs, graph()).value()));
  }
}

TEST(BasicGNNBlocks, InputDropoutOnSparseFeaturesIsKeyed) {
  Generator gen(4);
  const auto owned = blocks("GAT", {{"heads", 2}}, gen, 0.5);
  BasicGNNBlocks& net = *owned;
  const SparseMatrix xs = testing::sparseOf(testing::sparseLooking(6, 9, gen));
  ExecutionContext& ctx = ExecutionContext::current();
  ctx.setRandomKey({3, 0, 0});
  const Tensor a = net.forward(xs, graph()).value();
  ctx.setRandomKey({3, 0, 0});
  EXPECT_TRUE(net.forward(xs, graph()).value().bitEqual(a));
  net.eval();
  EXPECT_FALSE(net.forward(xs, graph()).value().bitEqual(a));
}

TEST(BasicGNNBlocks, DenseOnlyClassesRefuseSparseInput) {
  Generator gen(5);
  const auto owned = blocks("EdgeCNN", json::object(), gen);
  BasicGNNBlocks& net = *owned;
  const SparseMatrix xs = testing::sparseOf(testing::sparseLooking(6, 9, gen));
  EXPECT_FALSE(net.model().takesSparseInput());
  try {
    net.forward(xs, graph());
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dense"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gnn
