// TopKPooling and SAGPooling (gnn/nn/pool/TopKPooling.h): the nodes, edges and scores PyG 2.3.1 keeps and the
// gradients from the same parameters (tests/reference/pyg_pools.py), finite-difference gradients, and the
// fixed-size form: a padded batch keeps the same real rows and edges with a static shape.
#include <gtest/gtest.h>

#include "../PyGReference.h"
#include "ParameterGradCheck.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/pool/TopKPooling.h"
#include "gnn/ops/Ops.h"

namespace gnn::testing {
namespace {

using json = nlohmann::json;

class TopKPoolingCase : public ::testing::TestWithParam<std::string> {};

std::unique_ptr<Module> makePool(const json& ref, Generator& gen, DType dt) {
  if (ref["pool"] == "TopKPooling") return TopKPooling::fromPyG(ref["args"], gen, dt);
  return SAGPooling::fromPyG(ref["args"], gen, dt);
}

PooledGraph runPool(Module& m, const json& ref, const Variable& x, const Tensor& ei, const Tensor& batch,
                    bool fixedSize = false, const Tensor& real = Tensor(), int64_t graphs = 2) {
  if (ref["pool"] == "TopKPooling")
    return static_cast<TopKPooling&>(m).forward(x, ei, Variable(), batch, graphs, fixedSize, real);
  return static_cast<SAGPooling&>(m).forward(x, ei, Variable(), batch, graphs, fixedSize, real);
}

Tensor edgesOf(const json& rows) {
  std::vector<int64_t> v = rows[0].get<std::vector<int64_t>>();
  for (int64_t t : rows[1]) v.push_back(t);
  return Tensor::fromVector(v, {2, static_cast<int64_t>(rows[0].size())});
}

std::vector<int64_t> valuesOf(const Tensor& t) { return {t.data<int64_t>(), t.data<int64_t>() + t.numel()}; }

TEST_P(TopKPoolingCase, MatchesPyG) {
  const json ref = readReference("pool_" + GetParam());
  const Tensor ei = edgesOf(ref["edge_index"]), batch = Tensor::fromVector(ref["batch"].get<std::vector<int64_t>>());
  for (DType dt : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dt));
    const double tol = dt == DType::F64 ? 1e-12 : 1e-5;
    Generator gen(1);
    std::unique_ptr<Module> pool = makePool(ref, gen, dt);
    loadStateDict(*pool, ref["state_dict"], dt);
    Variable x(matrixOf(ref["x"], dt), true);
    const PooledGraph p = runPool(*pool, ref, x, ei, batch);
    EXPECT_EQ(valuesOf(p.perm), ref["out"]["perm"].get<std::vector<int64_t>>());
    EXPECT_EQ(valuesOf(p.batch), ref["out"]["batch"].get<std::vector<int64_t>>());
    EXPECT_TRUE(p.edgeIndex.bitEqual(edgesOf(ref["out"]["edge_index"])));
    EXPECT_LE(relativeError(p.x.value(), matrixOf(ref["out"]["x"], dt)), tol) << "x";
    EXPECT_LE(relativeError(p.score.value(), flatOf(ref["out"]["score"], {p.score.dim(0)}, dt)), tol) << "score";
    sum(mul(p.x, Variable(matrixOf(ref["out_weights"], dt)))).backward();
    EXPECT_LE(relativeError(x.grad(), matrixOf(ref["grad"]["x"], dt)), tol) << "gradient of x";
    for (auto& [name, param] : pool->namedParameters()) {
      if (!param.requiresGrad()) continue;
      EXPECT_LE(relativeError(param.grad(), flatOf(ref["grad"][name], param.shape(), dt)), tol) << name;
    }
  }
}

TEST_P(TopKPoolingCase, GradientsMatchFiniteDifferences) {
  const json ref = readReference("pool_" + GetParam());
  const Tensor ei = edgesOf(ref["edge_index"]), batch = Tensor::fromVector(ref["batch"].get<std::vector<int64_t>>());
  Generator gen(2);
  std::unique_ptr<Module> pool = makePool(ref, gen, DType::F64);
  loadStateDict(*pool, ref["state_dict"], DType::F64);
  Variable x(matrixOf(ref["x"], DType::F64), true);  // PyG's input: no score ties within a step
  expectParameterGradientsMatch(withInputs(*pool, {{"x", x}}),
                                [&] { return projected(runPool(*pool, ref, x, ei, batch).x); }, 1 << 20, 0);
}

