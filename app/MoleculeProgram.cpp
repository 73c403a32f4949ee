#include "app/MoleculeProgram.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "app/ComputeInfo.h"
#include "app/Ensemble.h"
#include "app/McDropout.h"
#include "app/EpochOrderFlags.h"
#include "app/HeapTuning.h"
#include "app/HtmlReport.h"
#include "app/MemoryBounds.h"
#include "app/MoleculeData.h"
#include "app/MoleculePredictions.h"
#include "app/ShippedData.h"
#include "app/Trainer.h"
#include "data/TargetScaling.h"
#include "device/Device.h"
#include "gnn/Evaluation.h"
#include "gnn/GaussianNllLoss.h"
#include "gnn/Ops.h"
#include "gnn/Parallel.h"
#include "gnn/Profiler.h"
#include "gnn/ResidentMemory.h"
#include "gnn/SystemInfo.h"
#include "loaders/FixedSizeDataLoader.h"
#include "loaders/ShapeBuckets.h"
#include "models/GpsPlusPlus.h"
#include "models/Graphormer.h"

namespace gnn::app {

namespace {

// The first labelled value that is not 0 or 1 among the training molecules, as "line L, target T = v".
std::string firstNonBinary(const MoleculeData& md) {
  for (int64_t i : md.split.train) {
    Graph g = md.dataset->get(static_cast<size_t>(i));
    for (int64_t k = 0; k < g.y.numel(); ++k) {
      if (g.yMask.defined() && g.yMask.at(k) == 0) continue;
      const double v = g.y.at(k);
      if (v != 0.0 && v != 1.0) {
        std::ostringstream s;
        s << md.sourcePath << " line " << md.dataset->sourceLine(static_cast<size_t>(i)) << ", target "
          << (k < static_cast<int64_t>(md.targetNames.size()) ? md.targetNames[static_cast<size_t>(k)] : std::to_string(k))
          << " = " << v;
        return s.str();
      }
    }
  }
  return "";
}

nlohmann::json fixedToJson(const FixedSizeOptions& f) {
  return {{"num_nodes", f.numNodes}, {"num_edges", f.numEdges}, {"num_graphs", f.numGraphs},
          {"max_nodes_per_graph", f.maxNodesPerGraph}};
}
// A batch shape a checkpoint recorded as config.derived.<key>; a missing or malformed one is named.
FixedSizeOptions fixedFromJson(const nlohmann::json& j, const std::string& source, const std::string& key) {
  FixedSizeOptions f;
  for (auto [name, field] : {std::pair{"num_nodes", &f.numNodes}, std::pair{"num_edges", &f.numEdges},
                             std::pair{"num_graphs", &f.numGraphs}, std::pair{"max_nodes_per_graph", &f.maxNodesPerGraph}}) {
    if (!j.is_object() || !j.contains(name) || !j[name].is_number_integer())
      throw std::runtime_error(source + ": configuration 'derived." + key + "." + name + "' is " +
                               (j.is_object() && j.contains(name) ? j[name].dump() + ", not an integer"
                                                                  : std::string("missing")) +
                               "; the checkpoint cannot be used");
    *field = j[name].get<int64_t>();
  }
  try {
    f.validate();
  } catch (const std::exception& e) {
    throw std::runtime_error(source + ": configuration 'derived." + key + "' is no batch shape (" + e.what() +
                             "); the checkpoint cannot be used");
  }
  return f;
}

}  // namespace

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

void addMoleculeFlags(Program& prog, MoleculeSettings& s, const MoleculeProgramDefaults& d) {
  s.spec.model = d.model;
  s.spec.layers = d.layers;
  s.spec.hidden = d.hidden;
  s.targetScaling = d.targetScaling;
  s.overSize = d.overSize;
  const bool schnetProgram = MoleculeModelSpec::schnetIn(d.models);
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
      "regression's training loss on the (scaled) targets: l1 | mse (Chemprop's) | auto (l1); classification: "
      "always binary cross-entropy")(
      "metric", po::value(&s.metric)->value_name("A,B"),
      "metrics to report, comma-separated; the FIRST selects the best epoch (and --early-stopping), named "
      "selection_metric in the JSON. Regression: mae, rmse, r2 (each per target, then averaged over targets), "
      "std_mae (the mean over targets of MAE / the target's training std). Classification: roc (ROC-AUC), prc "
      "(average precision, the step-wise area under the precision-recall curve as sklearn's "
      "average_precision_score and OGB compute it; Chemprop's prc is the trapezoidal area, a little higher), "
      "accuracy, f1, mcc (a probability above 0.5 is a positive). Unlabelled values are left out per target, "
      "and roc and prc average over the targets with both classes. Default: mae for one regression target, "
      "std_mae for several, roc for classification")(
      "class-balance", po::bool_switch(&s.classBalance),
      "classification: every training epoch takes as many positives (a molecule with a target of 1) as "
      "negatives, min(P, N) of each, drawn anew each epoch and in alternation (Chemprop's ClassBalanceSampler). "
      "With --strategy pad or stream every batch holds equal numbers (one apart when odd); plan packs by size, "
      "so the balance holds over the epoch");
  s.spec.addTo(prog.group("Model and task"), d.models);
  // Molecule features: for the models whose readout feeds a head.
  auto readsFeatures = [](const std::string& m) { return m == "gin" || m == "gcn" || m == "dmpnn"; };
  if (std::any_of(d.models.begin(), d.models.end(), readsFeatures)) {
    s.features.addTo(prog.group("Model and task"));
    s.atomFeatures.addTo(prog.group("Model and task"));
  }
  s.transfer.addTo(prog.group("Model and task"));
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
  // BatchNorm's running statistics are updated by the model that runs the step: with replicas (or fp16 copies)
  // each copy would keep its own and the checkpoint only the master's.
  if (spec.norm == "batch" && (s.device.replicas > 1 || s.device.precision == "fp16"))
    throw UsageError("--norm batch keeps running statistics in the model that trains: it needs --replicas 1 and "
                     "--precision fp32 or bf16 (got --replicas " + std::to_string(s.device.replicas) +
                     ", --precision " + s.device.precision + ")");
}

namespace {

// One run of the program, phase by phase; each phase leaves its results here for the next.
class MoleculeRun {
 public:
  MoleculeRun(Program& prog, MoleculeSettings& s, const MoleculeProgramDefaults& d, EpochOrderFlags& order)
      : prog_(prog), s_(s), d_(d), order_(order) {}

  int run() {
    startOrContinue();
    loadData();
    deriveRunConfig();
    makeTrainLoader();
    // The pages faulted in while the data was read go to the heap before the model and the steps allocate.
    if (heapWarmUp_) {
      heapWarmUp_->release();
      out_["heap_warm_up_mb"] = static_cast<double>(heapWarmUp_->touchedBytes()) / (1 << 20);
    }
    if (s_.paddingReportOnly) return reportPadding();
    buildModel();
    train();
    trainEnsemble();
    evaluateOnly();
    writePredictions();
    if (!reportPath().empty()) out_["report_html"] = reportPath();
    report();
    writeReport();
    return 0;
  }

 private:
  void startOrContinue();
  void loadData();
  void deriveRunConfig();
  MoleculeTask deriveTask() const;
  std::vector<Metric> chosenMetrics() const;
  std::vector<uint8_t> trainingPositives() const;
  FixedSizeOptions trainingShape() const;
  FixedSizeOptions evaluationShape() const;
  void checkOversizedMolecules() const;
  void makeTrainLoader();
  int reportPadding();
  void buildModel();
  LossFn lossFunction();
  void train();
  void trainEnsemble();
  void evaluateEnsemble();
  void saveEnsemble(const EnsembleInfo& info);
  Evaluation evaluate(const std::vector<int64_t>& positions, const std::string& set);
  const ShapeBuckets& evalBucketsFor(const std::string& set, const std::vector<int64_t>& positions);
  void noteEvalPadding(const std::string& set, const std::vector<int64_t>& positions, const MoleculePredictions& p);
  std::string describeEvalPadding(const std::string& set, const std::vector<int64_t>& positions, const PaddingReport& r);
  void reportEvalPadding();
  void evaluateOnly();
  void writePredictions();
  std::string reportPath() const;
  void writeReport();
  void report();
  void reportMetrics(const nlohmann::json& sum);
  void printSummary(const nlohmann::json& sum) const;

