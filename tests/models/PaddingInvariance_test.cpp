// The invariant that fixed-size batching rests on: a model's outputs for the real graphs of a padded or packed
// batch equal (<= 1e-6 relative) its outputs for the same graphs concatenated without padding, for every
// packing strategy: node embeddings, pooled graph outputs and the masked loss. Checked for pooling alone,
// GCN and GIN.
#include <gtest/gtest.h>

#include <cmath>

#include "gnn/GlobalPooling.h"
#include "gnn/Ops.h"
#include "loaders/FixedSizeDataLoader.h"
#include "models/GCN.h"
#include "models/GIN.h"

namespace gnn {
namespace {

// Molecule-like graphs whose features are valid OGB categories (atom [N, 9], bond [E, 3]).
std::shared_ptr<InMemoryDataset> molecules(int64_t count, uint64_t seed) {
  Generator g(seed);
  auto ds = std::make_shared<InMemoryDataset>();
  const auto atomDims = AtomEncoder::featureDims();
  const auto bondDims = BondEncoder::featureDims();
  for (int64_t k = 0; k < count; ++k) {
    Graph gr;
    gr.numNodes = 1 + static_cast<int64_t>(g.nextBelow(14));
    std::vector<int64_t> x, ea, src, dst;
    for (int64_t i = 0; i < gr.numNodes; ++i)
      for (int64_t c = 0; c < 9; ++c) x.push_back(static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(std::min<int64_t>(atomDims[c], 6)))));
    for (int64_t i = 1; i < gr.numNodes; ++i) {
      int64_t j = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(i)));  // a random tree: bonds i - j
      std::vector<int64_t> attr;
      for (int64_t c = 0; c < 3; ++c) attr.push_back(static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(bondDims[c]))));
      src.push_back(i), dst.push_back(j), ea.insert(ea.end(), attr.begin(), attr.end());
      src.push_back(j), dst.push_back(i), ea.insert(ea.end(), attr.begin(), attr.end());
    }
    int64_t m = static_cast<int64_t>(src.size());
    gr.x = Tensor::fromVector(x, {gr.numNodes, 9});
    std::vector<int64_t> ei(src);
    ei.insert(ei.end(), dst.begin(), dst.end());
    gr.edgeIndex = Tensor::fromVector(ei, {2, m});
    gr.edgeAttr = Tensor::fromVector(ea, {m, 3});
    gr.y = Tensor::fromVector<float>({static_cast<float>(g.nextUniform() * 4 - 2)}, {1});
    gr.yMask = Tensor::fromVector<uint8_t>({static_cast<uint8_t>(k % 7 != 3)}, {1});  // some labels missing
    ds->push(std::move(gr));
  }
  return ds;
}

// Relative error of the real rows: max |a - b| / max |b| over the tensor's real rows (the scale of the
// outputs; an elementwise ratio is meaningless for values that are zero up to rounding).
double relativeError(const Tensor& padded, const Tensor& plain, int64_t rows) {
  EXPECT_GE(padded.rows(), rows);
  EXPECT_EQ(padded.cols(), plain.cols());
  int64_t c = plain.cols();
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < rows * c; ++i) {
    diff = std::max(diff, std::abs(padded.at(i) - plain.at(i)));
    scale = std::max(scale, std::abs(plain.at(i)));
  }
  return scale > 0 ? diff / scale : diff;
}

void expectClose(const Tensor& padded, const Tensor& plain, int64_t rows, const std::string& what, double tol = 1e-6) {
  double rel = relativeError(padded, plain, rows);
  EXPECT_LE(rel, tol) << what;
}

Batch unpadded(const Dataset& ds, const Batch& b) {
  std::vector<Graph> graphs;
  for (int64_t idx : b.graphIndex) graphs.push_back(ds.get(static_cast<size_t>(idx)));
  std::vector<const Graph*> ptrs;
  for (const Graph& g : graphs) ptrs.push_back(&g);
  return FixedSizeCollator::concatenate(ptrs, b.graphIndex);
}

