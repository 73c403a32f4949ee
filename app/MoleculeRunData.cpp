#include "app/MoleculeRun.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "app/ComputeInfo.h"
#include "app/HeapTuning.h"
#include "app/MemoryBounds.h"
#include "app/ShippedData.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/SystemInfo.h"

namespace gnn::app::detail {

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
          << (k < static_cast<int64_t>(md.targetNames.size()) ? md.targetNames[static_cast<size_t>(k)]
                                                               : std::to_string(k))
          << " = " << v;
        return s.str();
      }
    }
  }
  return "";
}

// A batch shape a checkpoint recorded as config.derived.<key>; a missing or malformed one is named.
FixedSizeOptions fixedFromJson(const nlohmann::json& j, const std::string& source, const std::string& key) {
  FixedSizeOptions f;
  for (auto [name, field] : {std::pair{"num_nodes", &f.numNodes}, std::pair{"num_edges", &f.numEdges},
                             std::pair{"num_graphs", &f.numGraphs},
                             std::pair{"max_nodes_per_graph", &f.maxNodesPerGraph}}) {
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

// The run's configuration: bound to the flags, restored from the checkpoint continued; then every flag checked.
void MoleculeRun::startOrContinue() {
  s_.bind(config_);
  order_.bind(config_);
  if (std::optional<CheckpointDir::Found> found = tf_.continueRun(prog_, config_)) {
    ck_ = std::move(found->checkpoint);
    ckPath_ = found->path;
    sizesFrom_ = ckPath_;
  }
  resolveModelDefaults(s_, prog_, ck_.has_value());
  checkMoleculeFlags(prog_, s_, d_, sizesFrom_);
  // A run saved before the choice was recorded continues with what it trained with (L1, MAE).
  regression_ = config_.deriveOnce(
      "regression_defaults",
      [&] {
        return ck_ ? RegressionDefaults::earlier()
                   : RegressionDefaults::forData(s_.data.empty() ? shippedData(d_.data) : s_.data, s_.format,
                                                 d_.regression);
      },
      RegressionDefaults::fromJson, [](const RegressionDefaults& r) { return r.toJson(); });
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
        if (spec_.model == "pna") fitDegreeHistogram(spec_, *all_, md_.split.train);
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
  evalFixed_ =
      config_.deriveOnce("eval_fixed", [&] { return evaluationShape(); }, restoredShape("eval_fixed"), fixedToJson);
  evalPadding_.emplace(all_, evalFixed_, s_.evalBuckets, spec_.readsPairBlocks(), prog_.name());
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

// --metric in the task's terms. The default: roc for classification, std_mae for several regression targets, and
// for one the convention of the data's field (regression_: rmse, or mae for PCQM4Mv2 and QM7).
std::vector<Metric> MoleculeRun::chosenMetrics() const {
  if (s_.metric.empty())
    return {classification_ || tasks_ > 1 ? defaultMetric(classification_, tasks_) : parseMetrics(regression_.metric)[0]};
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
                     " line " + std::to_string(worstLine) + "); raise " + raise +
                     ", or pass --oversize skip (or trim)");
  }
  if (over > 0 && !tf_.quiet)
    std::cerr << prog_.name() << ": " << over << " molecule(s) larger than a batch holds"
              << (spec_.readsPairBlocks() ? " (more than --max-node " + std::to_string(spec_.maxNode) + " atoms)" : "")
              << ": --oversize " << s_.overSize << " applies to them in training; evaluation predicts them all\n";
}

// The training loader, and the data's part of the results (its first epoch's padding included).
TrainData MoleculeRun::makeTrainLoader() {
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
  nlohmann::json out = nlohmann::json::object();
  out["epoch_order"] = order;
  if (lo_.chunks.enabled()) {
    out["shuffle_chunk"] = lo_.chunks.chunk;
    out["shuffle_window"] = lo_.chunks.window;
  }
  out["read_ahead"] = lo_.readAhead && lo_.readAhead->active();

  out["data"] = mo_.path;
  out["graphs"] = md_.size;
  out["rejected"] = md_.rejected;
  out["split"] = md_.split.toJson();
  out["train_graphs"] = md_.split.train.size();
  out["valid_graphs"] = md_.split.valid.size();
  out["test_graphs"] = md_.split.test.size();
  out["targets"] = md_.targetNames;
  if (s_.features.any()) {
    out["molecule_features"] = s_.features.kind;
    out["molecule_features_file"] = s_.features.file;
    out["molecule_features_width"] = spec_.graphFeatures;
  }
  if (s_.atomFeatures.any()) {
    out["atom_features"] = s_.atomFeatures.file;
    out["atom_features_width"] = spec_.nodeFeatures;
  }
  out["strategy"] = packingStrategyName(strategy_);
  out["num_nodes"] = fixed_.numNodes;
  out["num_edges"] = fixed_.numEdges;
  out["num_graphs"] = fixed_.numGraphs;
  out["batch_size"] = s_.batchSize;
  out["task"] = moleculeTaskName(task_);
  out["class_balance"] = s_.classBalance;
  if (s_.classBalance) {
    const auto positives = std::count(lo_.classBalance.begin(), lo_.classBalance.end(), uint8_t{1});
    out["class_balance_positives"] = positives;
    out["class_balance_negatives"] = static_cast<int64_t>(lo_.classBalance.size()) - positives;
    if (strategy_ == PackingStrategy::PlannedPack && !tf_.quiet)
      std::cerr << prog_.name() << ": --class-balance: every epoch takes as many positives as negatives; --strategy "
                << "plan packs them by size, so single batches are balanced only on average (pad or stream keep "
                << "the alternation)\n";
  }
  out["target_scaling"] = scaling_.toJson();
  if (!classification_)
    out["loss"] = task_ == MoleculeTask::RegressionMve ? "gaussian_nll" : regressionLoss();
  out["threads"] = numThreads();
  addComputeInfo(out);

  trainLoader_->startEpoch(0);
  const PaddingReport padding = trainLoader_->report();
  const nlohmann::json reportJson = padding.toJson();  // items() must not outlive the json it iterates
  for (const auto& [k, v] : reportJson.items()) out[k] = v;
  return {std::move(out), padding};
}

}  // namespace gnn::app::detail