  Program& prog_;
  MoleculeSettings& s_;
  MoleculeModelSpec& spec_ = s_.spec;
  const TrainingFlags& tf_ = s_.training;
  const DeviceFlags& df_ = s_.device;
  const MoleculeProgramDefaults& d_;
  EpochOrderFlags& order_;
  // Resident memory apart: RssAnon (what the run allocated) and RssFile (the mapped dataset's pages).
  ResidentMemoryPeak memoryPeak_;
  RunConfig config_;
  // The checkpoint continued (--load, --resume) and its path; sizesFrom_ names it for the memory checks.
  std::optional<Checkpoint> ck_;
  std::string ckPath_, sizesFrom_;
  PackingStrategy strategy_ = PackingStrategy::PlannedPack;
  OverSizeStrategy overSize_ = OverSizeStrategy::Error;
  MoleculeDataOptions mo_;
  MoleculeData md_;
  // The molecules as the model reads them (SchNet: the radius graph, computed once).
  std::shared_ptr<const Dataset> all_;
  int64_t tasks_ = 0;
  MoleculeTask task_ = MoleculeTask::Regression;
  bool classification_ = false;
  TargetScaling scaling_;
  FixedSizeOptions fixed_, evalFixed_;
  FixedSizeDataLoader::Options lo_;
  std::unique_ptr<FixedSizeDataLoader> trainLoader_;
  nlohmann::json out_;
  PaddingReport padding_;
  std::unique_ptr<BlockModel> model_;
  std::unique_ptr<Optimizer> opt_;
  std::vector<Metric> metrics_;  // --metric (or the task's default); the first selects the best epoch
  std::string metricName_;
  // An evaluation-only run (--load, no epoch to train): its own scores of the best weights.
  std::optional<Evaluation> evalValid_, evalTest_;
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<DeviceProgram> program_;
  // --ensemble-size N: members 1 .. N-1 (member 0 is model_, opt_, trainer_, program_), each with its own flags
  // (seed --seed + k; nothing saved, logged or checkpointed on its own), and the ensemble's test predictions.
  struct Member {
    std::unique_ptr<TrainingFlags> flags;
    std::unique_ptr<BlockModel> model;
    std::unique_ptr<Optimizer> opt;
    std::unique_ptr<Trainer> trainer;
    std::unique_ptr<DeviceProgram> program;
  };
  std::vector<Member> members_;
  std::optional<MoleculePredictions> ensembleTest_;
  // --report-html: the epochs each model trained in this run, and the ensemble's test predictions before
  // its calibration (kept only for the report).
  std::vector<LearningCurve> curves_;
  int64_t epochsBeforeRun_ = 0;  // of curves_[0]: trained by the run whose checkpoint this one continues
  std::optional<MoleculePredictions> ensembleTestUncalibrated_;
  std::string calibrationMethod_ = "none";
  OpProfiler profiler_;
  std::optional<HeapWarmUp> heapWarmUp_;
  int64_t steps_ = 0;
  // Inference throughput over every evaluation pass (no tape, eval mode, the training batch shape).
  double inferSeconds_ = 0;
  int64_t inferMolecules_ = 0;
  // Per evaluated set ("valid", "test"): its batch shapes (--eval-buckets), chosen once from its molecules' sizes,
  // the padding of its last pass, and that padding as JSON with one shape's for comparison.
  std::map<std::string, ShapeBuckets> evalBuckets_;
  std::map<std::string, PaddingReport> evalPadding_;
  nlohmann::json evalPaddingJson_ = nlohmann::json::object();
};

// The run's configuration: bound to the flags, restored from the checkpoint continued; then every flag checked.
void MoleculeRun::startOrContinue() {
  s_.bind(config_);
  order_.bind(config_);
  if (std::optional<CheckpointDir::Found> found = tf_.continueRun(prog_, config_)) {
    ck_ = std::move(found->checkpoint);
    ckPath_ = found->path;
    sizesFrom_ = ckPath_;
  }
  checkMoleculeFlags(prog_, s_, d_, sizesFrom_);
  order_.check();
  strategy_ = s_.packing();
  overSize_ = s_.overSizeStrategy();
  // No epoch trains in an evaluation-only run: a molecule larger than its training batch is no error.
  if (tf_.evaluationOnly() && overSize_ == OverSizeStrategy::Error) overSize_ = OverSizeStrategy::Skip;
  if (!config_.changedOutsideModel().empty() && !tf_.quiet) {
    std::string changed;
    for (const std::string& f : config_.changedOutsideModel()) changed += (changed.empty() ? "--" : ", --") + f;
    std::cerr << prog_.name() << ": evaluation only: " << changed << " as given, not as in " << ckPath_ << "\n";
  }
  keepFreedMemoryInHeap();
  heapWarmUp_.emplace();
}

void MoleculeRun::loadData() {
  mo_.path = s_.data.empty() ? shippedData(d_.data) : s_.data;
  mo_.format = s_.format;
  mo_.smilesColumn = s_.smilesCol;
  mo_.smilesColumnGiven = prog_.given("smiles-col");
  mo_.splitColumn = s_.splitCol;
  mo_.targetColumns = splitCommaList(s_.targetCols);
  mo_.limit = s_.limit;
  mo_.threads = numThreads();
  mo_.split = s_.split;
  mo_.splitFile = s_.splitFile;
  mo_.seed = tf_.seed;
  mo_.quiet = tf_.quiet;
  spec_.requireFeatures(mo_);
  if (!tf_.quiet && !s_.data.empty() && std::filesystem::path(mo_.path).extension() != ".npz")
    std::cerr << prog_.name() << ": reading " << mo_.path << " (featurised once, then cached)\n";
  md_ = openMoleculeData(mo_);
  if (md_.rejected > 0 && !tf_.quiet) {
    std::cerr << prog_.name() << ": " << md_.rejected << " molecule(s) of " << md_.sourcePath << " rejected";
    for (size_t k = 0; k < std::min<size_t>(md_.rejectedLines.size(), 5); ++k)
      std::cerr << "\n  " << md_.rejectedLines[k];
    if (md_.rejectedLines.size() > 5) std::cerr << "\n  ... (build_dataset inspect " << md_.npzPath << " lists all)";
    std::cerr << "\n";
  }
  all_ = spec_.view(md_.dataset);
  tasks_ = md_.dataset->numTargets();
  spec_.tasks = tasks_;
}

// What the run derives from the data on its first start, kept as it was when it continues (RunConfig::deriveOnce):
// the task, the target scaling, the model's output constants, the training and evaluation batch shapes.
void MoleculeRun::deriveRunConfig() {
  task_ = config_.deriveOnce(
      "task", [&] { return deriveTask(); },
      [](const nlohmann::json& j) {
        return j == "classification"   ? MoleculeTask::Classification
               : j == "regression-mve" ? MoleculeTask::RegressionMve
                                       : MoleculeTask::Regression;
      },
      [](MoleculeTask t) { return moleculeTaskName(t); });
  classification_ = task_ == MoleculeTask::Classification;
  spec_.outputsPerTarget = task_ == MoleculeTask::RegressionMve ? 2 : 1;  // a mean and a variance per target
  metrics_ = chosenMetrics();
  if (s_.classBalance && !classification_)
    throw UsageError("--class-balance balances the classes of a classification task, but the task is regression");
  if ((s_.calibration == "zscaling" && classification_) ||
      ((s_.calibration == "platt" || s_.calibration == "isotonic") && !classification_))
    throw UsageError("--calibration " + s_.calibration + " applies to " +
                     (classification_ ? "regression" : "classification") + ", but the task is " +
                     (classification_ ? "classification (use platt or isotonic)" : "regression (use zscaling)"));
  config_.derived["targets"] = md_.targetNames;
  config_.derived["featurisation"] = md_.featurisation;
  // Molecule-level features: computed once, scaled with the training split's statistics (kept in checkpoints).
  all_ = attachMoleculeFeatures(s_.features, md_, all_, config_, spec_, ckPath_, prog_.name(), tf_.quiet);
  // The user's atom features: the file's rows of each molecule, scaled with the training atoms' statistics.
  all_ = attachAtomFeatures(s_.atomFeatures, md_, all_, config_, spec_, ckPath_);
  // SchNet learns from every atom of an XYZ file, hydrogens included: SMILES given to `predict` later get
  // explicit hydrogens before their conformers are embedded (the XYZ reader itself ignores the option).
  auto endsWith = [](const std::string& t, const std::string& suffix) {
    return t.size() >= suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (spec_.isSchNet() && (mo_.format == "xyz" || (mo_.format.empty() && (endsWith(md_.sourcePath, ".xyz") ||
                                                                          endsWith(md_.sourcePath, ".xyz.gz")))))
    config_.derived["featurisation"]["explicit_hydrogens"] = true;
  scaling_ = config_.deriveOnce(
      "target_scaling",
      [&] {
        return !classification_ && s_.targetScaling == "standard"
                   ? TargetScaling::fit(*all_, md_.split.train, static_cast<int>(tasks_))
                   : TargetScaling::identity();
      },
      TargetScaling::fromJson, [](const TargetScaling& t) { return t.toJson(); });
  config_.deriveOnce(
      "model_output",
      [&] {
        if (!classification_ && s_.targetScaling == "atomref") fitAtomReferences(spec_, *all_, md_.split.train);
        return spec_.outputJson();
      },
      [&](const nlohmann::json& j) {
        spec_.outputFromJson(j);
        return spec_.outputJson();
      },
      [](const nlohmann::json& j) { return j; });
  if (!s_.predict.empty() && md_.split.test.empty())
    throw UsageError("--predict writes the test molecules' predictions, but the " + md_.split.kind +
                     " split has no test molecule");
  // A checkpoint's batch shapes must fit this machine too.
  auto restoredShape = [this](const char* key) {
    return [this, key](const nlohmann::json& j) {
      FixedSizeOptions f = fixedFromJson(j, ckPath_, key);
      const std::string k = std::string("derived.") + key + ".";
      spec_.requireBatchFitsInMemory(f, {k + "num_nodes", k + "num_edges", k + "num_graphs", k + "max_nodes_per_graph"},
                                     ckPath_);
      return f;
    };
  };
  // An evaluation-only run given other batching flags sizes its batches from them, not from the checkpoint.
  const std::vector<std::string>& changed = config_.changedOutsideModel();
  // (--eval-buckets chooses its shapes within the evaluation shape: that one stays.)
  if (std::any_of(changed.begin(), changed.end(),
                  [](const std::string& f) { return f != "metric" && f != "eval-buckets"; })) {
    config_.derived.erase("fixed");
    config_.derived.erase("eval_fixed");
  }
  fixed_ = config_.deriveOnce("fixed", [&] { return trainingShape(); }, restoredShape("fixed"), fixedToJson);
  checkOversizedMolecules();
  evalFixed_ = config_.deriveOnce("eval_fixed", [&] { return evaluationShape(); }, restoredShape("eval_fixed"), fixedToJson);
}

// The task of a first run: from --task and the labels.
MoleculeTask MoleculeRun::deriveTask() const {
  const std::string bad = firstNonBinary(md_);
  if (s_.task == "classification" && !bad.empty())
    throw UsageError("--task classification needs 0/1 labels, but " + bad +
                     " (use --task regression for continuous targets)");
  if (s_.task == "regression-mve") return MoleculeTask::RegressionMve;
  return s_.task == "classification" || (s_.task == "auto" && bad.empty()) ? MoleculeTask::Classification
                                                                           : MoleculeTask::Regression;
}

// --metric in the task's terms (the default: moleculeMetricName's, as runs have always been scored).
std::vector<Metric> MoleculeRun::chosenMetrics() const {
  if (s_.metric.empty()) return {defaultMetric(classification_, tasks_)};
  const std::vector<Metric> ms = parseMetrics(s_.metric);  // checked by checkMoleculeFlags
  for (Metric m : ms)
    if (isClassificationMetric(m) != classification_)
      throw UsageError("--metric " + s_.metric + ": " + metricName(m) + " scores " +
                       (isClassificationMetric(m) ? "classification" : "regression") + ", but the task is " +
                       (classification_ ? "classification" : "regression") + " (its metrics: " +
                       (classification_ ? "roc, prc, accuracy, f1, mcc" : "mae, rmse, r2, std_mae") + ")");
  return ms;
}

// --class-balance: which training molecules are positives (Chemprop: a target of 1, any target when several).
std::vector<uint8_t> MoleculeRun::trainingPositives() const {
  std::vector<uint8_t> positive;
  int64_t count = 0;
  for (int64_t i : md_.split.train) {
    const Graph g = md_.dataset->get(static_cast<size_t>(i));
    bool any = false;
    for (int64_t k = 0; k < g.y.numel(); ++k)
      any = any || ((!g.yMask.defined() || g.yMask.at(k) != 0) && g.y.at(k) > 0.5);
    positive.push_back(any ? 1 : 0);
    count += any;
  }
  const int64_t n = static_cast<int64_t>(positive.size());
  if (count == 0 || count == n)
    throw UsageError("--class-balance: the training split has " + std::to_string(count) + " positive and " +
                     std::to_string(n - count) + " negative molecule(s); balancing needs both");
  return positive;
}

// Fixed sizes from the whole set, so validation and test batches share the training shapes.
FixedSizeOptions MoleculeRun::trainingShape() const {
  // Graphormer: sized from the molecules of at most --max-node atoms, the ones its blocks hold.
  std::shared_ptr<const Dataset> sized = all_;
  if (spec_.readsPairBlocks()) {
    std::vector<size_t> small;
    for (size_t i = 0; i < all_->size(); ++i)
      if (all_->numNodes(i) <= spec_.maxNode) small.push_back(i);
    if (small.empty())
      throw UsageError("no molecule has at most --max-node " + std::to_string(spec_.maxNode) + " atoms");
    sized = std::make_shared<Subset>(all_, small);
  }
  FixedSizeOptions fixed = strategy_ == PackingStrategy::PadToMax
                               ? FixedSizeOptions::fromDataset(*sized, s_.batchSize + 1)
                               : FixedSizeOptions::forPacking(*sized, s_.batchSize);
  if (spec_.readsPairBlocks()) fixed.maxNodesPerGraph = spec_.maxNode;
  if (s_.numGraphs > 0) fixed.numGraphs = s_.numGraphs;
  if (s_.numNodes > 0) fixed.numNodes = s_.numNodes;
  if (s_.numEdges > 0) fixed.numEdges = s_.numEdges;
  try {
    fixed.validate();
  } catch (const std::exception& e) {
    throw UsageError("--num-nodes " + std::to_string(fixed.numNodes) + ", --num-edges " +
                     std::to_string(fixed.numEdges) + ", --num-graphs " + std::to_string(fixed.numGraphs) +
                     ": every graph slot of a batch needs at least one atom and one bond (raise --num-nodes "
                     "and --num-edges to at least --num-graphs, or lower --batch-size)");
  }
  spec_.requireBatchFitsInMemory(fixed, {"num-nodes", "num-edges", "num-graphs", "max-node"}, sizesFrom_);
  return fixed;
}

// Evaluation and --predict: the training shape, grown (node-pair blocks included) until every molecule fits,
// so validation and test scores cover every molecule.
FixedSizeOptions MoleculeRun::evaluationShape() const {
  FixedSizeOptions evalFixed = fixed_;
  int64_t maxNodes = 0, maxEdges = 0;
  for (size_t i = 0; i < all_->size(); ++i) {
    maxNodes = std::max(maxNodes, all_->numNodes(i));
    maxEdges = std::max(maxEdges, all_->numEdges(i));
  }
  if (evalFixed.maxNodesPerGraph > 0) evalFixed.maxNodesPerGraph = std::max(evalFixed.maxNodesPerGraph, maxNodes);
  evalFixed.numNodes = std::max(evalFixed.numNodes, evalFixed.rowsNeeded(maxNodes, 1));
  evalFixed.numEdges = std::max(evalFixed.numEdges, evalFixed.rowsNeeded(maxEdges, 1));
  evalFixed.validate();
  return evalFixed;
}

// Molecules larger than a batch holds, named in the flags' terms before any training.
void MoleculeRun::checkOversizedMolecules() const {
  int64_t over = 0, worstNodes = 0, worstEdges = 0, worstLine = 0;
  for (size_t i = 0; i < static_cast<size_t>(md_.size); ++i)
    if (!fixed_.fitsGraph(all_->numNodes(i), all_->numEdges(i))) {
      ++over;
      if (all_->numNodes(i) > worstNodes || all_->numEdges(i) > worstEdges) {
        worstNodes = std::max(worstNodes, all_->numNodes(i));
        worstEdges = std::max(worstEdges, all_->numEdges(i));
        worstLine = md_.dataset->sourceLine(i);
      }
    }
  if (over > 0 && overSize_ == OverSizeStrategy::Error) {
    const int64_t needNodes = worstNodes + fixed_.numGraphs - 1, needEdges = worstEdges + fixed_.numGraphs - 1;
    std::string raise;
    if (needNodes > fixed_.numNodes) raise += "--num-nodes to at least " + std::to_string(needNodes);
    if (needEdges > fixed_.numEdges)
      raise += (raise.empty() ? "" : " and ") + std::string("--num-edges to at least ") + std::to_string(needEdges);
    if (raise.empty() || (fixed_.maxNodesPerGraph > 0 && worstNodes > fixed_.maxNodesPerGraph))
      raise = spec_.readsPairBlocks() ? "--max-node to at least " + std::to_string(worstNodes)
                                   : "--num-nodes / --num-edges (or lower --batch-size)";
    throw UsageError(std::to_string(over) + " molecule(s) are larger than a batch of --num-nodes " +
                     std::to_string(fixed_.numNodes) + ", --num-edges " + std::to_string(fixed_.numEdges) +
                     ", --num-graphs " + std::to_string(fixed_.numGraphs) + " holds (e.g. " + md_.sourcePath +
                     " line " + std::to_string(worstLine) + "); raise " + raise + ", or pass --oversize skip (or trim)");
  }
  if (over > 0 && !tf_.quiet)
    std::cerr << prog_.name() << ": " << over << " molecule(s) larger than a batch holds"
              << (spec_.readsPairBlocks() ? " (more than --max-node " + std::to_string(spec_.maxNode) + " atoms)" : "")
              << ": --oversize " << s_.overSize << " applies to them in training; evaluation predicts them all\n";
}

// The training loader, and the data's part of the results (its first epoch's padding included).
void MoleculeRun::makeTrainLoader() {
  auto train = std::make_shared<Subset>(all_, std::vector<size_t>(md_.split.train.begin(), md_.split.train.end()));
  lo_.strategy = strategy_;
  lo_.overSize = overSize_;
  lo_.seed = tf_.seed;
  lo_.prefetch = static_cast<int>(s_.prefetch);
  lo_.packWindow = s_.packWindow;
  lo_.microBatchesPerRequest = df_.microBatchesPerRequest();
  // Under mpirun: this rank's replicas' micro-batches only (every micro-batch of an epoch on exactly one rank).
  lo_.shard = df_.options.shard(/*training=*/true);
  if (s_.classBalance) lo_.classBalance = trainingPositives();
  // A training set larger than memory is read in shuffled chunks, ahead of the batches (EpochOrderFlags).
  const std::string order = config_.deriveOnce(
      "epoch_order", [&] { return order_.resolve(md_.dataset->file().fileBytes(), physicalMemoryBytes()); },
      [](const nlohmann::json& j) { return j.get<std::string>(); }, [](const std::string& o) { return o; });
  lo_.chunks = order_.chunks(order);
  if (order_.advise()) lo_.readAhead = std::make_shared<MappedReadAhead>(md_.dataset, md_.split.train);
  trainLoader_ = std::make_unique<FixedSizeDataLoader>(train, fixed_, lo_);
  out_["epoch_order"] = order;
  if (lo_.chunks.enabled()) {
    out_["shuffle_chunk"] = lo_.chunks.chunk;
    out_["shuffle_window"] = lo_.chunks.window;
  }
  out_["read_ahead"] = lo_.readAhead && lo_.readAhead->active();

  out_["data"] = mo_.path;
  out_["graphs"] = md_.size;
  out_["rejected"] = md_.rejected;
  out_["split"] = md_.split.toJson();
  out_["train_graphs"] = md_.split.train.size();
  out_["valid_graphs"] = md_.split.valid.size();
  out_["test_graphs"] = md_.split.test.size();
  out_["targets"] = md_.targetNames;
  if (s_.features.any()) {
    out_["molecule_features"] = s_.features.kind;
    out_["molecule_features_file"] = s_.features.file;
    out_["molecule_features_width"] = spec_.graphFeatures;
  }
  if (s_.atomFeatures.any()) {
    out_["atom_features"] = s_.atomFeatures.file;
    out_["atom_features_width"] = spec_.nodeFeatures;
  }
  out_["strategy"] = packingStrategyName(strategy_);
  out_["num_nodes"] = fixed_.numNodes;
  out_["num_edges"] = fixed_.numEdges;
  out_["num_graphs"] = fixed_.numGraphs;
  out_["batch_size"] = s_.batchSize;
  out_["task"] = moleculeTaskName(task_);
  out_["class_balance"] = s_.classBalance;
  if (s_.classBalance) {
    const auto positives = std::count(lo_.classBalance.begin(), lo_.classBalance.end(), uint8_t{1});
    out_["class_balance_positives"] = positives;
    out_["class_balance_negatives"] = static_cast<int64_t>(lo_.classBalance.size()) - positives;
    if (strategy_ == PackingStrategy::PlannedPack && !tf_.quiet)
      std::cerr << prog_.name() << ": --class-balance: every epoch takes as many positives as negatives; --strategy "
                << "plan packs them by size, so single batches are balanced only on average (pad or stream keep "
                << "the alternation)\n";
  }
  out_["target_scaling"] = scaling_.toJson();
  if (!classification_)
    out_["loss"] = task_ == MoleculeTask::RegressionMve ? "gaussian_nll" : s_.loss == "mse" ? "mse" : "l1";
  out_["threads"] = numThreads();
  addComputeInfo(out_);

  trainLoader_->startEpoch(0);
  padding_ = trainLoader_->report();
  const nlohmann::json reportJson = padding_.toJson();  // items() must not outlive the json it iterates
  for (const auto& [k, v] : reportJson.items()) out_[k] = v;
}

// --padding-report-only: collation of the whole set, timed on this thread (no prefetch): the loader's cost per
// epoch.
int MoleculeRun::reportPadding() {
  FixedSizeDataLoader::Options so = lo_;
  so.prefetch = 0;
  so.readAhead = nullptr;  // the training set's advice; this pass reads the whole set
  so.classBalance.clear();
  FixedSizeDataLoader once(all_, fixed_, so);
  Stopwatch sw;
  once.startEpoch(0);
  for (Batch b; once.next(b);) {
  }
  const double collateSeconds = sw.ms() / 1000;
  out_["collate_seconds_full_set"] = collateSeconds;
  out_["collate_graphs_per_s"] = static_cast<double>(once.report().realGraphs) / collateSeconds;
  std::string evalLines;  // the evaluation sets' batches as planned (--eval-buckets)
  for (const auto& [set, positions] : {std::pair{"valid", &md_.split.valid}, std::pair{"test", &md_.split.test}})
    if (!positions->empty()) {
      evalPadding_[set] = plannedPadding(all_, *positions, evalBucketsFor(set, *positions), spec_.readsPairBlocks());
      evalLines += describeEvalPadding(set, *positions, evalPadding_[set]) + "\n";
    }
  reportEvalPadding();
  if (tf_.json)
    std::cout << out_.dump() << std::endl;
  else
    std::cout << "train loader (" << s_.strategy << ", " << fixed_.toString() << "): " << padding_.toString() << "\n"
              << "collation of all " << all_->size() << " molecules: " << collateSeconds << " s\n" << evalLines;
  return 0;
}

// The model, its optimizer and the Trainer (continuing the checkpoint, if any), and the device program that
// runs every training step: the model whole on this machine (cpu), or replicas, pipeline stages and
// micro-batches on simulated IPUs (ipu), compiled once for the training batch's fixed shapes.
void MoleculeRun::buildModel() {
  model_ = makeMoleculeModel(spec_, tf_.seed);
  if (df_.simulated()) useStaticShapes(*model_);
  // --init-from: the encoder from another run (a new run only); --freeze-encoder: the head alone is trained.
  const std::vector<Variable> trained = s_.transfer.prepare(*model_, spec_, tf_.continuing(), prog_, tf_.quiet);
  opt_ = tf_.makeOptimizer({{trained, tf_.weightDecay}});
  metricName_ = metricName(metrics_.front());
  trainer_ = std::make_unique<Trainer>(prog_, tf_, *model_, *opt_, config_,
                                       MetricSpec{metricName_, higherIsBetter(metrics_.front())}, "molecules");
  if (ck_) trainer_->resume(*ck_, ckPath_);
  if (!tf_.quiet)
    std::cerr << prog_.name() << ": " << md_.size << " molecules (" << md_.split.kind << " split "
              << md_.split.train.size() << "/" << md_.split.valid.size() << "/" << md_.split.test.size() << "), "
              << moleculeTaskName(task_) << " of " << tasks_ << " target(s), "
              << spec_.describe() << " (" << model_->numParameters() << " parameters), batches of "
              << fixed_.numNodes << " atoms, " << fixed_.numEdges << " directed bonds, " << fixed_.numGraphs
              << " graph slots, " << numThreads() << " thread(s)\n";
  trainer_->logRunStart({{"data", mo_.path}, {"split", md_.split.toJson()}, {"molecules", md_.size}});
  trainLoader_->startEpoch(0);
  const Batch shapes = trainLoader_->collateBatch(0);
  program_ = df_.compile(prog_, *model_, lossFunction(), opt_.get(), shapes, *trainLoader_, tf_.quiet);
  if (!df_.trace.empty() || !df_.traceSvg.empty()) program_->enableTrace(df_.traceRequests);
  if (!tf_.quiet && df_.simulated())
    std::cerr << prog_.name() << ": " << df_.options.describe(static_cast<int64_t>(program_->stageNames().size()))
              << " on " << program_->numIpus() << " simulated IPU(s); one weight update = " << s_.batchSize
              << " graph slots x " << df_.replicas << " replica(s) x " << df_.gradAccum
              << " micro-batch(es), one host request = " << df_.microBatchesPerRequest() << " micro-batches\n";
  if (!tf_.quiet && isDistributed(prog_.processes().get()))
    std::cerr << prog_.name() << ": the replicas spread over " << prog_.processes()->size() << " MPI processes ("
              << prog_.processes()->localSize() << " on this host, " << numThreads()
              << " thread(s) each); this rank runs " << df_.options.shard(true).describe() << "\n";
}

LossFn MoleculeRun::lossFunction() {
  return {[this](const Variable& pred, const Batch& b) {
            if (classification_) return bceWithLogits(pred, b.y, b.yMask);
            if (task_ == MoleculeTask::RegressionMve) return gaussianNllLoss(pred, scaling_.standardize(b.y), b.yMask);
            return s_.loss == "mse" ? mseLoss(pred, scaling_.standardize(b.y), b.yMask)
                                    : l1Loss(pred, scaling_.standardize(b.y), b.yMask);
          },
          {}};
}

void MoleculeRun::train() {
  Trainer& trainer = *trainer_;
  Trainer::Hooks hooks;
  hooks.stepsPerEpoch = [&] {
    trainLoader_->startEpoch(trainer.completedEpochs());
    return program_->updatesFor(trainLoader_->numBatches());
  };
  hooks.trainEpoch = [&](int64_t epoch, int64_t skip) {
    // The profile covers the training steps only, not the evaluations between epochs.
    std::optional<ObserverScope> profiling;
    if (s_.profile) profiling.emplace(profiler_);
    trainLoader_->startEpoch(epoch);
    for (Batch b; trainLoader_->nextRequest(b);) {
      if (skip > 0) {
        // Updates already trained before an interrupt (interrupts come between host requests).
        skip -= program_->updatesFor(trainLoader_->lastRequestMicroBatches());
        continue;
      }
      const bool more = trainer.step(*program_, b, [&] {
        std::vector<int64_t> pos;
        for (int64_t g : b.graphIndex) pos.push_back(md_.split.train[static_cast<size_t>(g)]);
        return describeMolecules(md_, pos);
      });
      steps_ += trainer.lastRun().updates;
      if (!more) break;  // --time-budget spent
    }
  };
  hooks.validate = [&] { return evaluate(md_.split.valid, "valid"); };
  if (!md_.split.test.empty()) hooks.test = [&] { return evaluate(md_.split.test, "test"); };
  if (curves_.empty()) epochsBeforeRun_ = static_cast<int64_t>(trainer.curve().size());
  trainer.run(hooks);
  // The learning curve (--report-html): the trainer's, with the epochs before a --load.
  LearningCurve curve{"seed " + std::to_string(tf_.seed + curves_.size()), {}};
  for (const TrainedEpoch& e : trainer.curve()) curve.epochs.push_back({e.epoch, e.loss, e.valid, e.test});
  curves_.push_back(std::move(curve));
  if (s_.profile && prog_.primary()) {
    std::cerr << "per-op profile of " << steps_ << " training steps (forward and backward; optimizer not included)\n";
    profiler_.print(std::cerr);
    out_["profile"] = profiler_.json();
    out_["profile_steps"] = steps_;
  }
}

// --ensemble-size N: members 1 .. N-1 trained as member 0 was (the same split, batches and flags; Chemprop v2
// also keeps the data order and changes the initialisation per member), from seeds --seed + k, each through
// train() with its model, optimizer, trainer and device program in place of member 0's.
void MoleculeRun::trainEnsemble() {
  if (s_.ensembleSize <= 1) {
    // One model with an uncertainty (mean-variance estimation) or a calibration of its probabilities: scored,
    // calibrated on validation and kept in the checkpoint as an ensemble of one.
    if (task_ == MoleculeTask::RegressionMve || s_.uncertainty == "mc-dropout" ||
        (classification_ && (s_.calibration == "platt" || s_.calibration == "isotonic")))
      evaluateEnsemble();
    return;
  }
  auto swapIn = [this](Member& m) {
    std::swap(model_, m.model);
    std::swap(opt_, m.opt);
    std::swap(trainer_, m.trainer);
    std::swap(program_, m.program);
  };
  for (int64_t k = 1; k < s_.ensembleSize; ++k) {
    Member m;
    m.flags = std::make_unique<TrainingFlags>(tf_);
    m.flags->seed = tf_.seed + static_cast<uint64_t>(k);
    m.flags->save.clear();  // the ensemble's checkpoint is written once every member is trained
    m.flags->checkpointDir.clear();
    m.flags->log.clear();
    m.model = makeMoleculeModel(spec_, m.flags->seed);
    if (df_.simulated()) useStaticShapes(*m.model);
    const std::vector<Variable> trained = s_.transfer.prepare(*m.model, spec_, false, prog_, /*quiet=*/true);
    m.opt = m.flags->makeOptimizer({{trained, tf_.weightDecay}});
    m.trainer =
        std::make_unique<Trainer>(prog_, *m.flags, *m.model, *m.opt, config_,
                                  MetricSpec{metricName_, higherIsBetter(metrics_.front())}, "molecules");
    trainLoader_->startEpoch(0);
    m.program = df_.compile(prog_, *m.model, lossFunction(), m.opt.get(), trainLoader_->collateBatch(0),
                            *trainLoader_, /*quiet=*/true);
    if (!tf_.quiet)
      std::cerr << prog_.name() << ": ensemble member " << k + 1 << " of " << s_.ensembleSize << " (seed "
                << m.flags->seed << ")\n";
    swapIn(m);
    try {
      train();
    } catch (...) {
      swapIn(m);
      throw;
    }
    swapIn(m);
    members_.push_back(std::move(m));
  }
  evaluateEnsemble();
}

// The ensemble's scores on the validation and test sets (each member with its best validation epoch's
// weights), the calibration fitted on validation, the test set's uncertainty scores before and after it, and
// the checkpoint.
void MoleculeRun::evaluateEnsemble() {
  std::vector<std::pair<BlockModel*, Trainer*>> all = {{model_.get(), trainer_.get()}};
  for (Member& m : members_) all.emplace_back(m.model.get(), m.trainer.get());
  // --uncertainty mc-dropout: the best model's samples stand for the members (keyed by the molecules' SMILES).
  const bool mc = s_.uncertainty == "mc-dropout";
  const McDropout mcDropout{s_.mcSamples, tf_.seed};
  const std::vector<uint64_t> mcKeys = mc ? moleculeDropoutKeys(*md_.dataset) : std::vector<uint64_t>();
  auto predictSet = [&](const std::vector<int64_t>& positions, const std::string& set) {
    std::vector<MoleculePredictions> ps;
    for (const auto& member : all)
      member.second->withBestWeights([&] {
        if (mc)
          ps = predictMcDropoutSamples(*member.first, tasks_, all_, mcKeys, positions, evalBucketsFor(set, positions),
                                       scaling_, task_, mcDropout);
        else
          ps.push_back(predictMolecules(*member.first, tasks_, all_, positions, evalBucketsFor(set, positions),
                                        scaling_, task_));
      });
    MoleculePredictions p = combineEnsemble(ps, task_);
    if (classification_ && all.size() == 1 && !mc) p.uncertainty = Tensor();  // one classifier: no spread to write
    return p;
  };
  EnsembleInfo info;
  info.size = s_.ensembleSize;
  nlohmann::json members = nlohmann::json::array();
  for (size_t k = 0; k < all.size(); ++k) {
    info.seeds.push_back(tf_.seed + k);
    const Trainer& t = *all[k].second;
    nlohmann::json j = {
        {"seed", tf_.seed + k}, {"best_epoch", t.bestEpoch()}, {"valid_" + metricName_, t.bestValid()}};
    if (t.bestTest().contains("metric")) j["test_" + metricName_] = t.bestTest()["metric"];
    members.push_back(j);
  }
  const bool variance = mc || (!classification_ && (s_.ensembleSize > 1 || task_ == MoleculeTask::RegressionMve));
  nlohmann::json j = {{"size", s_.ensembleSize},
                      {"seeds", info.seeds},
                      {"uncertainty", variance ? "variance" : "none"},
                      {"estimator", mc ? "mc-dropout"
                                    : task_ == MoleculeTask::RegressionMve ? (s_.ensembleSize > 1 ? "ensemble+mve" : "mve")
                                                                         : (s_.ensembleSize > 1 ? "ensemble" : "none")},
                      {"members", members}};
  MoleculePredictions valid = predictSet(md_.split.valid, "valid");
  Evaluation ev =
      scoreTargets(valid.score, valid.target, valid.mask, metrics_, md_.targetNames, scaling_.std);
  j["valid_" + metricName_] = ev.metric;
  j["valid_details"] = ev.details;
  if (!valid.positions.empty() && !classification_ && s_.calibration != "none")
    info.calibration = fitZScaling(valid);
  if (!valid.positions.empty() && classification_ && s_.calibration == "platt")
    info.calibration = fitPlatt(valid);
  if (!valid.positions.empty() && classification_ && s_.calibration == "isotonic")
    info.calibration = fitIsotonic(valid);
  if (!md_.split.test.empty()) {
    MoleculePredictions test = predictSet(md_.split.test, "test");
    Evaluation et = scoreTargets(test.score, test.target, test.mask, metrics_, md_.targetNames, scaling_.std);
    j["test_" + metricName_] = et.metric;
    j["test_details"] = et.details;
    auto scores = [&](const MoleculePredictions& q) {
      return classification_ ? classificationUncertaintyScores(q, md_.targetNames)
                             : uncertaintyScores(q, md_.targetNames);
    };
    j["test_uncertainty"] = {{"uncalibrated", scores(test)}};
    if (!reportPath().empty() && info.calibration.method != "none") {  // apply() changes the tensors in place
      ensembleTestUncalibrated_ = test;
      ensembleTestUncalibrated_->pred = test.pred.clone();
      ensembleTestUncalibrated_->score = test.score.clone();
      if (test.uncertainty.defined()) ensembleTestUncalibrated_->uncertainty = test.uncertainty.clone();
    }
    calibrationMethod_ = info.calibration.method;
    info.calibration.apply(test);
    if (info.calibration.method != "none") {
      j["test_uncertainty"]["calibrated"] = scores(test);
      // Platt and isotonic change the probabilities: the test metrics of the ones written.
      if (classification_)
        j["test_calibrated_details"] =
            scoreTargets(test.score, test.target, test.mask, metrics_, md_.targetNames, scaling_.std).details;
    }
    ensembleTest_ = std::move(test);
  }
  j["calibration"] = info.calibration.toJson();
  j["calibration"]["fitted_on"] = "valid";
  if (mc) j["mc_dropout"] = mcDropout.toJson();
  // One model's block is "uncertainty" (its top-level results are the same model's, uncalibrated).
  out_[s_.ensembleSize > 1 ? "ensemble" : "uncertainty"] = j;
  if (s_.ensembleSize > 1) out_["ensemble_size"] = s_.ensembleSize;
  if (!tf_.quiet) {
    auto shown = [](const nlohmann::json& v) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.5g", v.is_number() ? v.get<double>() : NAN);
      return std::string(buf);
    };
    std::cerr << prog_.name() << ": "
              << (s_.ensembleSize > 1 ? "ensemble of " + std::to_string(s_.ensembleSize) : std::string("best model"))
              << ": valid " << metricName_ << " " << shown(ev.metric);
    if (j.contains("test_" + metricName_))
      std::cerr << ", test " << metricName_ << " " << shown(j["test_" + metricName_]);
    if (!classification_ && j.contains("test_uncertainty") && j["test_uncertainty"].contains("calibrated"))
      std::cerr << "; test miscalibration area "
                << shown(j["test_uncertainty"]["uncalibrated"]["miscalibration_area"]) << " uncalibrated, "
                << shown(j["test_uncertainty"]["calibrated"]["miscalibration_area"])
                << " after z-scaling on validation";
    if (classification_ && j.contains("test_uncertainty") && j["test_uncertainty"].contains("calibrated"))
      std::cerr << "; test NLL " << shown(j["test_uncertainty"]["uncalibrated"]["nll"]) << " uncalibrated, "
                << shown(j["test_uncertainty"]["calibrated"]["nll"]) << " after " << info.calibration.method
                << " on validation";
    std::cerr << "\n";
  }
  saveEnsemble(info);
}

// --save: member 0's checkpoint as its trainer wrote it, with every member's best weights ("member<k>.*") and
// the ensemble's metadata added.
void MoleculeRun::saveEnsemble(const EnsembleInfo& info) {
  if (tf_.save.empty() || !prog_.primary()) return;
  Checkpoint ck = Checkpoint::load(tf_.save);
  trainer_->withBestWeights([&] { ck.addModule(ensembleMemberPrefix(0), *model_); });
  for (size_t k = 0; k < members_.size(); ++k)
    members_[k].trainer->withBestWeights(
        [&] { ck.addModule(ensembleMemberPrefix(static_cast<int64_t>(k) + 1), *members_[k].model); });
  ck.meta["ensemble"] = info.toJson();
  if (s_.uncertainty == "mc-dropout") ck.meta["mc_dropout"] = McDropout{s_.mcSamples, tf_.seed}.toJson();
  ck.save(tf_.save);
  if (!tf_.quiet)
    std::cerr << prog_.name() << ": saved the " << (info.size > 1 ? "ensemble of " + std::to_string(info.size) : std::string("calibration"))
              << " in " << tf_.save << "\n";
}

Evaluation MoleculeRun::evaluate(const std::vector<int64_t>& positions, const std::string& set) {
  Stopwatch sw;
  MoleculePredictions p =
      predictMolecules(*model_, tasks_, all_, positions, evalBucketsFor(set, positions), scaling_, task_);
  inferSeconds_ += sw.ms() / 1000;
  noteEvalPadding(set, positions, p);
  inferMolecules_ += static_cast<int64_t>(p.positions.size());
  if (lo_.readAhead) lo_.readAhead->releaseAll();  // the mapped file's pages the evaluation read
  Evaluation e = scoreTargets(p.score, p.target, p.mask, metrics_, md_.targetNames, scaling_.std);
  e.details["molecules"] = static_cast<int64_t>(p.positions.size());
  if (!p.skipped.empty()) e.details["skipped_too_large"] = static_cast<int64_t>(p.skipped.size());
  return e;
}

// A set's evaluation shapes: chosen once from its molecules' sizes (the same shapes every epoch), within the
// evaluation shape every molecule fits.
const ShapeBuckets& MoleculeRun::evalBucketsFor(const std::string& set, const std::vector<int64_t>& positions) {
  auto it = evalBuckets_.find(set);
  if (it == evalBuckets_.end())
    it = evalBuckets_.emplace(set, inferenceBuckets(*all_, positions, evalFixed_, s_.evalBuckets, spec_.readsPairBlocks()))
             .first;
  return it->second;
}

// The padding of a set's evaluation batches (its last pass); the first time, its JSON and a line on stderr.
void MoleculeRun::noteEvalPadding(const std::string& set, const std::vector<int64_t>& positions,
                                  const MoleculePredictions& p) {
  const bool first = evalPadding_.count(set) == 0;
  evalPadding_[set] = p.padding;
  if (!first) return;
  const std::string line = describeEvalPadding(set, positions, p.padding);
  if (!tf_.quiet) trainer_->progress().line(line);
}

// `r`, the padding of a set's evaluation batches, into the results' JSON beside what one shape gives the same
// molecules (planned, not run), and as one line of text.
std::string MoleculeRun::describeEvalPadding(const std::string& set, const std::vector<int64_t>& positions,
                                             const PaddingReport& r) {
  const ShapeBuckets& buckets = evalBucketsFor(set, positions);
  const bool pairs = spec_.readsPairBlocks();
  const PaddingReport one = plannedPadding(all_, positions, ShapeBuckets::single(evalFixed_), pairs);
  std::vector<int64_t> molecules(static_cast<size_t>(buckets.size()), 0);
  for (int64_t i : positions) {
    const int64_t k = buckets.bucketOf(all_->numNodes(static_cast<size_t>(i)), all_->numEdges(static_cast<size_t>(i)));
    if (k >= 0) ++molecules[static_cast<size_t>(k)];
  }
  nlohmann::json j = r.toJson();
  j["shapes"] = nlohmann::json::array();
  for (size_t k = 0; k < molecules.size(); ++k) {
    nlohmann::json shape = fixedToJson(buckets.shapes()[k]);
    shape["molecules"] = molecules[k];
    j["shapes"].push_back(shape);
  }
  j["single_shape"] = fixedToJson(evalFixed_);
  j["single_shape_padding"] = one.toJson();
  evalPaddingJson_[set] = j;
  auto efficiency = [pairs](const PaddingReport& q) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "atoms %.1f%% real", 100 * q.nodeEfficiency());
    std::string t = buf;
    if (pairs && q.totalNodePairs > 0) {
      std::snprintf(buf, sizeof buf, ", atom pairs %.1f%% real", 100 * q.nodePairEfficiency());
      t += buf;
    }
    return t;
  };
  std::ostringstream line;
  line << prog_.name() << ": " << set << " batches (" << positions.size() << " molecules) in " << buckets.size()
       << (buckets.size() == 1 ? " shape" : " shapes") << " (--eval-buckets " << s_.evalBuckets
       << "): " << efficiency(r);
  if (buckets.size() > 1) line << "; one shape: " << efficiency(one);
  return line.str();
}

