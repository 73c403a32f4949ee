// MoleculePredictions: one pass of a graph-level model over chosen molecules, in their order, in fixed-size
// batches packed in that order (so the same molecules in the same order give the same batches and the same
// bits, in `molecule_property --predict` and in `predict`); the metric's name; and the predictions file
// (`line,id,smiles,prediction[_<target>]`). Scoring them against the targets is gnn/metrics/Evaluation.h's.
//
//   app::MoleculePredictions p = app::predictMolecules(model, 1, dataset, positions, fixed, scaling, task);
//   Evaluation e = scoreTargets(p.score, p.target, p.mask, task == app::MoleculeTask::Classification, targetNames);
//   app::writePredictionsCsv("test.csv", *dataset, p, targetNames);
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/NpzDataset.h"
#include "data/TargetScaling.h"
#include "loaders/FixedSizeOptions.h"
#include "loaders/PaddingReport.h"
#include "loaders/ShapeBuckets.h"
#include "models/BlockModel.h"

namespace gnn::app {

/// RegressionMve: mean-variance estimation (--task regression-mve): the model's head gives a mean and a variance
/// per target (gnn/ops/GaussianNllLoss.h), predicted as the mean and, as uncertainty, the variance in target units.
enum class MoleculeTask { Regression, Classification, RegressionMve };

struct MoleculePredictions {
  std::vector<int64_t> positions;  // dataset positions predicted, in order
  std::vector<int64_t> skipped;    // positions too large for the batch shape
  Tensor pred;                     // [n, T]: target units (regression) or probabilities (classification)
  Tensor score;                    // [n, T]: what the metric ranks (regression: pred; classification: logits)
  Tensor target, mask;             // [n, T] float32, uint8
  /// [n, T] float32, or undefined: an ensemble's variance per target (app/Ensemble.h) or a mean-variance
  /// model's (RegressionMve), written as uncertainty column(s) after the predictions.
  Tensor uncertainty;
  /// The batch shapes (one, or the inference buckets), the molecules each held, and the batches' padding.
  std::vector<FixedSizeOptions> shapes;
  std::vector<int64_t> moleculesPerShape;
  PaddingReport padding;
};

/// Predicts `positions` in order with `model` (tasks outputs per graph; RegressionMve: 2 x tasks, the means
/// then the raw variances) in eval mode and no tape. Results do not depend on which molecules share a batch
/// (products round each row alike wherever it sits). RegressionMve: pred is the mean in target units and
/// uncertainty the variance mveVariance(raw) x std^2 (computed in double, rounded to float).
MoleculePredictions predictMolecules(BlockModel& model, int64_t tasks, const std::shared_ptr<const Dataset>& dataset,
                                     const std::vector<int64_t>& positions, const FixedSizeOptions& fixed,
                                     const TargetScaling& scaling, MoleculeTask task);

/// How predictMolecules passes a batch through the model (model.forward(b) when empty): `positions` holds the
/// dataset position of each real graph of `b`, in its order (MC dropout keys each molecule's masks by them).
using BatchForward = std::function<Tensor(BlockModel& model, const Batch& b, const std::vector<int64_t>& positions)>;

/// The same with each molecule in the smallest of `buckets`' shapes that holds it (each shape's molecules
/// batched in input order, rows of the result still in the order of `positions`); the predictions are the bits
/// of one shape (padding invariance). Molecules no shape holds are `skipped`. `forward`: see BatchForward.
MoleculePredictions predictMolecules(BlockModel& model, int64_t tasks, const std::shared_ptr<const Dataset>& dataset,
                                     const std::vector<int64_t>& positions, const ShapeBuckets& buckets,
                                     const TargetScaling& scaling, MoleculeTask task, const BatchForward& forward = {});

/// The inference shapes for `positions` of `dataset`: at most `maxBuckets` shapes (<= 1: `base` alone) that
/// ShapeBuckets chooses from their sizes, minimising padded node pairs (`nodePairs`: Graphormer) or rows.
ShapeBuckets inferenceBuckets(const Dataset& dataset, const std::vector<int64_t>& positions,
                              const FixedSizeOptions& base, int64_t maxBuckets, bool nodePairs);

/// "regression", "classification", "regression-mve" (the --task value, and the checkpoint's derived task).
const char* moleculeTaskName(MoleculeTask task);

/// CSV with a header: line,id,smiles,prediction (or prediction_<target> per target), then, when p.uncertainty is
/// defined, uncertainty (or uncertainty_<target>); floats printed with 9 significant digits, which read back as
/// the same float32. Written to a temporary file and renamed.
void writePredictionsCsv(const std::string& path, const NpzDataset& dataset, const MoleculePredictions& p,
                         const std::vector<std::string>& targetNames);

}  // namespace gnn::app
