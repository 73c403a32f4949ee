// The invariant that fixed-size batching rests on: a model's outputs for the real graphs of a padded or packed
// batch equal (<= 1e-6 relative) its outputs for the same graphs concatenated without padding, for every
// packing strategy and amount of padding: node embeddings, pooled graph outputs, the masked loss and its
// parameter gradients. Checked for pooling alone and, as a typed test, for every model: a model joins by
// adding a case (a traits struct that builds it and a dataset it can read) to ModelCases.
#include <gtest/gtest.h>

#include <cmath>

#include "Molecules.h"
#include "gnn/nn/pool/GlobalPooling.h"
#include "gnn/ops/Ops.h"
#include "models/OgbMolConv.h"
#include "models/OgbMolGCN.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

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

// One way of padding a dataset into batches: a strategy and its fixed sizes.
struct Layout {
  std::string name;
  PackingStrategy strategy;
  FixedSizeOptions fixed;
};

std::vector<Layout> layouts(const Dataset& ds) {
  FixedSizeOptions pad = FixedSizeOptions::fromDataset(ds, 6), padExtra = pad;
  padExtra.numNodes += 37;  // more padding nodes and edges than PadToMax needs
  padExtra.numEdges += 53;
  std::vector<Layout> out{{"pad", PackingStrategy::PadToMax, pad},
                          {"pad_extra", PackingStrategy::PadToMax, padExtra},
                          {"stream", PackingStrategy::StreamPack, FixedSizeOptions{64, 128, 8}},
                          {"plan", PackingStrategy::PlannedPack, FixedSizeOptions{64, 128, 8}},
                          {"plan_extra", PackingStrategy::PlannedPack, FixedSizeOptions{101, 190, 13}}};
  for (Layout& l : out) {
    l.fixed.nodePadValue = 1;  // a pad value that is a valid category and not zero: it must still not leak
    l.fixed.edgePadValue = 1;
  }
  return out;
}

std::vector<Batch> batchesOf(const std::shared_ptr<InMemoryDataset>& ds, PackingStrategy s) {
  for (const Layout& l : layouts(*ds))
    if (l.strategy == s) return test::batchesOf(ds, l.fixed, s);
  return {};
}

class PoolingPaddingInvariance : public ::testing::TestWithParam<PackingStrategy> {};