std::vector<Batch> batchesOf(const std::shared_ptr<InMemoryDataset>& ds, PackingStrategy s) {
  FixedSizeOptions o = s == PackingStrategy::PadToMax ? FixedSizeOptions::fromDataset(*ds, 6) : FixedSizeOptions{64, 128, 8};
  o.nodePadValue = 1;  // a pad value that is a valid category and not zero: it must still not leak
  o.edgePadValue = 1;
  FixedSizeDataLoader::Options lo;
  lo.strategy = s;
  lo.seed = 3;
  FixedSizeDataLoader loader(ds, o, lo);
  loader.startEpoch(0);
  std::vector<Batch> out;
  for (Batch b; loader.next(b);) out.push_back(b);
  return out;
}

class PaddingInvariance : public ::testing::TestWithParam<PackingStrategy> {};

TEST_P(PaddingInvariance, Pooling) {
  auto ds = molecules(60, 1);
  Generator g(5);
  for (const Batch& b : batchesOf(ds, GetParam())) {
    Batch u = unpadded(*ds, b);
    // Node features: a function of the real node's identity, anything (large) on padding nodes.
    Tensor xp({b.numNodes, 4}), xu({u.numNodes, 4});
    for (int64_t i = 0; i < b.numNodes * 4; ++i) xp.data<float>()[i] = i < b.numRealNodes * 4 ? static_cast<float>(g.normalAt(i)) : 1e6f;
    for (int64_t i = 0; i < u.numNodes * 4; ++i) xu.data<float>()[i] = xp.data<float>()[i];
    for (PoolKind k : {PoolKind::Sum, PoolKind::Mean, PoolKind::Max}) {
      Tensor pp = globalPool(k, Variable(xp), b.ptr, b.graphsMask).value();
      Tensor pu = globalPool(k, Variable(xu), u.ptr, u.graphsMask).value();
      expectClose(pp, pu, b.numRealGraphs, std::string("pool ") + poolKindName(k));
      for (int64_t r = b.numRealGraphs * 4; r < pp.numel(); ++r) EXPECT_EQ(pp.at(r), 0.0) << "padding graph row";
    }
  }
}

void checkModel(GraphModel& model, const std::shared_ptr<InMemoryDataset>& ds, PackingStrategy s, double tol) {
  model.eval();
  for (const Batch& b : batchesOf(ds, s)) {
    Batch u = unpadded(*ds, b);
    Variable hp = model.nodeEmbeddings(b), hu = model.nodeEmbeddings(u);
    expectClose(hp.value(), hu.value(), b.numRealNodes, std::string(model.name()) + " node embeddings", tol);
    Variable op = model.forward(b), ou = model.forward(u);
    expectClose(op.value(), ou.value(), b.numRealGraphs, std::string(model.name()) + " graph outputs", tol);
    double lp = l1Loss(op, b.y, b.yMask).value().item(), lu = l1Loss(ou, u.y, u.yMask).value().item();
    EXPECT_LE(std::abs(lp - lu), tol * std::max(std::abs(lu), 1e-6)) << model.name() << " loss " << lp << " vs " << lu;
  }
}

// float32: the matrix products of a padded batch have more rows, which can change Eigen's blocking and so the
// rounding of real rows; 1e-6 relative still holds. float64: the same, with the rounding far below 1e-12.
TEST_P(PaddingInvariance, GCN) {
  for (DType dt : {DType::F32, DType::F64}) {
    auto ds = molecules(60, 2);
    Generator g(7);
    GraphModelOptions o;
    o.layers = 3;
    o.hidden = 16;
    o.dtype = dt;
    GCN model(o, g);
    checkModel(model, ds, GetParam(), dt == DType::F32 ? 1e-6 : 1e-12);
  }
}

TEST_P(PaddingInvariance, GIN) {
  for (DType dt : {DType::F32, DType::F64}) {
    auto ds = molecules(60, 3);
    Generator g(8);
    GraphModelOptions o;
    o.layers = 3;
    o.hidden = 16;
    o.dtype = dt;
    GIN model(o, g);
    checkModel(model, ds, GetParam(), dt == DType::F32 ? 1e-6 : 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, PaddingInvariance,
                         ::testing::Values(PackingStrategy::PadToMax, PackingStrategy::StreamPack,
                                           PackingStrategy::PlannedPack),
                         [](const auto& info) { return std::string(packingStrategyName(info.param)); });

}  // namespace
}  // namespace gnn
