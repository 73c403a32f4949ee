#include "device/Device.h"
#include "app/MoleculeProgram.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "app/DeviceFlags.h"
#include "app/HeapTuning.h"
#include "app/MemoryBounds.h"
#include "app/MoleculeData.h"
#include "app/MoleculeModel.h"
#include "app/MoleculePredictions.h"
#include "app/Program.h"
#include "app/ShippedData.h"
#include "app/Trainer.h"
#include "app/TrainingFlags.h"
#include "gnn/Ops.h"
#include "gnn/Parallel.h"
#include "gnn/Profiler.h"
#include "gnn/SystemInfo.h"
#include "loaders/FixedSizeDataLoader.h"
#include "models/Graphormer.h"

namespace gnn::app {

namespace {

struct Config {
  std::string data, format, smilesCol = "smiles", targetCols, splitCol, split = "auto", splitFile, task = "auto",
                    targetScaling = "standard", strategy = "plan", overSize = "error", predict;
  int64_t numNodes = 0, numEdges = 0, numGraphs = 0, batchSize = 128, limit = -1, prefetch = 2, packWindow = 0;
  bool paddingReportOnly = false, profile = false;
};



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

// "auto": Graphormer pads (its attention works on a dense block per graph slot, so packing saves nothing),
// message-passing models and SchNet pack by size (their work follows the atoms and edges).
PackingStrategy strategyFromFlag(const std::string& s, bool graphormer) {
  requireOneOf("--strategy", s, {"auto", "pad", "stream", "plan"});
  if (s == "auto") return graphormer ? PackingStrategy::PadToMax : PackingStrategy::PlannedPack;
  return parsePackingStrategy(s);
}

OverSizeStrategy overSizeFromFlag(const std::string& s) {
  requireOneOf("--oversize", s, {"error", "skip", "trim_nodes", "trim_edges", "trim"});
  return parseOverSizeStrategy(s);
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

int runMoleculeProgram(int argc, char** argv, const MoleculeProgramDefaults& d) {
  Program prog(d.name, d.summary);
  Config c;
  MoleculeModelSpec spec;
  spec.model = d.model;
  spec.layers = d.layers;
  spec.hidden = d.hidden;
  c.targetScaling = d.targetScaling;
  c.overSize = d.overSize;
  TrainingFlags tf;
  DeviceFlags df;
  const bool schnetProgram = MoleculeModelSpec::schnetIn(d.models);
  prog.group("Data").add_options()(
      "data", po::value(&c.data)->value_name("PATH"),
      ("PCQM4Mv2 layout (folder), MoleculeNet CSV, .smi, SDF, XYZ (each optionally .gz) or a built .npz "
       "(default: the shipped " + shippedDataLabel(d.data) + ")").c_str())(
      "format", po::value(&c.format)->value_name("NAME"),
      "pcqm4mv2 | csv | smi | sdf | xyz (default: from the file name)")(
      "smiles-col", value(&c.smilesCol, "smiles"), "CSV: the SMILES column")(
      "target-cols",
      d.targetCols.empty() ? po::value(&c.targetCols)->value_name("A,B") : value(&c.targetCols, d.targetCols),
      "CSV, SDF, XYZ: the columns (properties, keys) to predict, comma-separated")(
      "limit", value(&c.limit, int64_t{-1}), "use the first N molecules only (-1: all)")(
      "split", value(&c.split, d.split),
      "auto (the source's own split, else random) | random (seeded by --seed: 80/10/10 of a permutation) | "
      "scaffold (Bemis-Murcko scaffolds, largest groups to train first, 80/10/10, as OGB and MoleculeNet)")(
      "split-file", po::value(&c.splitFile)->value_name("DIR"),
      "OGB's split layout: DIR/{train,valid,test}.csv[.gz], one 0-based molecule index of the input per line")(
      "split-col", po::value(&c.splitCol)->value_name("COL"), "CSV: a column holding train / valid / test");
  prog.group("Model and task").add_options()(
      "task", value(&c.task, "auto"), "regression | classification | auto (classification when every label is 0/1)")(
      "target-scaling", value(&c.targetScaling, d.targetScaling),
      schnetProgram ? "regression: atomref (schnet: per-element references fitted on the training split by least "
                      "squares, the model learns the rest per atom) | standard (learn (y - mean) / std of the "
                      "training split) | none; reported in target units"
                    : "regression: standard (learn (y - mean) / std of the training split; reported in target units) "
                      "| none");
  spec.addTo(prog.group("Model and task"), d.models);
  prog.group("Batches").add_options()(
      "strategy", value(&c.strategy, d.strategy),
      "auto (pad for Graphormer, plan otherwise) | pad (PadToMax) | stream (StreamPack) | plan (PlannedPack)")(
      "batch-size", value(&c.batchSize, d.batchSize),
      "real molecules per batch (pad), at most per batch (stream, plan); the padding graph comes on top")(
      "num-nodes", value(&c.numNodes, int64_t{0}), "atoms per batch (0: sized from the data)")(
      "num-edges", value(&c.numEdges, int64_t{0}), "directed bonds per batch (0: sized from the data)")(
      "num-graphs", value(&c.numGraphs, int64_t{0}), "graph slots per batch incl. padding (0: batch-size + 1)")(
      "oversize", value(&c.overSize, d.overSize),
      "a training molecule larger than a batch holds (or than --max-node): error | skip | trim_nodes | trim_edges | "
      "trim; evaluation always fits every molecule")(
      "pack-window", value(&c.packWindow, int64_t{0}), "PlannedPack window in molecules (0: whole epoch)")(
      "prefetch", value(&c.prefetch, int64_t{2}), "batches prepared ahead on a background thread");
  prog.flags().add_options()(
      "predict", po::value(&c.predict)->value_name("FILE.csv"),
      "write the test molecules' predictions (best validation epoch's weights): line,id,smiles,prediction")(
      "profile", po::bool_switch(&c.profile),
      "per-op table of the training steps on stderr (op, pass, calls, ms, GFLOP, GFLOP/s, share); rows under "
      "\"profile\" with --json")(
      "padding-report-only", po::bool_switch(&c.paddingReportOnly), "one pass of the loader, no training");
  tf.addTo(prog, d.training);
  df.addTo(prog);
  prog.setEpilog(d.epilog + (d.epilog.empty() ? "" : "\n\n") +
      "Results go to stdout (a summary, or one JSON object with --json); progress and notes go to stderr.\n"
      "The loss is in standardised units for regression with --target-scaling standard; metrics are in the\n"
      "targets' units. Checkpoints (--save) hold the configuration above, so --load FILE alone continues a run,\n"
      "and `predict --checkpoint FILE` applies the model to new molecules.");
  return prog.run(argc, argv, [&] {
    tf.apply(prog);
    df.apply(prog);
    RunConfig config;
    for (const char* f : {"data", "format", "smiles-col", "target-cols", "split-col", "split", "split-file", "task",
                          "target-scaling", "strategy", "oversize"}) {
      std::string* p = std::string(f) == "data"           ? &c.data
                       : std::string(f) == "format"       ? &c.format
                       : std::string(f) == "split-col"    ? &c.splitCol
                       : std::string(f) == "smiles-col"   ? &c.smilesCol
                       : std::string(f) == "target-cols"  ? &c.targetCols
                       : std::string(f) == "split"        ? &c.split
                       : std::string(f) == "split-file"   ? &c.splitFile
                       : std::string(f) == "task"         ? &c.task
                       : std::string(f) == "target-scaling" ? &c.targetScaling
                       : std::string(f) == "strategy"     ? &c.strategy
                                                          : &c.overSize;
      config.bind(f, p);
    }
    config.bind("limit", &c.limit);
    config.bind("batch-size", &c.batchSize);
    config.bind("num-nodes", &c.numNodes);
    config.bind("num-edges", &c.numEdges);
    config.bind("num-graphs", &c.numGraphs);
    config.bind("pack-window", &c.packWindow);
    config.bind("seed", const_cast<uint64_t*>(&tf.seed));
    spec.bind(config);
    // --load FILE, or --resume: the newest valid checkpoint of --checkpoint-dir.
    std::optional<CheckpointDir::Found> found = tf.checkpointToContinue();
    std::optional<Checkpoint> ck;
    std::string ckPath;
    if (found) {
      ck = std::move(found->checkpoint);
      ckPath = found->path;
      const nlohmann::json& written = ck->meta.contains("program") ? ck->meta["program"] : nlohmann::json();
      const std::string program = written.is_string() ? written.get<std::string>() : written.dump();
      if (program != d.name)
        throw std::runtime_error(ckPath + ": not a checkpoint of " + std::string(d.name) + " (program '" + program + "')");
      config.restore(ck->meta["config"], prog, ckPath);
      if (!config.derived.is_object())
        throw std::runtime_error(ckPath + ": configuration 'derived' is not a JSON object; the checkpoint cannot be used");
    }
    // Reads config.derived.<key> of the checkpoint continued: a malformed value is named in this program's words.
    auto readDerived = [&](const char* key, const auto& read) {
      try {
        return read(config.derived[key]);
      } catch (const nlohmann::json::exception&) {
        std::string shown = config.derived[key].dump();
        if (shown.size() > 120) shown = shown.substr(0, 117) + "...";
        throw std::runtime_error(ckPath + ": configuration 'derived." + key + "' = " + shown +
                                 " is malformed; the checkpoint cannot be used");
      }
    };
    // Widths and batch sizes within the machine's memory before anything is allocated for them (a width a
    // checkpoint holds is named as its configuration's).
    const std::string sizesFrom = ck ? ckPath : std::string();
    spec.requireFitsInMemory(sizesFrom);
    // Values, in flag terms, before any work.
    spec.validate(d.models, &prog);
    requireOneOf("--task", c.task, {"auto", "regression", "classification"});
    if (schnetProgram)
      requireOneOf("--target-scaling", c.targetScaling, {"atomref", "standard", "none"});
    else
      requireOneOf("--target-scaling", c.targetScaling, {"standard", "none"});
    if (c.targetScaling == "atomref" && !spec.isSchNet())
      throw UsageError("--target-scaling atomref applies to --model schnet (use standard or none)");
    requireOneOf("--split", c.split, {"auto", "random", "scaffold"});
    if (!c.splitCol.empty() && (c.split != "auto" || !c.splitFile.empty()))
      throw UsageError("--split-col and --split " + c.split + (c.splitFile.empty() ? "" : " / --split-file") +
                            " both choose the split; give one");
    if (!c.splitFile.empty() && c.split != "auto") throw UsageError("--split-file and --split " + c.split + " both choose the split; give one");
    PackingStrategy strategy = strategyFromFlag(c.strategy, spec.isGraphormer());
    OverSizeStrategy overSize = overSizeFromFlag(c.overSize);
    requireAtLeast("--batch-size", static_cast<double>(c.batchSize), 1);
    requireAtLeast("--limit", static_cast<double>(c.limit), -1);
    if (c.limit == 0) throw UsageError("--limit 0: no molecule to train on (-1 uses all)");
    requireAtLeast("--num-nodes", static_cast<double>(c.numNodes), 0);
    requireAtLeast("--num-edges", static_cast<double>(c.numEdges), 0);
    requireAtLeast("--num-graphs", static_cast<double>(c.numGraphs), 0);
    if (c.numGraphs == 1) throw UsageError("--num-graphs 1: a batch needs a slot for its padding graph (at least 2)");
    requireAtLeast("--pack-window", static_cast<double>(c.packWindow), 0);
    {
      FixedSizeOptions asked;
      asked.numNodes = c.numNodes;
      asked.numEdges = c.numEdges;
      asked.numGraphs = c.numGraphs;
      asked.maxNodesPerGraph = spec.isGraphormer() ? spec.maxNode : 0;
      spec.requireBatchFitsInMemory(asked, {"num-nodes", "num-edges", "num-graphs", "max-node"}, sizesFrom);
      // Every molecule of a batch has at least one atom and one bond; Graphormer gives each a block.
      const double perMolecule = spec.bytesPerNode() + spec.bytesPerEdge() +
                                 spec.bytesPerGraph(spec.isGraphormer() ? spec.maxNode : 1);
      requireFitsInMemory("batch-size", static_cast<double>(c.batchSize),
                          static_cast<double>(c.batchSize) * perMolecule, sizesFrom,
                          "a batch's inputs and activations through " + spec.describe());
    }
    requireAtLeast("--prefetch", static_cast<double>(c.prefetch), 0);
    if (!c.predict.empty()) checkWritable("--predict", c.predict);

    keepFreedMemoryInHeap();

    MoleculeDataOptions mo;
    mo.path = c.data.empty() ? shippedData(d.data) : c.data;
    if (!c.format.empty()) requireOneOf("--format", c.format, {"pcqm4mv2", "csv", "smi", "sdf", "xyz"});
    mo.format = c.format;
    mo.smilesColumn = c.smilesCol;
    mo.smilesColumnGiven = prog.given("smiles-col");
    mo.splitColumn = c.splitCol;
    mo.targetColumns = splitCommaList(c.targetCols);
    mo.limit = c.limit;
    mo.threads = numThreads();
    mo.split = c.split;
    mo.splitFile = c.splitFile;
    mo.seed = tf.seed;
    mo.quiet = tf.quiet;
    spec.requireFeatures(mo);
    if (!tf.quiet && !c.data.empty() && std::filesystem::path(mo.path).extension() != ".npz")
      std::cerr << prog.name() << ": reading " << mo.path << " (featurised once, then cached)\n";
    MoleculeData md = openMoleculeData(mo);
    if (md.rejected > 0 && !tf.quiet) {
      std::cerr << prog.name() << ": " << md.rejected << " molecule(s) of " << md.sourcePath << " rejected";
      for (size_t k = 0; k < std::min<size_t>(md.rejectedLines.size(), 5); ++k) std::cerr << "\n  " << md.rejectedLines[k];
      if (md.rejectedLines.size() > 5) std::cerr << "\n  ... (build_dataset inspect " << md.npzPath << " lists all)";
      std::cerr << "\n";
    }
    // The molecules as the model reads them (SchNet: the radius graph, computed once here).
    std::shared_ptr<const Dataset> all = spec.view(md.dataset);
    const int64_t tasks = md.dataset->numTargets();
    spec.tasks = tasks;

    // The task: from the checkpoint when continuing, else from the flag and the labels.
    MoleculeTask task;
    if (config.derived.contains("task")) {
      task = config.derived["task"] == "classification" ? MoleculeTask::Classification : MoleculeTask::Regression;
    } else {
      const std::string bad = firstNonBinary(md);
      if (c.task == "classification" && !bad.empty())
        throw UsageError("--task classification needs 0/1 labels, but " + bad +
                              " (use --task regression for continuous targets)");
      task = c.task == "classification" || (c.task == "auto" && bad.empty()) ? MoleculeTask::Classification
                                                                            : MoleculeTask::Regression;
    }
    const bool classification = task == MoleculeTask::Classification;
    config.derived["task"] = classification ? "classification" : "regression";
    config.derived["targets"] = md.targetNames;
    config.derived["featurisation"] = md.featurisation;
    // SchNet learns from every atom of an XYZ file, hydrogens included: SMILES given to `predict` later get
    // explicit hydrogens before their conformers are embedded (the XYZ reader itself ignores the option).
    auto endsWith = [](const std::string& t, const std::string& suffix) {
      return t.size() >= suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (spec.isSchNet() && (mo.format == "xyz" || (mo.format.empty() && (endsWith(md.sourcePath, ".xyz") ||
                                                                        endsWith(md.sourcePath, ".xyz.gz")))))
      config.derived["featurisation"]["explicit_hydrogens"] = true;
    TargetScaling scaling;
    if (config.derived.contains("target_scaling")) {
      scaling = readDerived("target_scaling", [](const nlohmann::json& j) { return TargetScaling::fromJson(j); });
    } else if (!classification && c.targetScaling == "standard") {
      scaling = TargetScaling::fit(*all, md.split.train, static_cast<int>(tasks));
    }
    config.derived["target_scaling"] = scaling.toJson();
    if (config.derived.contains("model_output")) {
      readDerived("model_output", [&](const nlohmann::json& j) { spec.outputFromJson(j); });
    } else if (!classification && c.targetScaling == "atomref") {
      fitAtomReferences(spec, *all, md.split.train);
    }
    config.derived["model_output"] = spec.outputJson();
    if (!c.predict.empty() && md.split.test.empty())
      throw UsageError("--predict writes the test molecules' predictions, but the " + md.split.kind +
                            " split has no test molecule");

    // Fixed sizes from the whole set, so validation and test batches share the training shapes.
    FixedSizeOptions fixed;
    if (config.derived.contains("fixed")) {
      fixed = fixedFromJson(config.derived["fixed"], ckPath, "fixed");
      spec.requireBatchFitsInMemory(fixed, {"derived.fixed.num_nodes", "derived.fixed.num_edges",
                                            "derived.fixed.num_graphs", "derived.fixed.max_nodes_per_graph"}, ckPath);
    } else {
      // Graphormer: sized from the molecules of at most --max-node atoms, the ones its blocks hold.
      std::shared_ptr<const Dataset> sized = all;
      if (spec.isGraphormer()) {
        std::vector<size_t> small;
        for (size_t i = 0; i < all->size(); ++i)
          if (all->numNodes(i) <= spec.maxNode) small.push_back(i);
        if (small.empty())
          throw UsageError("no molecule has at most --max-node " + std::to_string(spec.maxNode) + " atoms");
        sized = std::make_shared<Subset>(all, small);
      }
      fixed = strategy == PackingStrategy::PadToMax ? FixedSizeOptions::fromDataset(*sized, c.batchSize + 1)
                                                    : FixedSizeOptions::forPacking(*sized, c.batchSize);
      if (spec.isGraphormer()) fixed.maxNodesPerGraph = spec.maxNode;
      if (c.numGraphs > 0) fixed.numGraphs = c.numGraphs;
      if (c.numNodes > 0) fixed.numNodes = c.numNodes;
      if (c.numEdges > 0) fixed.numEdges = c.numEdges;
      try {
        fixed.validate();
      } catch (const std::exception& e) {
        throw UsageError("--num-nodes " + std::to_string(fixed.numNodes) + ", --num-edges " +
                              std::to_string(fixed.numEdges) + ", --num-graphs " + std::to_string(fixed.numGraphs) +
                              ": every graph slot of a batch needs at least one atom and one bond (raise --num-nodes "
                              "and --num-edges to at least --num-graphs, or lower --batch-size)");
      }
      spec.requireBatchFitsInMemory(fixed, {"num-nodes", "num-edges", "num-graphs", "max-node"}, sizesFrom);
    }
    config.derived["fixed"] = fixedToJson(fixed);
    // Molecules larger than a batch holds, named in the flags' terms before any training.
    {
      int64_t over = 0, worstNodes = 0, worstEdges = 0, worstLine = 0;
      for (size_t i = 0; i < static_cast<size_t>(md.size); ++i)
        if (!fixed.fitsGraph(all->numNodes(i), all->numEdges(i))) {
          ++over;
          if (all->numNodes(i) > worstNodes || all->numEdges(i) > worstEdges) {
            worstNodes = std::max(worstNodes, all->numNodes(i));
            worstEdges = std::max(worstEdges, all->numEdges(i));
            worstLine = md.dataset->sourceLine(i);
          }
        }
      if (over > 0 && overSize == OverSizeStrategy::Error) {
        const int64_t needNodes = worstNodes + fixed.numGraphs - 1, needEdges = worstEdges + fixed.numGraphs - 1;
        std::string raise;
        if (needNodes > fixed.numNodes) raise += "--num-nodes to at least " + std::to_string(needNodes);
        if (needEdges > fixed.numEdges)
          raise += (raise.empty() ? "" : " and ") + std::string("--num-edges to at least ") + std::to_string(needEdges);
        if (raise.empty() || (fixed.maxNodesPerGraph > 0 && worstNodes > fixed.maxNodesPerGraph))
          raise = spec.isGraphormer() ? "--max-node to at least " + std::to_string(worstNodes)
                                      : "--num-nodes / --num-edges (or lower --batch-size)";
        throw UsageError(std::to_string(over) + " molecule(s) are larger than a batch of --num-nodes " +
                              std::to_string(fixed.numNodes) + ", --num-edges " + std::to_string(fixed.numEdges) +
                              ", --num-graphs " + std::to_string(fixed.numGraphs) + " holds (e.g. " + md.sourcePath +
                              " line " + std::to_string(worstLine) + "); raise " + raise +
                              ", or pass --oversize skip (or trim)");
      }
      if (over > 0 && !tf.quiet)
        std::cerr << prog.name() << ": " << over << " molecule(s) larger than a batch holds"
                  << (spec.isGraphormer() ? " (more than --max-node " + std::to_string(spec.maxNode) + " atoms)" : "")
                  << ": --oversize " << c.overSize << " applies to them in training; evaluation predicts them all\n";
    }
    // Evaluation and --predict: the training shape, grown (node-pair blocks included) until every molecule fits,
    // so validation and test scores cover every molecule.
    FixedSizeOptions evalFixed = fixed;
    if (config.derived.contains("eval_fixed")) {
      evalFixed = fixedFromJson(config.derived["eval_fixed"], ckPath, "eval_fixed");
      spec.requireBatchFitsInMemory(evalFixed, {"derived.eval_fixed.num_nodes", "derived.eval_fixed.num_edges",
                                                "derived.eval_fixed.num_graphs", "derived.eval_fixed.max_nodes_per_graph"},
                                    ckPath);
    } else {
      int64_t maxNodes = 0, maxEdges = 0;
      for (size_t i = 0; i < all->size(); ++i) {
        maxNodes = std::max(maxNodes, all->numNodes(i));
        maxEdges = std::max(maxEdges, all->numEdges(i));
      }
      if (evalFixed.maxNodesPerGraph > 0) evalFixed.maxNodesPerGraph = std::max(evalFixed.maxNodesPerGraph, maxNodes);
      evalFixed.numNodes = std::max(evalFixed.numNodes, evalFixed.rowsNeeded(maxNodes, 1));
      evalFixed.numEdges = std::max(evalFixed.numEdges, evalFixed.rowsNeeded(maxEdges, 1));
      evalFixed.validate();
    }
    config.derived["eval_fixed"] = fixedToJson(evalFixed);

    auto subset = [&](const std::vector<int64_t>& v) {
      return std::make_shared<Subset>(all, std::vector<size_t>(v.begin(), v.end()));
    };
    auto train = subset(md.split.train);
    FixedSizeDataLoader::Options lo;
    lo.strategy = strategy;
    lo.overSize = overSize;
    lo.seed = tf.seed;
    lo.prefetch = static_cast<int>(c.prefetch);
    lo.packWindow = c.packWindow;
    lo.microBatchesPerRequest = df.microBatchesPerRequest();
    // Under mpirun: this rank's replicas' micro-batches only (every micro-batch of an epoch on exactly one rank).
    lo.shard = df.options.shard(/*training=*/true);
    FixedSizeDataLoader trainLoader(train, fixed, lo);

    nlohmann::json out;
    out["data"] = mo.path;
    out["graphs"] = md.size;
    out["rejected"] = md.rejected;
    out["split"] = md.split.toJson();
    out["train_graphs"] = md.split.train.size();
    out["valid_graphs"] = md.split.valid.size();
    out["test_graphs"] = md.split.test.size();
    out["targets"] = md.targetNames;
    out["strategy"] = packingStrategyName(strategy);
    out["num_nodes"] = fixed.numNodes;
    out["num_edges"] = fixed.numEdges;
    out["num_graphs"] = fixed.numGraphs;
    out["batch_size"] = c.batchSize;
    out["task"] = classification ? "classification" : "regression";
    out["target_scaling"] = scaling.toJson();
    out["threads"] = numThreads();

    trainLoader.startEpoch(0);
    PaddingReport report = trainLoader.report();
    nlohmann::json reportJson = report.toJson();  // items() must not outlive the json it iterates
    for (const auto& [k, v] : reportJson.items()) out[k] = v;
    if (c.paddingReportOnly) {
      // Collation of the whole set, timed on this thread (no prefetch): the loader's cost per epoch.
      FixedSizeDataLoader::Options so = lo;
      so.prefetch = 0;
      FixedSizeDataLoader once(all, fixed, so);
      Stopwatch sw;
      once.startEpoch(0);
      for (Batch b; once.next(b);) {
      }
      const double collateSeconds = sw.ms() / 1000;
      out["collate_seconds_full_set"] = collateSeconds;
      out["collate_graphs_per_s"] = static_cast<double>(once.report().realGraphs) / collateSeconds;
      if (tf.json)
        std::cout << out.dump() << std::endl;
      else
        std::cout << "train loader (" << c.strategy << ", " << fixed.toString() << "): " << report.toString() << "\n"
                  << "collation of all " << all->size() << " molecules: " << collateSeconds << " s\n";
      return 0;
    }

    std::unique_ptr<BlockModel> model = makeMoleculeModel(spec, tf.seed);
    std::unique_ptr<Optimizer> opt = tf.makeOptimizer({{model->parameters(), tf.weightDecay}});
    const std::string metricName = moleculeMetricName(task, tasks);
    Trainer trainer(prog, tf, *model, *opt, config, {metricName, classification}, "molecules");
    if (ck) trainer.resume(*ck, ckPath);
    if (!tf.quiet)
      std::cerr << prog.name() << ": " << md.size << " molecules (" << md.split.kind << " split "
                << md.split.train.size() << "/" << md.split.valid.size() << "/" << md.split.test.size() << "), "
                << (classification ? "classification" : "regression") << " of " << tasks << " target(s), "
                << spec.describe() << " (" << model->numParameters()
                << " parameters), batches of " << fixed.numNodes << " atoms, " << fixed.numEdges << " directed bonds, "
                << fixed.numGraphs << " graph slots, " << numThreads() << " thread(s)\n";

    trainer.logRunStart({{"data", mo.path}, {"split", md.split.toJson()}, {"molecules", md.size}});
    // Inference throughput over every evaluation pass (no tape, eval mode, the training batch shape).
    double inferSeconds = 0;
    int64_t inferMolecules = 0;
    auto evaluate = [&](const std::vector<int64_t>& positions) {
      Stopwatch sw;
      MoleculePredictions p = predictMolecules(*model, tasks, all, positions, evalFixed, scaling, task);
      inferSeconds += sw.ms() / 1000;
      inferMolecules += static_cast<int64_t>(p.positions.size());
      return scoreMolecules(p, task, md.targetNames, scaling);
    };
    int64_t steps = 0;
    // The device runs every training step: the model whole on this machine (cpu), or replicas, pipeline stages
    // and micro-batches on simulated IPUs (ipu). Compiled once for the training batch's fixed shapes.
    trainLoader.startEpoch(0);
    const Batch shapes = trainLoader.collateBatch(0);
    LossFn lossFn{[&](const Variable& pred, const Batch& b) {
                    return classification ? bceWithLogits(pred, b.y, b.yMask)
                                          : l1Loss(pred, scaling.standardize(b.y), b.yMask);
                  },
                  {}};
    std::unique_ptr<DeviceProgram> program =
        df.compile(prog, *model, lossFn, opt.get(), shapes, static_cast<double>(c.batchSize), tf.quiet);
    if (!df.trace.empty() || !df.traceSvg.empty()) program->enableTrace(df.traceRequests);
    if (!tf.quiet && df.simulated())
      std::cerr << prog.name() << ": " << df.options.describe(static_cast<int64_t>(program->stageNames().size()))
                << " on " << program->numIpus() << " simulated IPU(s); one weight update = " << c.batchSize
                << " graph slots x " << df.replicas << " replica(s) x " << df.gradAccum
                << " micro-batch(es), one host request = " << df.microBatchesPerRequest() << " micro-batches\n";
    if (!tf.quiet && isDistributed(prog.processes().get()))
      std::cerr << prog.name() << ": the replicas spread over " << prog.processes()->size() << " MPI processes ("
                << prog.processes()->localSize() << " on this host, " << numThreads() << " thread(s) each); this rank runs "
                << df.options.shard(true).describe() << "\n";
    Trainer::Hooks hooks;
    hooks.stepsPerEpoch = [&] {
      trainLoader.startEpoch(trainer.completedEpochs());
      return program->updatesFor(trainLoader.numBatches());
    };
    OpProfiler profiler;
    hooks.trainEpoch = [&](int64_t epoch, int64_t skip) {
      // The profile covers the training steps only, not the evaluations between epochs.
      std::optional<ObserverScope> profiling;
      if (c.profile) profiling.emplace(profiler);
      trainLoader.startEpoch(epoch);
      for (Batch b; trainLoader.nextRequest(b);) {
        if (skip > 0) {
          // Updates already trained before an interrupt (interrupts come between host requests).
          skip -= program->updatesFor(trainLoader.lastRequestMicroBatches());
          continue;
        }
        const bool more = trainer.step(*program, b, [&] {
          std::vector<int64_t> pos;
          for (int64_t g : b.graphIndex) pos.push_back(md.split.train[static_cast<size_t>(g)]);
          return describeMolecules(md, pos);
        });
        steps += trainer.lastRun().updates;
        if (!more) break;  // --time-budget spent
      }
    };
    hooks.validate = [&] { return evaluate(md.split.valid); };
    if (!md.split.test.empty()) hooks.test = [&] { return evaluate(md.split.test); };

    trainer.run(hooks);
    if (c.profile && prog.primary()) {
      std::cerr << "per-op profile of " << steps << " training steps (forward and backward; optimizer not included)\n";
      profiler.print(std::cerr);
      out["profile"] = profiler.json();
      out["profile_steps"] = steps;
    }
    if (!c.predict.empty()) {
      trainer.withBestWeights([&] {
        MoleculePredictions p = predictMolecules(*model, tasks, all, md.split.test, evalFixed, scaling, task);
        if (prog.primary()) writePredictionsCsv(c.predict, *md.dataset, p, md.targetNames);
        if (!tf.quiet)
          std::cerr << prog.name() << ": wrote " << p.positions.size() << " test predictions to " << c.predict << "\n";
      });
      out["predictions"] = c.predict;
    }

    nlohmann::json sum = trainer.summary();
    for (const auto& [k, v] : sum.items()) out[k] = v;
    out["model"] = spec.model;
    if (spec.isGraphormer()) {
      const auto& go = static_cast<const Graphormer&>(*model).options();
      out["layers"] = go.layers;
      out["hidden"] = go.hidden;
      out["max_node"] = spec.maxNode;
      out["eval_max_node"] = evalFixed.maxNodesPerGraph;
    } else {
      out["layers"] = spec.layers;
      out["hidden"] = spec.hidden;
    }
    out["parameters"] = model->numParameters();
    // Names kept from earlier versions of this program's JSON.
    out["valid_metric_name"] = metricName;
    out["valid_metric"] = sum["valid_" + metricName];
    if (sum.contains("test_" + metricName)) out["test_metric"] = sum["test_" + metricName];
    out["real_graphs_per_s"] = sum["train_samples_per_s"];
    out["train_graphs_per_s"] = sum["train_samples_per_s"];
    out["infer_graphs_per_s"] = inferSeconds > 0 ? static_cast<double>(inferMolecules) / inferSeconds : 0.0;
    out["train_molecules_per_s"] = out["train_graphs_per_s"];
    out["infer_molecules_per_s"] = out["infer_graphs_per_s"];
    out["seconds"] = sum["train_seconds"].get<double>() + sum["eval_seconds"].get<double>();
    out["param_l2"] = paramL2(*model);
    out["param_checksum"] = paramChecksum(*model);
    const nlohmann::json deviceJson = df.toJson(*program);  // items() must not outlive the json it iterates
    for (const auto& [k, v] : deviceJson.items()) out[k] = v;
    const nlohmann::json planJson = df.planJson(*program);
    for (const auto& [k, v] : planJson.items()) out[k] = v;
    out["samples_per_s"] = sum["train_samples_per_s"];
    out["padded_micro_batches"] = trainer.paddedMicroBatches();
    out["dropped_micro_batches"] = trainer.droppedMicroBatches();
    if (!tf.quiet && (trainer.droppedMicroBatches() > 0 || trainer.paddedMicroBatches() > 0))
      std::cerr << prog.name() << ": the epochs' last host requests were short: "
                << (trainer.droppedMicroBatches() > 0
                        ? std::to_string(trainer.droppedMicroBatches()) + " micro-batch(es) dropped (--partial-request drop)"
                        : std::to_string(trainer.paddedMicroBatches()) +
                              " weight-0 micro-batch(es) padded in (--partial-request pad; they change nothing)")
                << "\n";
    df.writeTraces(*program, prog.name() + " " + spec.model);
    if (df.simulated() && !tf.quiet) std::cerr << "stages (per micro-batch):\n" << program->stageTable();
    if (df.simulated()) {
      nlohmann::json st = nlohmann::json::array();
      for (const auto& r : program->record().stages)
        st.push_back({{"blocks", r.name}, {"parameters", r.parameters}, {"forward_ops", r.forwardOps},
                      {"backward_ops", r.backwardOps}, {"flops_per_micro_batch", r.forwardFlops + r.backwardFlops},
                      {"saved_bytes_per_micro_batch", r.savedBytes}, {"max_stashed", r.maxStashed}});
      out["stage_table"] = st;
    }
    out["peak_rss_mb"] = peakRssMb();
    if (tf.json) {
      std::cout << out.dump() << std::endl;
    } else {
      auto shown = [](const nlohmann::json& v) {
        if (!v.is_number() || !std::isfinite(v.get<double>())) return std::string("n/a (no labels)");
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.5g", v.get<double>());
        return std::string(buf);
      };
      std::cout << "best epoch " << trainer.bestEpoch() << " of " << trainer.completedEpochs() << ": valid "
                << metricName << " " << shown(out["valid_metric"]);
      if (out.contains("test_metric")) std::cout << ", test " << metricName << " " << shown(out["test_metric"]);
      std::cout << "\n";
      const char* perKey = classification ? "rocauc_per_target" : "mae_per_target";
      if (tasks > 1 && sum["test_details"].is_object() && sum["test_details"].contains(perKey))
        for (const auto& [name, v] : sum["test_details"][perKey].items())
          std::cout << "  test " << (classification ? "ROC-AUC " : "MAE ") << name << " " << shown(v) << "\n";
      std::printf("%.0f molecules/s in training, param_l2 %.6f\n", sum["train_samples_per_s"].get<double>(),
                  out["param_l2"].get<double>());
    }
    return 0;
  });
}

}  // namespace gnn::app
