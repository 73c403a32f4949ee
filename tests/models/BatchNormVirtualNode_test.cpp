// GIN and GCN with OGB's BatchNorm (statistics over the real nodes and graphs) and virtual node: padding never
// changes a real graph's training-mode outputs, parameter gradients or running statistics; parameter gradients
// against finite differences in training mode (through the batch statistics and the virtual nodes); evaluation
// uses the running statistics, which clones and checkpoints carry; the default models are as they were.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "Molecules.h"
#include "gnn/io/Checkpoint.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "models/OgbMolGCN.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

struct Variant {
  const char* name;
  bool gin;
  NormKind norm;
  bool virtualNode;
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {{"gin_batch", true, NormKind::Batch, false},
                                         {"gin_batch_vn", true, NormKind::Batch, true},
                                         {"gin_layer_vn", true, NormKind::Layer, true},
                                         {"gcn_batch", false, NormKind::Batch, false},
                                         {"gcn_batch_vn", false, NormKind::Batch, true}};
  return v;
}

std::unique_ptr<GraphModel> make(const Variant& v, DType dt, int64_t layers = 3, int64_t hidden = 16,
                                 uint64_t seed = 7) {
  GraphModelOptions o;
  o.layers = layers;
  o.hidden = hidden;
  o.dtype = dt;
  o.norm = v.norm;
  o.virtualNode = v.virtualNode;
  Generator g(seed);
  if (v.gin) return std::make_unique<OgbMolGIN>(o, g);
  return std::make_unique<OgbMolGCN>(o, g);
}

Batch unpadded(const Dataset& ds, const Batch& b) {
  std::vector<Graph> graphs;
  for (int64_t idx : b.graphIndex) graphs.push_back(ds.get(static_cast<size_t>(idx)));
  std::vector<const Graph*> ptrs;
  for (const Graph& g : graphs) ptrs.push_back(&g);
  return FixedSizeCollator::concatenate(ptrs, b.graphIndex);
}

// max |a - b| over the first `elements` values, relative to max |b| but never to less than `floor`: the gradient
// of a bias followed by BatchNorm is 0 up to rounding, whose noise has no meaningful relative size.
double relativeError(const Tensor& a, const Tensor& b, int64_t elements, double floor = 0) {
  double diff = 0, scale = floor;
  for (int64_t i = 0; i < elements; ++i) {
    diff = std::max(diff, std::abs(a.at(i) - b.at(i)));
    scale = std::max(scale, std::abs(b.at(i)));
  }
  return scale > 0 ? diff / scale : diff;
}

TEST(BatchNormVirtualNode, DefaultModelsKeepTheirParameters) {
  for (bool gin : {true, false}) {
    auto m = make({"default", gin, NormKind::Layer, false}, DType::F32);
    for (const auto& [name, p] : m->namedParameters()) {
      EXPECT_EQ(name.find("running_"), std::string::npos) << name;
      EXPECT_EQ(name.find("virtual"), std::string::npos) << name;
      EXPECT_TRUE(p.requiresGrad()) << name;
      if (!gin) {
        EXPECT_EQ(name.find("norms."), std::string::npos) << name;  // gcn: no norm by default
      }
    }
  }
  auto gin = make({"gin_batch_vn", true, NormKind::Batch, true}, DType::F32);
  int64_t buffers = 0;
  for (const auto& [name, p] : gin->namedParameters()) buffers += p.requiresGrad() ? 0 : 1;
  // 3 layers: a norm in each MLP and after each conv, two per virtual-node MLP (2 of them): 10 norms, 2 each.
  EXPECT_EQ(buffers, 20);
}

// Training mode: outputs of real graphs, parameter gradients and the running statistics after the step are
// those of the same graphs without padding (to the rounding of products over more rows), for more padding
// nodes, more padding graphs and packed batches.
TEST(BatchNormVirtualNode, PaddingInvarianceInTraining) {
  auto ds = test::molecules(40, 5);
  FixedSizeOptions pad = FixedSizeOptions::fromDataset(*ds, 6), extra = pad;
  extra.numNodes += 37;
  extra.numEdges += 53;
  extra.numGraphs += 3;
  for (FixedSizeOptions* f : {&pad, &extra}) f->nodePadValue = f->edgePadValue = 1;
  for (const Variant& v : variants())
    for (DType dt : {DType::F32, DType::F64}) {
      const double tol = dt == DType::F32 ? 2e-5 : 1e-11;
      for (const FixedSizeOptions& fixed : {pad, extra})
        for (const Batch& b : test::batchesOf(ds, fixed, PackingStrategy::PadToMax)) {
          const std::string what = std::string(v.name) + " " + dtypeName(dt) + " " + std::to_string(b.numNodes);
          auto run = [&](const Batch& batch) {
            auto m = make(v, dt);
            m->train();
            Variable out = m->forward(batch);
            l1Loss(out, batch.y, batch.yMask).backward();
            std::vector<Tensor> r = {out.value()};
            for (const auto& [name, p] : m->namedParameters())
              r.push_back(p.requiresGrad() ? (p.hasGrad() ? p.grad() : Tensor()) : p.value().clone());
            return r;
          };
          std::vector<Tensor> padded = run(b), plain = run(unpadded(*ds, b));
          EXPECT_LE(relativeError(padded[0], plain[0], b.numRealGraphs), tol) << what << " outputs";
          for (int64_t r = b.numRealGraphs; r < b.numGraphs; ++r) EXPECT_EQ(padded[0].at(r), 0.0) << what;
          for (size_t k = 1; k < padded.size(); ++k) {
            ASSERT_EQ(padded[k].defined(), plain[k].defined()) << what << " " << k;
            if (padded[k].defined()) {
              EXPECT_LE(relativeError(padded[k], plain[k], plain[k].numel(), 1.0), tol) << what << " parameter " << k;
            }
          }
        }
    }
}