// The evaluation padding in the results: per set, and over the sets' last passes.
void MoleculeRun::reportEvalPadding() {
  out_["eval_buckets"] = s_.evalBuckets;
  out_["eval_padding"] = evalPaddingJson_;
  PaddingReport all;
  for (const auto& [set, r] : evalPadding_) all.merge(r);
  out_["eval_node_efficiency"] = all.nodeEfficiency();
  out_["eval_edge_efficiency"] = all.edgeEfficiency();
  if (all.totalNodePairs > 0) out_["eval_node_pair_efficiency"] = all.nodePairEfficiency();
}

// An evaluation-only run scores the best weights itself (with its own batching and --metric), rather than
// reporting the scores the checkpoint kept from training.
void MoleculeRun::evaluateOnly() {
  if (!tf_.evaluationOnly()) return;
  trainer_->withBestWeights([&] {
    evalValid_ = evaluate(md_.split.valid, "valid");
    if (!md_.split.test.empty()) evalTest_ = evaluate(md_.split.test, "test");
  });
}

// --predict: the test molecules with the best validation epoch's weights (an ensemble's: their mean and variance).
void MoleculeRun::writePredictions() {
  if (s_.predict.empty()) return;
  if (ensembleTest_) {
    if (prog_.primary()) writePredictionsCsv(s_.predict, *md_.dataset, *ensembleTest_, md_.targetNames);
    if (!tf_.quiet)
      std::cerr << prog_.name() << ": wrote " << ensembleTest_->positions.size() << " test predictions"
                << (s_.ensembleSize > 1 ? " of the " + std::to_string(s_.ensembleSize) + " members" : std::string())
                << (ensembleTest_->uncertainty.defined() && task_ != MoleculeTask::Classification
                        ? " with their uncertainty" : "")
                << " to " << s_.predict << "\n";
    out_["predictions"] = s_.predict;
    return;
  }
  trainer_->withBestWeights([&] {
    MoleculePredictions p = predictMolecules(*model_, tasks_, all_, md_.split.test,
                                             evalBucketsFor("test", md_.split.test), scaling_, task_);
    if (prog_.primary()) writePredictionsCsv(s_.predict, *md_.dataset, p, md_.targetNames);
    if (!tf_.quiet)
      std::cerr << prog_.name() << ": wrote " << p.positions.size() << " test predictions to " << s_.predict << "\n";
  });
  out_["predictions"] = s_.predict;
}

