#include "app/MoleculeFlags.h"

#include <algorithm>

#include "app/McDropout.h"
#include "app/MemoryBounds.h"
#include "app/ShippedData.h"
#include "gnn/metrics/Evaluation.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn::app {

// "auto": Graphormer pads (its attention works on a dense block per graph slot, so packing saves nothing),
// message-passing models and SchNet pack by size (their work follows the atoms and edges).
PackingStrategy MoleculeSettings::packing() const {
  requireOneOf("--strategy", strategy, {"auto", "pad", "stream", "plan"});
  if (strategy == "auto") return spec.isGraphormer() ? PackingStrategy::PadToMax : PackingStrategy::PlannedPack;
  return parsePackingStrategy(strategy);
}

OverSizeStrategy MoleculeSettings::overSizeStrategy() const {
  requireOneOf("--oversize", overSize, {"error", "skip", "trim_nodes", "trim_edges", "trim"});
  return parseOverSizeStrategy(overSize);
}

void MoleculeSettings::bind(RunConfig& config) {
  config.bind("data", &data);
  config.bind("format", &format);
  config.bind("smiles-col", &smilesCol);
  config.bind("target-cols", &targetCols);
  config.bind("split-col", &splitCol);
  config.bind("split", &split);
  config.bind("split-file", &splitFile);
  config.bind("task", &task);
  config.bind("target-scaling", &targetScaling);
  config.bind("loss", &loss);
  config.bind("limit", &limit);
  config.bind("seed", &training.seed);
  config.bind("ensemble-size", &ensembleSize);
  config.bind("uncertainty", &uncertainty);
  config.bind("mc-samples", &mcSamples);
  // How molecules are batched and scored does not change the model: an evaluation-only run may change these.
  config.bindOutsideModel("strategy", &strategy);
  config.bindOutsideModel("oversize", &overSize);
  config.bindOutsideModel("batch-size", &batchSize);
  config.bindOutsideModel("num-nodes", &numNodes);
  config.bindOutsideModel("num-edges", &numEdges);
  config.bindOutsideModel("num-graphs", &numGraphs);
  config.bindOutsideModel("pack-window", &packWindow);
  config.bindOutsideModel("metric", &metric);
  config.bindOutsideModel("eval-buckets", &evalBuckets);
  spec.bind(config);
  features.bind(config);
  atomFeatures.bind(config);
  transfer.bind(config);
}

