// RGCNConv beyond the layer table: its bipartite form (a classifier's last layer over one node type's rows) and
// the same bits on one and two threads for each of its three ways of computing (narrowing, square, widening), the
// table's thread check covering the narrowing one only.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/nn/Init.h"
#include "gnn/nn/conv/RGCNConv.h"
#include "gnn/system/Parallel.h"
#include "GradCheck.h"
#include "ParameterGradCheck.h"
#include "nn/PyGReference.h"

namespace gnn {
namespace {

using nlohmann::json;

struct TypedGraph {
  Tensor edgeIndex, edgeType;
};

TypedGraph randomTypedGraph(int64_t n, int64_t e, int64_t relations, uint64_t seed) {
  Generator g(seed);
  std::vector<int64_t> ei(static_cast<size_t>(2 * e)), t(static_cast<size_t>(e));
  for (int64_t k = 0; k < e; ++k) {
    ei[static_cast<size_t>(k)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n)));
    ei[static_cast<size_t>(e + k)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n)));
    t[static_cast<size_t>(k)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(relations)));
  }
  return {Tensor::fromVector(ei, {2, e}), Tensor::fromVector(t)};
}

// The layers of every path: narrowing (sources multiplied first), square and blocks (per-relation aggregates),
// widening (one stacked product), max (gathered messages).
std::vector<json> layerArgs(int64_t scale) {
  return {{{"in_channels", 4 * scale}, {"out_channels", 3 * scale}, {"num_relations", 3}},
          {{"in_channels", 4 * scale}, {"out_channels", 4 * scale}, {"num_relations", 3}, {"aggr", "add"}},
          {{"in_channels", 3 * scale}, {"out_channels", 5 * scale}, {"num_relations", 3}},
          {{"in_channels", 3 * scale}, {"out_channels", 5 * scale}, {"num_relations", 3}, {"num_bases", 2},
           {"root_weight", false}},
          {{"in_channels", 4 * scale}, {"out_channels", 6 * scale}, {"num_relations", 3}, {"num_blocks", 2}},
          {{"in_channels", 4 * scale}, {"out_channels", 5 * scale}, {"num_relations", 3}, {"aggr", "max"}}};
}

// Nodes [first, first + count) as the targets: the edges ending there, their targets counted from `first`.
TypedGraph edgesInto(const TypedGraph& g, int64_t first, int64_t count) {
  const int64_t E = g.edgeIndex.dim(1);
  std::vector<int64_t> src, dst, type;
  for (int64_t e = 0; e < E; ++e) {
    const int64_t d = g.edgeIndex.data<int64_t>()[E + e];
    if (d < first || d >= first + count) continue;
    src.push_back(g.edgeIndex.data<int64_t>()[e]);
    dst.push_back(d - first);
    type.push_back(g.edgeType.data<int64_t>()[e]);
  }
  const int64_t kept = static_cast<int64_t>(src.size());
  src.insert(src.end(), dst.begin(), dst.end());
  return {Tensor::fromVector(src, {2, kept}), Tensor::fromVector(type)};
}

TEST(RGCNConv, BipartiteFormGivesTheTargetsRowsOfTheWholeGraphs) {
  const TypedGraph g = randomTypedGraph(30, 160, 3, 5);
  const TypedGraph into = edgesInto(g, 10, 12);
  for (const json& args : layerArgs(1)) {
    Generator gen(3);
    auto conv = RGCNConv::fromPyG(args, gen, DType::F64);
    Generator xg(8);
    const Variable x(init::uniform({30, args["in_channels"].get<int64_t>()}, -1, 1, xg).to(DType::F64));
    const Tensor whole = conv->forward(x, g.edgeIndex, g.edgeType).value();
    const Tensor part = conv->forward(x, sliceRows(x, 10, 22), into.edgeIndex, into.edgeType).value();
    EXPECT_LE(testing::relativeError(part, sliceRows(Variable(whole), 10, 22).value()), 1e-12) << args.dump();
  }
}

TEST(RGCNConv, BipartiteFormsGradientsMatchCentralDifferences) {
  const TypedGraph g = randomTypedGraph(12, 50, 3, 6);
  const TypedGraph into = edgesInto(g, 4, 5);
  for (const json& args : layerArgs(1)) {
    Generator gen(3);
    auto conv = RGCNConv::fromPyG(args, gen, DType::F64);
    Generator xg(9);
    const int64_t in = args["in_channels"].get<int64_t>();
    Variable xs(init::uniform({12, in}, -1, 1, xg).to(DType::F64), true);
    Variable xd(init::uniform({5, in}, -1, 1, xg).to(DType::F64), true);
    std::vector<std::pair<std::string, Variable>> vars = {{"x_src", xs}};
    if (args.value("root_weight", true)) vars.push_back({"x_dst", xd});  // read by the root weight only
    for (auto& [name, p] : conv->namedParameters()) vars.push_back({name, p});
    const Variable w(testing::randomTensor({5, args["out_channels"].get<int64_t>()}, 4).to(DType::F64));
    SCOPED_TRACE(args.dump());
    testing::expectParameterGradientsMatch(
        vars, [&] { return sum(mul(conv->forward(xs, xd, into.edgeIndex, into.edgeType), w)); }, 6, 6);
  }
}

TEST(RGCNConv, RefusesAnEdgePastTheTargets) {
  Generator gen(3);
  auto conv = RGCNConv::fromPyG({{"in_channels", 2}, {"out_channels", 2}, {"num_relations", 1}}, gen);
  const Variable x(Tensor::zeros({4, 2}));
  const Tensor ei = Tensor::fromVector<int64_t>({0, 3, 1, 2}, {2, 2});
  try {
    conv->forward(x, sliceRows(x, 0, 2), ei, Tensor::zeros({2}, DType::I64));
    FAIL() << "an edge to target 2 of 2 was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("edge 1 (3 -> 2)"), std::string::npos) << e.what();
  }
}

// Large enough for every parallel loop to split.
TEST(RGCNConv, SameBitsOnOneAndTwoThreadsOnEveryPath) {
  const TypedGraph g = randomTypedGraph(5000, 50000, 3, 7);
  const int before = numThreads();
  for (const json& args : layerArgs(12)) {
    std::vector<Tensor> runs;
    for (int threads : {1, 2}) {
      setNumThreads(threads);
      Generator gen(4), xg(2);
      auto conv = RGCNConv::fromPyG(args, gen);
      Variable x(init::uniform({5000, args["in_channels"].get<int64_t>()}, -1, 1, xg), true);
      const Variable y = conv->forward(x, g.edgeIndex, g.edgeType);
      sum(mul(y, y)).backward();
      runs.push_back(y.value());
      runs.push_back(x.grad());
      for (auto& p : conv->parameters()) runs.push_back(p.grad());
    }
    const size_t half = runs.size() / 2;
    for (size_t k = 0; k < half; ++k) EXPECT_TRUE(runs[k].bitEqual(runs[half + k])) << args.dump() << " tensor " << k;
  }
  setNumThreads(before);
}

}  // namespace
}  // namespace gnn