std::string MoleculeRun::reportPath() const {
  const po::variables_map& v = prog_.values();
  return v.count("report-html") ? v["report-html"].as<std::string>() : std::string();
}

// --report-html: the run on one page (app/HtmlReport.h), scored on the test set (the validation set when the
// split has none) with the weights the run reports: an ensemble's calibrated mean, else the best epoch's.
void MoleculeRun::writeReport() {
  const std::string path = reportPath();
  if (path.empty() || !prog_.primary()) return;
  HtmlReportInput in;
  in.program = prog_.name();
  in.task = task_;
  in.targetNames = md_.targetNames;
  in.metricName = metricName_;
  in.configuration = config_.toJson();
  in.training = tf_.trainingIdentity();
  in.results = out_;
  in.curves = curves_;
  in.epochsBeforeRun = epochsBeforeRun_;
  in.evaluationOnly = evalValid_.has_value();
  in.dataset = md_.dataset.get();
  const bool test = !md_.split.test.empty();
  in.predictedSet = test ? "test" : "valid";
  std::optional<MoleculePredictions> best;
  if (ensembleTest_) {
    in.predicted = &*ensembleTest_;
    if (ensembleTestUncalibrated_) in.uncalibrated = &*ensembleTestUncalibrated_;
    in.calibration = calibrationMethod_;
  } else {
    const std::vector<int64_t>& set = test ? md_.split.test : md_.split.valid;
    trainer_->withBestWeights([&] {
      best =
          predictMolecules(*model_, tasks_, all_, set, evalBucketsFor(in.predictedSet, set), scaling_, task_);
    });
    in.predicted = &*best;
  }
  writeHtmlReport(path, in);
  if (!tf_.quiet) std::cerr << prog_.name() << ": wrote the report to " << path << "\n";
}