namespace {

// Where the molecules come from and how they are split.
void addDataFlags(Program& prog, MoleculeSettings& s, const MoleculeProgramDefaults& d) {
  prog.group("Data").add_options()(
      "data", po::value(&s.data)->value_name("PATH"),
      ("PCQM4Mv2 layout (folder), MoleculeNet CSV, .smi, SDF, XYZ (each optionally .gz) or a built .npz "
       "(default: the shipped " + shippedDataLabel(d.data) + ")").c_str())(
      "format", po::value(&s.format)->value_name("NAME"),
      "pcqm4mv2 | csv | smi | sdf | xyz (default: from the file name)")(
      "smiles-col", value(&s.smilesCol, "smiles"), "CSV: the SMILES column")(
      "target-cols",
      d.targetCols.empty() ? po::value(&s.targetCols)->value_name("A,B") : value(&s.targetCols, d.targetCols),
      "CSV, SDF, XYZ: the columns (properties, keys) to predict, comma-separated")(
      "limit", value(&s.limit, int64_t{-1}), "use the first N molecules only (-1: all)")(
      "split", value(&s.split, d.split),
      "auto (the source's own split, else random) | random (seeded by --seed: 80/10/10 of a permutation) | "
      "scaffold (Bemis-Murcko scaffolds, largest groups to train first, 80/10/10, as OGB and MoleculeNet)")(
      "split-file", po::value(&s.splitFile)->value_name("DIR"),
      "OGB's split layout: DIR/{train,valid,test}.csv[.gz], one 0-based molecule index of the input per line")(
      "split-col", po::value(&s.splitCol)->value_name("COL"), "CSV: a column holding train / valid / test");
}

// What --loss auto and the default --metric mean in this program (app/RegressionDefaults.h), between `before` and
// `after`.
std::string regressionHelp(const std::string& before, const std::string& convention, const std::string& after) {
  const std::string ogb = "l1 and mae for data in the PCQM4Mv2 layout (OGB-LSC's metric)";
  if (convention == "chemprop")
    return before + "mse with rmse as the metric, Chemprop's defaults and MoleculeNet's measure; " + ogb + after;
  return before + "l1 with mae as the metric (" + (convention == "ogb-lsc" ? "OGB-LSC's" : "MoleculeNet's for QM7") +
         "); " + ogb + after;
}

// The task, its loss and metrics, and the model (its own flags, molecule and atom features, transfer).
void addModelFlags(Program& prog, MoleculeSettings& s, const MoleculeProgramDefaults& d) {
  const bool schnetProgram = MoleculeModelSpec::schnetIn(d.models);
  prog.group("Model and task").add_options()(
      "task", value(&s.task, "auto"),
      "regression | classification | auto (classification when every label is 0/1) | regression-mve (mean-variance "
      "estimation, gin, gcn, dmpnn: the head gives a mean and a variance per target, softplus of its second output "
      "+ 1e-6, trained by the Gaussian NLL of the scaled targets as Chemprop v2's MveFFN; the variance in target "
      "units is the uncertainty, z-scaled on validation by --calibration auto)")(
      "target-scaling", value(&s.targetScaling, d.targetScaling),
      schnetProgram ? "regression: atomref (schnet: per-element references fitted on the training split by least "
                      "squares, the model learns the rest per atom) | standard (learn (y - mean) / std of the "
                      "training split) | none; reported in target units"
                    : "regression: standard (learn (y - mean) / std of the training split; reported in target units) "
                      "| none")(
      "loss", value(&s.loss, "auto"),
      regressionHelp("regression's training loss on the (scaled) targets: l1 | mse | auto (", d.regression,
                     "); classification: always binary cross-entropy").c_str())(
      "metric", po::value(&s.metric)->value_name("A,B"),
      (std::string("metrics to report, comma-separated; the FIRST selects the best epoch (and --early-stopping), named "
      "selection_metric in the JSON. Regression: mae, rmse, r2 (each per target, then averaged over targets), "
      "std_mae (the mean over targets of MAE / the target's training std). Classification: roc (ROC-AUC), prc "
      "(average precision, the step-wise area under the precision-recall curve as sklearn's "
      "average_precision_score and OGB compute it; Chemprop's prc is the trapezoidal area, a little higher), "
      "accuracy, f1, mcc (a probability above 0.5 is a positive). Unlabelled values are left out per target, "
      "and roc and prc average over the targets with both classes. Default: roc for classification, std_mae for "
      "several regression targets, for one ") + regressionHelp("", d.regression, "")).c_str())(
      "class-balance", po::bool_switch(&s.classBalance),
      "classification: every training epoch takes as many positives (a molecule with a target of 1) as "
      "negatives, min(P, N) of each, drawn anew each epoch and in alternation (Chemprop's ClassBalanceSampler). "
      "With --strategy pad or stream every batch holds equal numbers (one apart when odd); plan packs by size, "
      "so the balance holds over the epoch");
  s.spec.addTo(prog.group("Model and task"), d.models);
  // Molecule features: for the models whose readout feeds a head.
  auto readsFeatures = [](const std::string& m) { return MoleculeModelSpec::messagePassingIn({m}) || m == "dmpnn"; };
  if (std::any_of(d.models.begin(), d.models.end(), readsFeatures)) {
    s.features.addTo(prog.group("Model and task"));
    s.atomFeatures.addTo(prog.group("Model and task"));
  }
  s.transfer.addTo(prog.group("Model and task"));
}

// How molecules are packed into fixed-size batches, for training and for evaluation.
void addBatchFlags(Program& prog, MoleculeSettings& s, const MoleculeProgramDefaults& d) {
  prog.group("Batches").add_options()(
      "strategy", value(&s.strategy, d.strategy),
      "auto (pad for Graphormer, plan otherwise) | pad (PadToMax) | stream (StreamPack) | plan (PlannedPack)")(
      "batch-size", value(&s.batchSize, d.batchSize),
      "real molecules per batch (pad), at most per batch (stream, plan); the padding graph comes on top")(
      "num-nodes", value(&s.numNodes, int64_t{0}), "atoms per batch (0: sized from the data)")(
      "num-edges", value(&s.numEdges, int64_t{0}), "directed bonds per batch (0: sized from the data)")(
      "num-graphs", value(&s.numGraphs, int64_t{0}), "graph slots per batch incl. padding (0: batch-size + 1)")(
      "oversize", value(&s.overSize, d.overSize),
      "a training molecule larger than a batch holds (or than --max-node): error | skip | trim_nodes | trim_edges | "
      "trim; evaluation always fits every molecule")(
      "pack-window", value(&s.packWindow, int64_t{0}), "PlannedPack window in molecules (0: whole epoch)")(
      "prefetch", value(&s.prefetch, int64_t{2}), "batches prepared ahead on a background thread");
  prog.group("Batches").add_options()(
      "eval-buckets", value(&s.evalBuckets, int64_t{4}),
      "evaluation and --predict batch the molecules in up to N fixed shapes chosen from the set's sizes (each "
      "molecule in the smallest that holds it; fewer when more would not lower the padded work: node pairs for "
      "Graphormer, atoms + bonds otherwise); 0 or 1: one shape that fits the largest molecule. Predictions are "
      "the same bits either way");
}

// Ensembles, calibration and MC dropout: the uncertainty of the predictions.
void addUncertaintyFlags(Program& prog, MoleculeSettings& s) {
  prog.group("Model and task").add_options()(
      "ensemble-size", value(&s.ensembleSize, int64_t{1}),
      "train N models from seeds --seed .. --seed + N - 1 (the same split and batches, another initialisation and "
      "dropout each, as Chemprop's --ensemble-size), one after the other, kept in one --save checkpoint; the "
      "prediction is their mean, the uncertainty their variance (of the probabilities for classification). The "
      "top-level results are member 0's (the run of --ensemble-size 1), the ensemble's are under \"ensemble\"")(
      "calibration", value(&s.calibration, "auto"),
      "of an ensemble or a regression-mve model, fitted on the validation set and kept in the checkpoint: zscaling "
      "(regression: one factor s^2 per target, by Gaussian NLL, multiplies the variances written) | platt "
      "(classification: sigmoid(a z + b) of the mean probability's logit z per target becomes the prediction) | "
      "isotonic (classification: the isotonic regression of the labels on the probabilities per target, as "
      "Chemprop's IsotonicCalibrator, becomes the prediction) | none | auto (zscaling for regression, none for "
      "classification). platt and isotonic also calibrate a single model");
  addMcDropoutFlags(prog.group("Model and task"), s.uncertainty, s.mcSamples);
}

// What the run writes besides its results: predictions, profile, padding report, HTML report.
void addOutputFlags(Program& prog, MoleculeSettings& s) {
  prog.flags().add_options()(
      "predict", po::value(&s.predict)->value_name("FILE.csv"),
      "write the test molecules' predictions (best validation epoch's weights): line,id,smiles,prediction; "
      "with --ensemble-size > 1 or --task regression-mve the mean and then the (calibrated) variance as "
      "uncertainty")(
      "profile", po::bool_switch(&s.profile),
      "per-op table of the training steps on stderr (op, pass, calls, ms, GFLOP, GFLOP/s, share); rows under "
      "\"profile\" with --json")(
      "padding-report-only", po::bool_switch(&s.paddingReportOnly), "one pass of the loader, no training")(
      "report-html", po::value<std::string>()->value_name("FILE.html"),
      "write one self-contained HTML page about the run (also --epochs 0 and ensembles): configuration and "
      "machine, learning curves, the test set's per-target metrics with a parity plot (regression) or ROC and "
      "PR curves (classification), the calibration of the uncertainty when there is one, and the results of "
      "--json");
}

}  // namespace