TEST_P(PoolingPaddingInvariance, Pooling) {
  auto ds = test::molecules(60, 1);
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

INSTANTIATE_TEST_SUITE_P(Strategies, PoolingPaddingInvariance,
                         ::testing::Values(PackingStrategy::PadToMax, PackingStrategy::StreamPack,
                                           PackingStrategy::PlannedPack),
                         [](const auto& info) { return std::string(packingStrategyName(info.param)); });

// ---- models ----
// A case: kName; make(dtype) -> the model (a BlockModel whose state holds node rows in "h" before the block
// kNodeBlock and whose forward gives one row per graph); dataset(); loss(out, batch) over real labels.

GraphModelOptions smallOptions(DType dt) {
  GraphModelOptions o;
  o.layers = 3;
  o.hidden = 16;
  o.dtype = dt;
  return o;
}

struct GcnCase {
  static constexpr const char* kName = "GCN";
  static constexpr const char* kNodeBlock = "head";
  static std::unique_ptr<BlockModel> make(DType dt) {
    Generator g(7);
    return std::make_unique<OgbMolGCN>(smallOptions(dt), g);
  }
  static std::shared_ptr<InMemoryDataset> dataset() { return test::molecules(60, 2); }
  static Variable loss(const Variable& out, const Batch& b) { return l1Loss(out, b.y, b.yMask); }
};

struct GinCase {
  static constexpr const char* kName = "GIN";
  static constexpr const char* kNodeBlock = "head";
  static std::unique_ptr<BlockModel> make(DType dt) {
    Generator g(8);
    return std::make_unique<OgbMolGIN>(smallOptions(dt), g);
  }
  static std::shared_ptr<InMemoryDataset> dataset() { return test::molecules(60, 3); }
  static Variable loss(const Variable& out, const Batch& b) { return l1Loss(out, b.y, b.yMask); }
};

// PyG's edge-aware layers in OGB's molecule model (models/OgbMolConv.h), with OGB's BatchNorm (real atoms only).
template <int K>
struct MolConvCase {
  static constexpr const char* kNames[] = {"GINE", "TransformerConv", "GEN", "NNConv", "PNA"};
  static constexpr const char* kName = kNames[K];
  static constexpr const char* kNodeBlock = "head";
  static std::unique_ptr<BlockModel> make(DType dt) {
    Generator g(9 + K);
    GraphModelOptions o = smallOptions(dt);
    o.norm = NormKind::Batch;
    o.degreeHistogram = {2, 10, 14, 6, 1};  // PNA's scalers: atoms with 0 .. 4 bonds in
    return std::make_unique<OgbMolConv>(OgbMolConv::kinds()[K], o, g);
  }
  static std::shared_ptr<InMemoryDataset> dataset() { return test::molecules(60, 4 + K); }
  static Variable loss(const Variable& out, const Batch& b) { return l1Loss(out, b.y, b.yMask); }
};

using ModelCases = ::testing::Types<GcnCase, GinCase, MolConvCase<0>, MolConvCase<1>, MolConvCase<2>,
                                    MolConvCase<3>, MolConvCase<4>>;

struct CaseName {
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};

template <class Case>
class PaddingInvariance : public ::testing::Test {};
TYPED_TEST_SUITE(PaddingInvariance, ModelCases, CaseName);

// float32: the matrix products of a padded batch have more rows, which can change Eigen's blocking and so the
// rounding of real rows; 1e-6 relative still holds. float64: the same, with the rounding far below 1e-12.
double tolerance(DType dt) { return dt == DType::F32 ? 1e-6 : 1e-12; }

TYPED_TEST(PaddingInvariance, NodeEmbeddingsOutputsAndLoss) {
  using Case = TypeParam;
  for (DType dt : {DType::F32, DType::F64}) {
    auto ds = Case::dataset();
    std::unique_ptr<BlockModel> model = Case::make(dt);
    model->eval();
    const size_t nodeBlock = model->blockIndex(Case::kNodeBlock);
    const double tol = tolerance(dt);
    for (const Layout& layout : layouts(*ds)) {
      const std::string what = std::string(Case::kName) + " " + dtypeName(dt) + " " + layout.name;
      for (const Batch& b : test::batchesOf(ds, layout.fixed, layout.strategy)) {
        Batch u = unpadded(*ds, b);
        Variable hp = model->runBlocks(BlockState(), b, 0, nodeBlock).get("h");
        Variable hu = model->runBlocks(BlockState(), u, 0, nodeBlock).get("h");
        expectClose(hp.value(), hu.value(), b.numRealNodes, what + " node embeddings", tol);
        Variable op = model->forward(b), ou = model->forward(u);
        expectClose(op.value(), ou.value(), b.numRealGraphs, what + " graph outputs", tol);
        for (int64_t r = b.numRealGraphs * op.value().cols(); r < op.value().numel(); ++r)
          EXPECT_EQ(op.value().at(r), 0.0) << what << " padding graph row";
        double lp = Case::loss(op, b).value().item(), lu = Case::loss(ou, u).value().item();
        EXPECT_LE(std::abs(lp - lu), tol * std::max(std::abs(lu), 1e-6)) << what << " loss " << lp << " vs " << lu;
      }
    }
  }
}

// The gradients training sees: d loss / d parameter for the real graphs' loss does not depend on padding
// either (padding rows get zero gradient; summing them in another blocking moves the sums by rounding only).
TYPED_TEST(PaddingInvariance, ParameterGradients) {
  using Case = TypeParam;
  for (DType dt : {DType::F32, DType::F64}) {
    auto ds = Case::dataset();
    std::unique_ptr<BlockModel> model = Case::make(dt);
    model->train();  // no dropout in these models' options: training mode, same function
    const double tol = tolerance(dt);
    auto grads = [&](const Batch& b) {
      model->zeroGrad();
      Case::loss(model->forward(b), b).backward();
      std::vector<Tensor> out;
      for (const auto& p : model->parameters()) out.push_back(p.hasGrad() ? p.grad().clone() : Tensor());
      return out;
    };
    for (const Layout& layout : layouts(*ds)) {
      const std::string what = std::string(Case::kName) + " " + dtypeName(dt) + " " + layout.name;
      for (const Batch& b : test::batchesOf(ds, layout.fixed, layout.strategy)) {
        std::vector<Tensor> gp = grads(b), gu = grads(unpadded(*ds, b));
        auto names = model->namedParameters();
        // A gradient that is zero up to rounding (a bias right before a training-mode batch norm, which takes
        // out every row's common shift) is compared at the scale of the model's gradients, not its own.
        double scale = 0;
        for (const Tensor& g : gu)
          if (g.defined())
            for (int64_t k = 0; k < g.numel(); ++k) scale = std::max(scale, std::abs(g.at(k)));
        for (size_t i = 0; i < gp.size(); ++i) {
          ASSERT_EQ(gp[i].defined(), gu[i].defined()) << what << " " << names[i].first;
          if (!gp[i].defined()) continue;
          double diff = 0, own = 0;
          for (int64_t k = 0; k < gu[i].numel(); ++k) {
            diff = std::max(diff, std::abs(gp[i].at(k) - gu[i].at(k)));
            own = std::max(own, std::abs(gu[i].at(k)));
          }
          // A one-element parameter (GINE's trained eps) sums its gradient over every row and channel, which float32
          // rounds to about 1e-5 of it when the blocking changes.
          const double t = gu[i].numel() == 1 && dt == DType::F32 ? 1e-4 : tol;
          EXPECT_LE(diff / std::max(own, 1e-3 * scale), t) << what << " gradient of " << names[i].first;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gnn
