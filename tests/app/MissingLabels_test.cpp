// Missing labels are left out per target, from the CSV to the loss and the metrics: an empty field is a 0 in
// the batch's yMask (and so are the padding graphs' rows), the loss molecule_property trains with
// (bceWithLogits over yMask) is the mean over labelled values only and sends no gradient to an unlabelled
// output, and scoreTargets scores each target on its labelled molecules only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "app/MoleculeData.h"
#include "gnn/metrics/Evaluation.h"
#include "gnn/metrics/Metrics.h"
#include "gnn/ops/Ops.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn::app {
namespace {

TEST(MissingLabels, AreMaskedPerTargetInTheBatchTheLossAndTheMetrics) {
  const std::filesystem::path csv =
      std::filesystem::temp_directory_path() / ("gnn_missing_labels_" + std::to_string(getpid()) + ".csv");
  {
    // Ten molecules (a random split needs a validation molecule), two targets; line 3's second label and line
    // 5's first are missing ("" and "nan").
    std::ofstream out(csv);
    out << "smiles,a,b\nCCO,1,0\nc1ccccc1,0,\nCCN,1,1\nCCCl,nan,1\nCC(=O)O,0,0\nOCCO,1,0\nCCCC,0,1\nc1ccncc1,"
           "1,0\n"
           "CC(C)O,0,1\nCOC,1,1\n";
  }
  MoleculeDataOptions o;
  o.path = csv.string();
  o.targetColumns = {"a", "b"};
  o.quiet = true;
  MoleculeData d = openMoleculeData(o);
  ASSERT_EQ(d.size, 10);

  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::StreamPack;
  lo.shuffle = false;
  lo.prefetch = 0;
  FixedSizeDataLoader loader(d.dataset, FixedSizeOptions::forPacking(*d.dataset, 16), lo);
  loader.startEpoch(0);
  Batch b;
  ASSERT_TRUE(loader.next(b));
  ASSERT_EQ(b.numRealGraphs, 10);
  const int64_t slots = b.y.dim(0);
  ASSERT_EQ(b.yMask.dim(1), 2);
  // Real graphs in file order (no shuffle, stream packing): line 3's b and line 5's a are masked out.
  const uint8_t expected[10][2] = {{1, 1}, {1, 0}, {1, 1}, {0, 1}, {1, 1},
                                   {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  for (int64_t g = 0; g < slots; ++g)
    for (int64_t t = 0; t < 2; ++t)
      EXPECT_EQ(b.yMask.matrix<uint8_t>()(g, t), g < 10 ? expected[g][t] : 0) << g << "," << t;

  // The training loss: the mean BCE over the 18 labelled values, by hand; no gradient to the 2 unlabelled
  // ones.
  std::vector<float> z;
  for (int64_t i = 0; i < slots * 2; ++i) z.push_back(0.3f * static_cast<float>(i % 7) - 0.8f);
  Variable logits(Tensor::fromVector<float>(z, {slots, 2}), /*requiresGrad=*/true);
  Variable loss = bceWithLogits(logits, b.y, b.yMask);
  double sum = 0;
  int counted = 0;
  for (int64_t g = 0; g < 10; ++g)
    for (int64_t t = 0; t < 2; ++t) {
      if (!expected[g][t]) continue;
      const double x = z[static_cast<size_t>(g * 2 + t)], y = b.y.matrix<float>()(g, t);
      sum += std::max(x, 0.0) - x * y + std::log1p(std::exp(-std::abs(x)));
      ++counted;
    }
  ASSERT_EQ(counted, 18);
  EXPECT_NEAR(loss.value().at(0), sum / 18, 1e-6);
  loss.backward();
  EXPECT_EQ(logits.grad().matrix<float>()(1, 1), 0.0f);
  EXPECT_EQ(logits.grad().matrix<float>()(3, 0), 0.0f);
  EXPECT_NE(logits.grad().matrix<float>()(1, 0), 0.0f);

  // The metrics, on the first six molecules: target b scored on its five labelled ones only.
  const Tensor scores = Tensor::fromVector<float>(
      {0.9f, 0.2f, 0.1f, 0.9f, 0.8f, 0.7f, 0.3f, 0.6f, 0.6f, 0.1f, 0.7f, 0.4f}, {6, 2});
  Tensor y = Tensor::zeros({6, 2}), m = Tensor::zeros({6, 2}, DType::U8);
  for (int64_t g = 0; g < 6; ++g)
    for (int64_t t = 0; t < 2; ++t) {
      y.matrix<float>()(g, t) = b.y.matrix<float>()(g, t);
      m.matrix<uint8_t>()(g, t) = b.yMask.matrix<uint8_t>()(g, t);
    }
  // The mask alone decides: line 3's missing b read as a 0 (scored 0.9, above both positives) is still left
  // out.
  y.matrix<float>()(1, 1) = 0.0f;
  const Evaluation e = scoreTargets(scores, y, m, {Metric::RocAuc, Metric::Accuracy}, d.targetNames);
  // b: labels 0, 1, 1, 0, 0 (lines 2, 4, 5, 6, 7) scored 0.2, 0.7, 0.6, 0.1, 0.4: every positive above every
  // negative.
  EXPECT_DOUBLE_EQ(e.details["rocauc_per_target"]["b"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(e.details["accuracy_per_target"]["a"].get<double>(), 3.0 / 5.0);  // 5 labelled of 6
  // Counted, it would bring b below 1.
  const Tensor all = Tensor::fromVector<uint8_t>(std::vector<uint8_t>(12, 1), {6, 2});
  EXPECT_LT(scoreTargets(scores, y, all, {Metric::RocAuc}, d.targetNames)
                .details["rocauc_per_target"]["b"]
                .get<double>(),
            1.0);
  std::filesystem::remove(csv);
}

}  // namespace
}  // namespace gnn::app