void addMoleculeFlags(Program& prog, MoleculeSettings& s, const MoleculeProgramDefaults& d) {
  s.spec.model = d.model;
  s.spec.layers = d.layers;
  s.spec.hidden = d.hidden;
  s.targetScaling = d.targetScaling;
  s.overSize = d.overSize;
  addDataFlags(prog, s, d);
  addModelFlags(prog, s, d);
  addBatchFlags(prog, s, d);
  addUncertaintyFlags(prog, s);
  addOutputFlags(prog, s);
  s.training.addTo(prog, d.training);
  s.device.addTo(prog);
  prog.setEpilog(d.epilog + (d.epilog.empty() ? "" : "\n\n") +
      "Results go to stdout (a summary, or one JSON object with --json); progress and notes go to stderr.\n"
      "The loss is in standardised units for regression with --target-scaling standard; metrics are in the\n"
      "targets' units. Checkpoints (--save) hold the configuration above, so --load FILE alone continues a run,\n"
      "and `predict --checkpoint FILE` applies the model to new molecules. An evaluation-only run (--load FILE\n"
      "--epochs 0) scores the saved best weights again and may change the batching flags and --metric; the flags\n"
      "that make the model (--model, --hidden, --layers, ...) must stay the checkpoint's.");
}

// BatchNorm's running statistics are updated by the model that runs the step: with replicas (or fp16 copies)
// each copy would keep its own and the checkpoint only the master's.
bool copiesKeepTheirOwnStatistics(const MoleculeSettings& s) {
  return s.device.replicas > 1 || s.device.precision == "fp16";
}