// The results: one JSON object (--json) or a summary on stdout; the device's traces and stage table.
void MoleculeRun::report() {
  const Trainer& trainer = *trainer_;
  nlohmann::json sum = trainer.summary();
  if (evalValid_) {  // evaluation only: this run's scores of the best weights
    sum["valid_" + metricName_] = evalValid_->metric;
    sum["valid_details"] = evalValid_->details;
    if (evalTest_) {
      sum["test_" + metricName_] = evalTest_->metric;
      sum["test_details"] = evalTest_->details;
    }
  }
  for (const auto& [k, v] : sum.items()) out_[k] = v;
  reportMetrics(sum);
  out_["model"] = spec_.model;
  if (spec_.isGraphormer()) {
    const auto& go = static_cast<const Graphormer&>(*model_).options();
    out_["layers"] = go.layers;
    out_["hidden"] = go.hidden;
    out_["max_node"] = spec_.maxNode;
    out_["eval_max_node"] = evalFixed_.maxNodesPerGraph;
  } else if (spec_.isGps()) {
    const auto& go = static_cast<const GpsPlusPlus&>(*model_).options();
    out_["layers"] = go.layers;
    out_["hidden"] = go.nodeDim;
    out_["max_node"] = spec_.maxNode;
    out_["eval_max_node"] = evalFixed_.maxNodesPerGraph;
  } else {
    out_["layers"] = spec_.layers;
    out_["hidden"] = spec_.hidden;
  }
  out_["parameters"] = model_->numParameters();
  if (!s_.transfer.initFrom.empty()) {
    out_["init_from"] = s_.transfer.initFrom;
    out_["freeze_encoder"] = s_.transfer.freezeEncoder;
    int64_t trained = 0;
    for (const Variable& p : opt_->parameters()) trained += p.value().numel();
    out_["trained_parameters"] = trained;
  }
  out_.update(spec_.resultJson());  // a model's own sizes (dmpnn: depth, aggregation, FFN)
  // Names kept from earlier versions of this program's JSON.
  out_["valid_metric_name"] = metricName_;
  out_["valid_metric"] = sum["valid_" + metricName_];
  if (sum.contains("test_" + metricName_)) out_["test_metric"] = sum["test_" + metricName_];
  out_["real_graphs_per_s"] = sum["train_samples_per_s"];
  out_["train_graphs_per_s"] = sum["train_samples_per_s"];
  reportEvalPadding();
  out_["infer_graphs_per_s"] = inferSeconds_ > 0 ? static_cast<double>(inferMolecules_) / inferSeconds_ : 0.0;
  out_["train_molecules_per_s"] = out_["train_graphs_per_s"];
  out_["infer_molecules_per_s"] = out_["infer_graphs_per_s"];
  out_["seconds"] = sum["train_seconds"].get<double>() + sum["eval_seconds"].get<double>();
  out_["param_l2"] = paramL2(*model_);
  out_["param_checksum"] = paramChecksum(*model_);
  const nlohmann::json deviceJson = df_.toJson(*program_);  // items() must not outlive the json it iterates
  for (const auto& [k, v] : deviceJson.items()) out_[k] = v;
  const nlohmann::json planJson = df_.planJson(*program_);
  for (const auto& [k, v] : planJson.items()) out_[k] = v;
  out_["samples_per_s"] = sum["train_samples_per_s"];
  out_["padded_micro_batches"] = trainer.paddedMicroBatches();
  out_["dropped_micro_batches"] = trainer.droppedMicroBatches();
  if (!tf_.quiet && (trainer.droppedMicroBatches() > 0 || trainer.paddedMicroBatches() > 0))
    std::cerr << prog_.name() << ": the epochs' last host requests were short: "
              << (trainer.droppedMicroBatches() > 0
                      ? std::to_string(trainer.droppedMicroBatches()) + " micro-batch(es) dropped (--partial-request drop)"
                      : std::to_string(trainer.paddedMicroBatches()) +
                            " weight-0 micro-batch(es) padded in (--partial-request pad; they change nothing)")
              << "\n";
  df_.writeTraces(*program_, prog_.name() + " " + spec_.model);
  if (df_.simulated() && !tf_.quiet) std::cerr << "stages (per micro-batch):\n" << program_->stageTable();
  if (df_.simulated()) {
    nlohmann::json st = nlohmann::json::array();
    for (const auto& r : program_->record().stages)
      st.push_back({{"blocks", r.name}, {"parameters", r.parameters}, {"forward_ops", r.forwardOps},
                    {"backward_ops", r.backwardOps}, {"flops_per_micro_batch", r.forwardFlops + r.backwardFlops},
                    {"saved_bytes_per_micro_batch", r.savedBytes}, {"max_stashed", r.maxStashed}});
    out_["stage_table"] = st;
  }
  out_["peak_rss_mb"] = peakRssMb();
  const ResidentMemory peak = memoryPeak_.peak(), now = residentMemory();
  out_["peak_rss_anon_mb"] = peak.anonMb;
  out_["peak_rss_file_mb"] = peak.fileMb;
  out_["rss_anon_mb"] = now.anonMb;
  out_["rss_file_mb"] = now.fileMb;
  if (lo_.readAhead) {
    out_["read_ahead_mb"] = static_cast<double>(lo_.readAhead->willNeedBytes()) / 1048576.0;
    out_["released_mb"] = static_cast<double>(lo_.readAhead->releasedBytes()) / 1048576.0;
  }
  if (tf_.json)
    std::cout << out_.dump() << std::endl;
  else
    printSummary(sum);
}