// A fixed-size batch: the two graphs, then a padding graph of 4 nodes (huge features) with 5 padding edges. The
// fixed form keeps ceil(ratio N) + G rows and E edges; its kept rows, edges and batch are the plain form's.
TEST_P(TopKPoolingCase, FixedSizeKeepsTheRealGraphsRows) {
  const json ref = readReference("pool_" + GetParam());
  Generator gen(3);
  std::unique_ptr<Module> pool = makePool(ref, gen, DType::F32);
  loadStateDict(*pool, ref["state_dict"], DType::F32);
  const Tensor x0 = matrixOf(ref["x"], DType::F32);
  const Tensor ei0 = edgesOf(ref["edge_index"]);
  const PooledGraph plain = runPool(*pool, ref, Variable(x0), ei0, Tensor::fromVector(ref["batch"].get<std::vector<int64_t>>()));
  const int64_t N = 16, E = ei0.dim(1) + 5;
  Tensor x = Tensor::full({N, 4}, 1e3, DType::F32);
  std::copy(x0.data<float>(), x0.data<float>() + 48, x.data<float>());
  std::vector<int64_t> b = ref["batch"].get<std::vector<int64_t>>(), src, dst;
  b.insert(b.end(), {2, 2, 2, 2});
  for (int64_t e = 0; e < ei0.dim(1); ++e) {
    src.push_back(ei0.data<int64_t>()[e]);
    dst.push_back(ei0.data<int64_t>()[ei0.dim(1) + e]);
  }
  for (int64_t e = 0; e < 5; ++e) {
    src.push_back(12);
    dst.push_back(12);
  }
  src.insert(src.end(), dst.begin(), dst.end());
  std::vector<uint8_t> real(static_cast<size_t>(N), 1);
  std::fill(real.begin() + 12, real.end(), 0);
  const PooledGraph p = runPool(*pool, ref, Variable(x), Tensor::fromVector(src, {2, E}), Tensor::fromVector(b),
                                /*fixedSize=*/true, Tensor::fromVector(real), 3);
  const int64_t kept = plain.x.dim(0), keptEdges = plain.edgeIndex.dim(1);
  const double ratio = ref["args"].value("ratio", 0.5);
  EXPECT_EQ(p.x.dim(0), static_cast<int64_t>(std::ceil(ratio >= 1 ? std::min<double>(ratio * 3, N) : ratio * N)) + 3);
  EXPECT_EQ(p.edgeIndex.dim(1), E);
  EXPECT_TRUE(p.x.value().slice(0, kept).bitEqual(plain.x.value()));
  for (int64_t e = 0; e < keptEdges; ++e)
    for (int64_t row = 0; row < 2; ++row)
      EXPECT_EQ(p.edgeIndex.data<int64_t>()[row * E + e], plain.edgeIndex.data<int64_t>()[row * keptEdges + e]);
  for (int64_t r = 0; r < p.x.dim(0); ++r) {
    EXPECT_EQ(p.nodesMask.data<uint8_t>()[r], r < kept ? 1 : 0);
    if (r >= kept) {
      EXPECT_EQ(p.x.value().data<float>()[r * 4], 0.0f);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Pools, TopKPoolingCase,
                         ::testing::Values("topk", "topk_ratio_03_sigmoid_multiplier", "topk_ratio_int", "sag",
                                           "sag_gcn"),
                         [](const auto& info) { return info.param; });

TEST(TopKPooling, RefusesMinScore) {
  Generator gen(1);
  EXPECT_THROW(TopKPooling::fromPyG({{"in_channels", 4}, {"min_score", 0.1}}, gen), std::invalid_argument);
  EXPECT_THROW(SAGPooling::fromPyG({{"in_channels", 4}, {"GNN", "NoConv"}}, gen), std::invalid_argument);
}

}  // namespace
}  // namespace gnn::testing