void resolveModelDefaults(MoleculeSettings& s, const Program& prog, bool continued) {
  if (s.spec.norm == "auto") {
    // LayerNorm GIN collapses to a near-constant prediction on regression targets (ESOL, docs/programs.md), so
    // BatchNorm, as OGB's and Hu et al.'s baselines, wherever it can run.
    s.spec.norm = continued || copiesKeepTheirOwnStatistics(s) ? "layer" : "batch";
  }
  // NNConv's edge network gives every bond a [hidden x hidden] matrix (at 300, 360 KB a bond): PyG's QM9 example's 64.
  if (s.spec.model == "nnconv" && !continued && !prog.given("hidden")) s.spec.hidden = 64;
  if (s.spec.isDmpnn()) {
    // Chemprop v1's batch_size 50 and NoamLR (the schedule is no part of a checkpoint: --load applies it anew).
    if (!continued && !prog.given("batch-size")) s.batchSize = 50;
    if (!prog.given("schedule")) s.training.schedule = "noam";
  }
}

void checkMoleculeFlags(const Program& prog, const MoleculeSettings& s, const MoleculeProgramDefaults& d,
                        const std::string& sizesFrom) {
  const MoleculeModelSpec& spec = s.spec;
  // Widths and batch sizes within the machine's memory before anything is allocated for them (a width a
  // checkpoint holds is named as its configuration's).
  spec.requireFitsInMemory(sizesFrom);
  spec.validate(d.models, &prog);
  s.features.validate(spec, &prog);
  s.atomFeatures.validate(spec, &prog);
  requireOneOf("--task", s.task, {"auto", "regression", "classification", "regression-mve"});
  if (s.task == "regression-mve" && (spec.isFixedConfiguration() || spec.isSchNet()))
    throw UsageError("--task regression-mve (a mean and a variance per target) applies to --model gin, gcn and dmpnn, "
                     "not " + spec.model);
  if (s.task == "regression-mve" && s.loss != "auto")
    throw UsageError("--loss " + s.loss + ": --task regression-mve trains by the Gaussian negative log-likelihood "
                     "(--loss applies to --task regression)");
  if (MoleculeModelSpec::schnetIn(d.models))
    requireOneOf("--target-scaling", s.targetScaling, {"atomref", "standard", "none"});
  else
    requireOneOf("--target-scaling", s.targetScaling, {"standard", "none"});
  if (s.targetScaling == "atomref" && !spec.isSchNet())
    throw UsageError("--target-scaling atomref applies to --model schnet (use standard or none)");
  requireOneOf("--split", s.split, {"auto", "random", "scaffold"});
  requireOneOf("--loss", s.loss, {"auto", "l1", "mse"});
  if (!s.splitCol.empty() && (s.split != "auto" || !s.splitFile.empty()))
    throw UsageError("--split-col and --split " + s.split + (s.splitFile.empty() ? "" : " / --split-file") +
                     " both choose the split; give one");
  if (!s.splitFile.empty() && s.split != "auto")
    throw UsageError("--split-file and --split " + s.split + " both choose the split; give one");
  s.packing();
  s.overSizeStrategy();
  requireAtLeast("--batch-size", static_cast<double>(s.batchSize), 1);
  requireAtLeast("--limit", static_cast<double>(s.limit), -1);
  if (s.limit == 0) throw UsageError("--limit 0: no molecule to train on (-1 uses all)");
  requireAtLeast("--num-nodes", static_cast<double>(s.numNodes), 0);
  requireAtLeast("--num-edges", static_cast<double>(s.numEdges), 0);
  requireAtLeast("--num-graphs", static_cast<double>(s.numGraphs), 0);
  if (s.numGraphs == 1) throw UsageError("--num-graphs 1: a batch needs a slot for its padding graph (at least 2)");
  requireAtLeast("--pack-window", static_cast<double>(s.packWindow), 0);
  requireRange("--eval-buckets", static_cast<double>(s.evalBuckets), 0, 16);
  FixedSizeOptions asked;
  asked.numNodes = s.numNodes;
  asked.numEdges = s.numEdges;
  asked.numGraphs = s.numGraphs;
  asked.maxNodesPerGraph = spec.readsPairBlocks() ? spec.maxNode : 0;
  spec.requireBatchFitsInMemory(asked, {"num-nodes", "num-edges", "num-graphs", "max-node"}, sizesFrom);
  // Every molecule of a batch has at least one atom and one bond; Graphormer gives each a block.
  const double perMolecule =
      spec.bytesPerNode() + spec.bytesPerEdge() + spec.bytesPerGraph(spec.readsPairBlocks() ? spec.maxNode : 1);
  requireFitsInMemory("batch-size", static_cast<double>(s.batchSize), static_cast<double>(s.batchSize) * perMolecule,
                      sizesFrom, "a batch's inputs and activations through " + spec.describe());
  requireAtLeast("--prefetch", static_cast<double>(s.prefetch), 0);
  if (!s.predict.empty()) checkWritable("--predict", s.predict);
  if (prog.values().count("report-html"))
    checkWritable("--report-html", prog.values()["report-html"].as<std::string>());
  if (!s.format.empty()) requireOneOf("--format", s.format, {"pcqm4mv2", "csv", "smi", "sdf", "xyz"});
  if (!s.metric.empty()) {
    try {
      parseMetrics(s.metric);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--metric " + s.metric + ": " + e.what());
    }
  }
  requireRange("--ensemble-size", static_cast<double>(s.ensembleSize), 1, 100);
  requireOneOf("--calibration", s.calibration, {"auto", "zscaling", "platt", "isotonic", "none"});
  if (s.calibration == "zscaling" && s.task == "classification")
    throw UsageError("--calibration zscaling scales regression variances (--task is classification: use platt or "
                     "isotonic)");
  if ((s.calibration == "platt" || s.calibration == "isotonic") && s.task.rfind("regression", 0) == 0)
    throw UsageError("--calibration " + s.calibration + " calibrates classification probabilities (--task is " +
                     s.task + ": use zscaling)");
  if (s.ensembleSize > 1 && s.training.continuing())
    throw UsageError("--ensemble-size " + std::to_string(s.ensembleSize) +
                     " (as given or as the checkpoint recorded): an ensemble trains its members in one run and is "
                     "not continued by --load or --resume; predict applies its checkpoint");
  requireOneOf("--uncertainty", s.uncertainty, {"auto", "mc-dropout"});
  requireRange("--mc-samples", static_cast<double>(s.mcSamples), 1, 1000);
  if (s.uncertainty == "mc-dropout") {
    requireMcDropoutModel("--uncertainty mc-dropout", spec.model, spec.dropout);
    if (s.ensembleSize > 1)
      throw UsageError("--uncertainty mc-dropout samples one model's dropout; --ensemble-size " +
                       std::to_string(s.ensembleSize) + " trains several (give one of the two)");
    if (s.task == "regression-mve")
      throw UsageError("--uncertainty mc-dropout applies to --task regression and classification, not regression-mve");
  } else if (prog.given("mc-samples")) {
    throw UsageError("--mc-samples applies to --uncertainty mc-dropout");
  }
  if (s.classBalance && s.task.rfind("regression", 0) == 0)
    throw UsageError("--class-balance balances the classes of a classification task (--task is " + s.task + ")");
  if (spec.norm == "batch" && copiesKeepTheirOwnStatistics(s))
    throw UsageError("--norm batch keeps running statistics in the model that trains: it needs --replicas 1 and "
                     "--precision fp32 or bf16 (got --replicas " + std::to_string(s.device.replicas) +
                     ", --precision " + s.device.precision + ")");
}

}  // namespace gnn::app