// Every --metric at the best epoch as valid_<name> and test_<name>, and which one selected it.
void MoleculeRun::reportMetrics(const nlohmann::json& sum) {
  out_["selection_metric"] = metricName_;
  out_["metrics"] = nlohmann::json::array();
  for (Metric m : metrics_) {
    const std::string name = metricName(m);
    out_["metrics"].push_back(name);
    for (const std::string part : {"valid", "test"}) {
      const std::string details = part + "_details";
      if (sum.contains(details) && sum[details].is_object() && sum[details].contains(name))
        out_[part + "_" + name] = sum[details][name];
    }
  }
  out_["evaluation_only"] = tf_.evaluationOnly();
  if (!config_.changedOutsideModel().empty()) out_["changed_from_checkpoint"] = config_.changedOutsideModel();
}

// Without --json: the best epoch's metrics (per target when there are several) and the training speed.
void MoleculeRun::printSummary(const nlohmann::json& sum) const {
  auto shown = [](const nlohmann::json& v) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) return std::string("n/a (no labels)");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.5g", v.get<double>());
    return std::string(buf);
  };
  std::cout << "best epoch " << trainer_->bestEpoch() << " of " << trainer_->completedEpochs() << ": valid "
            << metricName_ << " " << shown(out_.at("valid_metric"));
  if (out_.contains("test_metric")) std::cout << ", test " << metricName_ << " " << shown(out_.at("test_metric"));
  std::cout << "\n";
  for (size_t k = 1; k < metrics_.size(); ++k) {  // the other --metric values, at the same epoch
    const std::string name = metricName(metrics_[k]);
    std::cout << "  valid " << name << " " << shown(out_.value("valid_" + name, nlohmann::json()));
    if (out_.contains("test_" + name)) std::cout << ", test " << name << " " << shown(out_.at("test_" + name));
    std::cout << "\n";
  }
  const Metric selected = metrics_.front();
  const std::string perKey = selected == Metric::StdMae ? "mae_per_target" : metricName_ + "_per_target";
  const std::string label = selected == Metric::RocAuc ? "ROC-AUC" : selected == Metric::StdMae ? "MAE" : metricName_;
  if (tasks_ > 1 && sum.contains("test_details") && sum["test_details"].is_object() &&
      sum["test_details"].contains(perKey))
    for (const auto& [name, v] : sum["test_details"][perKey].items())
      std::cout << "  test " << label << " " << name << " " << shown(v) << "\n";
  std::printf("%.0f molecules/s in training, param_l2 %.6f\n", sum["train_samples_per_s"].get<double>(),
              out_.at("param_l2").get<double>());
}

}  // namespace

int runMoleculeProgram(int argc, char** argv, const MoleculeProgramDefaults& d) {
  Program prog(d.name, d.summary);
  MoleculeSettings s;
  addMoleculeFlags(prog, s, d);
  EpochOrderFlags order;
  order.addTo(prog.group("Batches"));
  return prog.run(argc, argv, [&] {
    s.training.apply(prog);
    s.transfer.check(prog, s.training);
    s.training.programTraining["class_balance"] = s.classBalance;  // decides the weights as --lr does
    s.device.apply(prog);
    return MoleculeRun(prog, s, d, order).run();
  });
}

}  // namespace gnn::app