// d(sum(r * out)) / d(parameter) against central differences, float64, training mode: the batch statistics and
// the virtual nodes are differentiated through. The encoders' embedding tables are skipped (plain lookups,
// checked elsewhere) to keep the test short.
TEST(BatchNormVirtualNode, ParameterGradientsMatchFiniteDifferences) {
  auto ds = test::molecules(5, 11);
  FixedSizeOptions fixed = FixedSizeOptions::fromDataset(*ds, 6);
  const Batch b = test::batchesOf(ds, fixed, PackingStrategy::PadToMax).front();
  for (const Variant& v : variants()) {
    auto m = make(v, DType::F64, 2, 3, 13);
    m->train();
    Tensor r;
    auto objective = [&]() {
      NoGradGuard ng;
      Tensor y = m->forward(b).value();
      double s = 0;
      for (int64_t i = 0; i < y.numel(); ++i) s += y.at(i) * r.at(i);
      return s;
    };
    Variable y = m->forward(b);
    Generator rg(99);
    r = init::uniform(y.shape(), -1, 1, rg, DType::F64);
    sum(mul(y, Variable(r))).backward();
    double worst = 0;
    int64_t checked = 0;
    for (auto& [name, p] : m->namedParameters()) {
      if (!p.requiresGrad() || name.find("encoder") != std::string::npos) continue;
      ASSERT_TRUE(p.hasGrad()) << v.name << " " << name;
      Tensor analytic = p.grad().clone();
      double* w = p.value().data<double>();
      for (int64_t j = 0; j < p.value().numel(); ++j) {
        const double saved = w[j], eps = 1e-6;
        w[j] = saved + eps;
        const double up = objective();
        w[j] = saved - eps;
        const double down = objective();
        w[j] = saved;
        const double numeric = (up - down) / (2 * eps);
        const double err = std::abs(numeric - analytic.at(j)) / std::max(1.0, std::abs(numeric));
        worst = std::max(worst, err);
        ++checked;
        EXPECT_LE(err, 1e-5) << v.name << " " << name << "[" << j << "]: analytic " << analytic.at(j)
                             << " numeric " << numeric;
      }
    }
    EXPECT_LE(worst, 1e-5) << v.name;
    EXPECT_GE(checked, 30) << v.name << ": parameters checked";
  }
}

// Evaluation reads the running statistics (not the batch's), and a clone or a checkpoint round trip carries
// them: the same bits from a fresh model of another seed that loaded the checkpoint.
TEST(BatchNormVirtualNode, EvaluationUsesRunningStatisticsKeptInCheckpoints) {
  auto ds = test::molecules(30, 3);
  FixedSizeOptions fixed = FixedSizeOptions::fromDataset(*ds, 6);
  const auto batches = test::batchesOf(ds, fixed, PackingStrategy::PadToMax);
  const std::string path = (std::filesystem::temp_directory_path() / "gnn_bn_vn_test.ckpt").string();
  for (const Variant& v : variants()) {
    if (v.norm != NormKind::Batch) continue;
    auto m = make(v, DType::F32);
    m->train();
    for (const Batch& b : batches) m->forward(b);  // updates the running statistics
    const Tensor trainOut = m->forward(batches.front()).value();
    m->eval();
    const Tensor evalOut = m->forward(batches.front()).value();
    EXPECT_FALSE(evalOut.bitEqual(trainOut)) << v.name << ": evaluation must use the running statistics";
    EXPECT_TRUE(m->forward(batches.front()).value().bitEqual(evalOut)) << v.name << ": evaluation changed state";
    std::unique_ptr<Module> copy = m->clone();
    auto* cm = dynamic_cast<GraphModel*>(copy.get());
    ASSERT_NE(cm, nullptr);
    EXPECT_TRUE(cm->forward(batches.front()).value().bitEqual(evalOut)) << v.name << " clone";
    Checkpoint ck;
    ck.addModule("model", *m);
    ck.save(path);
    auto fresh = make(v, DType::F32, 3, 16, 99);
    Checkpoint::load(path).loadModule("model", *fresh);
    fresh->eval();
    EXPECT_TRUE(fresh->forward(batches.front()).value().bitEqual(evalOut)) << v.name << " checkpoint";
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gnn
