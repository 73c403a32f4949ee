// SAGEConv beyond the layer table: a dense float64 reference of each aggregation (the linear-first path
// included), the arguments PyG takes that are refused here, and clone().
#include <gtest/gtest.h>

#include "ErrorMessage.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/SAGEConv.h"
#include "gnn/ops/Ops.h"
#include "nn/SparseInputCheck.h"

namespace gnn {
namespace {

using json = nlohmann::json;
using testing::messageOf;

// A duplicate edge (0 -> 1 twice), a self-loop (2), an isolated node (4).
Tensor edges() { return Tensor::fromVector<int64_t>({0, 0, 1, 2, 3, 2, 1, 1, 2, 2, 2, 0}, {2, 6}); }

// W_l aggr(x_j) + b + W_r x_i, from the layer's own weights, node by node.
RowMatrix<double> reference(SAGEConv& conv, const Tensor& x, const std::string& aggr) {
  const auto params = conv.namedParameters();
  auto param = [&](const std::string& name) {
    for (const auto& [n, p] : params)
      if (n == name) return p.value();
    ADD_FAILURE() << "no " << name;
    return Tensor();
  };
  const RowMatrix<double> wl = param("lin_l.weight").matrix<double>(), wr = param("lin_r.weight").matrix<double>();
  const Eigen::RowVectorXd bl = param("lin_l.bias").flat<double>().matrix().transpose();
  const auto xm = x.matrix<double>();
  const Tensor ei = edges();
  const int64_t* e = ei.data<int64_t>();
  const int64_t E = ei.dim(1), N = x.dim(0);
  RowMatrix<double> out(N, wl.rows());
  for (int64_t i = 0; i < N; ++i) {
    Eigen::RowVectorXd acc = Eigen::RowVectorXd::Zero(x.dim(1));
    int64_t count = 0;
    for (int64_t k = 0; k < E; ++k) {
      if (e[E + k] != i) continue;
      acc = aggr == "max" && count > 0 ? acc.cwiseMax(xm.row(e[k])).eval() : (acc + xm.row(e[k])).eval();
      ++count;
    }
    if (aggr == "mean" && count > 0) acc /= static_cast<double>(count);
    out.row(i) = acc * wl.transpose() + bl + xm.row(i) * wr.transpose();
  }
  return out;
}

TEST(SAGEConv, MatchesDenseReference) {
  for (const char* aggr : {"mean", "sum", "max"})
    for (int64_t out : {2, 5}) {  // out < in: the Linear goes first for mean and sum
      SCOPED_TRACE(std::string(aggr) + " out " + std::to_string(out));
      Generator gen(3);
      auto conv = SAGEConv::fromPyG({{"in_channels", 3}, {"out_channels", out}, {"aggr", aggr}}, gen, DType::F64);
      for (auto& p : conv->parameters()) p.value() = init::uniform(p.shape(), -1, 1, gen, DType::F64);
      const Tensor x = init::uniform({5, 3}, -1, 1, gen, DType::F64);
      const Variable y = conv->forward(Variable(x), edges());
      EXPECT_LT((y.value().matrix<double>() - reference(*conv, x, aggr)).cwiseAbs().maxCoeff(), 1e-12);
    }
}

// The adjacency is cached per graph: an edge_index written in place (a device's static input buffer) is a new
// graph.
TEST(SAGEConv, CachedAdjacencyFollowsInPlaceWrites) {
  Generator gen(4);
  auto conv = SAGEConv::fromPyG({{"in_channels", 3}, {"out_channels", 4}, {"aggr", "sum"}}, gen);
  const Variable x(init::uniform({5, 3}, -1, 1, gen));
  Tensor ei = edges();
  const Tensor first = conv->forward(x, ei).value();
  EXPECT_TRUE(conv->forward(x, ei).value().bitEqual(first));
  ei.data<int64_t>()[0] = 4;  // edge 0 now 4 -> 1
  const Tensor second = conv->forward(x, ei).value();
  std::unique_ptr<SAGEConv> fresh = cloneModule(*conv);
  EXPECT_TRUE(second.bitEqual(fresh->forward(x, ei).value()));
  EXPECT_FALSE(second.bitEqual(first));
}

// Sparse input features (the Linear layers that read x as sparse products; max on x's dense copy) give the
// dense input's outputs and parameter gradients, for each aggregation, with and without project.
TEST(SAGEConv, SparseInputGivesTheDenseOutputsAndGradients) {
  for (const char* aggr : {"mean", "sum", "max"})
    for (int64_t out : {2, 9})  // out < in projects first on the dense path; sparse input always does
      for (bool project : {false, true}) {
        SCOPED_TRACE(std::string(aggr) + " out " + std::to_string(out) + (project ? " project" : ""));
        Generator gen(5);
        auto conv = SAGEConv::fromPyG({{"in_channels", 6}, {"out_channels", out}, {"aggr", aggr},
                                       {"project", project}, {"normalize", project}, {"root_weight", out == 2}},
                                      gen);
        const Tensor x = testing::sparseLooking(5, 6, gen);
        const SparseMatrix xs = testing::sparseOf(x);
        const auto dense = testing::outputsAndGrads(*conv, [&] { return conv->forward(Variable(x), edges()); });
        const auto sparse = testing::outputsAndGrads(*conv, [&] { return conv->forward(xs, edges()); });
        testing::expectClose(sparse, dense, 1e-5);
      }
  Generator gen(6);
  auto conv = SAGEConv::fromPyG({{"in_channels", 6}, {"out_channels", 2}}, gen);
  EXPECT_THROW(conv->forward(testing::sparseOf(testing::sparseLooking(5, 4, gen)), edges()), std::invalid_argument);
}

TEST(SAGEConv, RefusesWhatItDoesNotOffer) {
  Generator gen(1);
  EXPECT_NE(messageOf([&] { SAGEConv::fromPyG({{"in_channels", -1}, {"out_channels", 2}}, gen); }).find("lazy"),
            std::string::npos);
  // Widths (source, target) that differ take the bipartite call.
  auto pair = SAGEConv::fromPyG({{"in_channels", {3, 4}}, {"out_channels", 2}}, gen);
  EXPECT_NE(messageOf([&] { pair->forward(Variable(Tensor::zeros({5, 3})), edges()); }).find("x_src, x_dst"),
            std::string::npos);
  EXPECT_NE(messageOf([&] {
              SAGEConv::fromPyG({{"in_channels", 3}, {"out_channels", 2}, {"aggr", {"mean", "max"}}}, gen);
            }).find("aggr"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { SAGEConv::fromPyG({{"in_channels", 3}, {"out_channels", 2}, {"aggr", "lstm"}}, gen); })
                .find("lstm"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { SAGEConv::fromPyG({{"in_channels", 3}, {"out_channels", 2}, {"flow", "x"}}, gen); })
                .find("flow"),
            std::string::npos);
}

TEST(SAGEConv, CloneHasTheSameOutputs) {
  Generator gen(2);
  auto conv = SAGEConv::fromPyG({{"in_channels", 3}, {"out_channels", 4}, {"project", true}, {"normalize", true}},
                                gen);
  std::unique_ptr<SAGEConv> copy = cloneModule(*conv);
  const Variable x(init::uniform({5, 3}, -1, 1, gen));
  EXPECT_TRUE(copy->forward(x, edges()).value().bitEqual(conv->forward(x, edges()).value()));
  EXPECT_EQ(copy->namedParameters().size(), 5u);  // lin.weight, lin.bias, lin_l.weight, lin_l.bias, lin_r.weight
}

// PyG's bipartite form (x_src, x_dst) on the graph's own nodes as sources and targets is the layer itself, for every
// aggregation and option; with widths (source, target) lin_l reads the sources and lin_r the targets.
TEST(SAGEConv, BipartiteFormOnOneNodeSetIsTheLayer) {
  for (const json& extra : {json{{"aggr", "mean"}}, json{{"aggr", "sum"}}, json{{"aggr", "max"}},
                            json{{"aggr", "min"}, {"project", true}}, json{{"aggr", "mean"}, {"normalize", true}}}) {
    Generator gen(4);
    json args = {{"in_channels", 3}, {"out_channels", 2}};
    args.update(extra);
    auto conv = SAGEConv::fromPyG(args, gen, DType::F64);
    const Variable x(init::uniform({5, 3}, -1, 1, gen, DType::F64));
    const Tensor a = conv->forward(x, edges()).value(), b = conv->forward(x, x, edges()).value();
    for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(a.at(i), b.at(i), 1e-12) << extra.dump();
  }
  Generator gen(5);
  auto pair = SAGEConv::fromPyG({{"in_channels", {3, 4}}, {"out_channels", 2}, {"aggr", "max"}}, gen);
  std::map<std::string, Shape> shapes;
  for (auto& [name, p] : pair->namedParameters()) shapes[name] = p.shape();
  EXPECT_EQ(shapes, (std::map<std::string, Shape>{{"lin_l.weight", {2, 3}}, {"lin_l.bias", {2}},
                                                  {"lin_r.weight", {2, 4}}}));
  // Sources 0-4, targets 0-1: an edge to target 2 is refused naming it.
  const Tensor ei = Tensor::fromVector<int64_t>({0, 4, 1, 2}, {2, 2});
  EXPECT_EQ(pair->forward(Variable(Tensor::zeros({5, 3})), Variable(Tensor::zeros({3, 4})), ei).shape(), (Shape{3, 2}));
  EXPECT_NE(messageOf([&] { pair->forward(Variable(Tensor::zeros({5, 3})), Variable(Tensor::zeros({2, 4})), ei); })
                .find("edge 1"),
            std::string::npos);
}

}  // namespace
}  // namespace gnn
