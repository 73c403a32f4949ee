// molecule_property: graph-level property prediction on molecules with fixed-size batches. Trains GIN or GCN
// (OGB atom/bond encoders, global pooling, linear head) with a masked loss, on the PCQM4Mv2-style set by
// default (HOMO-LUMO gap regression, MAE) or a MoleculeNet CSV (classification with ROC-AUC when every label
// is 0/1). Batches come from FixedSizeDataLoader: `pad` (PadToMax), `stream` (StreamPack), `plan` (PlannedPack).
//
//   molecule_property                                        # GIN 5x300, PlannedPack, 1 epoch, batch 128
//   molecule_property --strategy pad --json                  # same real graphs per step, PadToMax
//   molecule_property --data examples/data/moleculenet/BBBP.csv.gz --smiles-col smiles --target-cols p_np
//   molecule_property --padding-report-only --strategy stream
//   molecule_property --epochs 2 --save run.ckpt && molecule_property --epochs 0 --load run.ckpt
#include <malloc.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "examples/MoleculeData.h"
#include "gnn/Profiler.h"
#include "gnn/Checkpoint.h"
#include "gnn/ExecutionContext.h"
#include "gnn/Metrics.h"
#include "gnn/Ops.h"
#include "gnn/Optimizer.h"
#include "gnn/Parallel.h"
#include "loaders/FixedSizeDataLoader.h"
#include "models/GCN.h"
#include "models/GIN.h"

namespace po = boost::program_options;
using namespace gnn;
using Clock = std::chrono::steady_clock;

namespace {

struct Config {
  std::string data, smilesCol = "smiles", targetCols, model = "gin", strategy = "plan", pool = "mean",
                    task = "auto", overSize = "error", save, load;
  int64_t layers = 5, hidden = 300, numNodes = 0, numEdges = 0, numGraphs = 0, batchSize = 128, epochs = 1,
          limit = -1, prefetch = 2, packWindow = 0;
  double lr = 1e-3, dropout = 0.0;
  uint64_t seed = 0;
  int threads = 0;
  bool json = false, paddingReportOnly = false, profile = false;
};

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::vector<std::string> splitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Classification when every present label is 0 or 1 (MoleculeNet's BBBP, HIV), else regression.
bool looksBinary(const Dataset& ds, const std::vector<int64_t>& idx) {
  for (int64_t i : idx) {
    Graph g = ds.get(static_cast<size_t>(i));
    for (int64_t k = 0; k < g.y.numel(); ++k) {
      if (g.yMask.defined() && g.yMask.at(k) == 0) continue;
      double v = g.y.at(k);
      if (v != 0.0 && v != 1.0) return false;
    }
  }
  return true;
}

double paramL2(const Module& m) {
  double s = 0;
  for (const Variable& p : m.parameters()) {
    Tensor t = p.value().to(DType::F64);
    s += t.flat<double>().square().sum();
  }
  return std::sqrt(s);
}

struct EvalResult {
  double metric = NAN, loss = NAN;
  int64_t graphs = 0;
};

// Metric over the real graphs of every batch of one pass: MAE (regression) or ROC-AUC (classification).
EvalResult evaluate(GraphModel& model, FixedSizeDataLoader& loader, bool classification, int64_t tasks) {
  NoGradGuard noGrad;
  model.eval();
  loader.startEpoch(0);
  std::vector<float> pred, target;
  std::vector<uint8_t> mask;
  for (Batch b; loader.next(b);) {
    Tensor out = model.forward(b).value();
    int64_t n = b.numRealGraphs * tasks;
    for (int64_t i = 0; i < n; ++i) {
      pred.push_back(static_cast<float>(out.at(i)));
      target.push_back(static_cast<float>(b.y.at(i)));
      mask.push_back(static_cast<uint8_t>(b.yMask.at(i)));
    }
  }
  model.train();
  EvalResult r;
  int64_t rows = static_cast<int64_t>(pred.size()) / tasks;
  r.graphs = rows;
  if (rows == 0) return r;
  Tensor p = Tensor::fromVector(pred, {rows, tasks}), t = Tensor::fromVector(target, {rows, tasks}),
         m = Tensor::fromVector(mask, {rows, tasks});
  r.metric = classification ? rocAuc(p, t, m) : meanAbsoluteError(p, t, m);
  r.loss = classification ? bceWithLogits(Variable(p), t, m).value().item() : r.metric;
  return r;
}

void saveCheckpoint(const Config& c, const GraphModel& model, const Optimizer& opt, int64_t epoch) {
  Checkpoint ck;
  ck.addModule("model", model);
  ck.addOptimizer(opt);
  ck.meta["epoch"] = epoch;
  ck.meta["model"] = c.model;
  ck.meta["layers"] = c.layers;
  ck.meta["hidden"] = c.hidden;
  ck.save(c.save);
}

// "<input> lines 12, 57, ... (and N more)" for the molecules of a training batch (graphIndex: training-split
// positions).
std::string describeMolecules(const NpzDataset& ds, const std::string& input, const std::vector<int64_t>& train,
                              const std::vector<int64_t>& graphIndex) {
  std::string s = input + " lines";
  const size_t shown = std::min<size_t>(graphIndex.size(), 8);
  for (size_t k = 0; k < shown; ++k)
    s += (k ? ", " : " ") + std::to_string(ds.sourceLine(static_cast<size_t>(train[graphIndex[k]])));
  if (graphIndex.size() > shown) s += " (and " + std::to_string(graphIndex.size() - shown) + " more)";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  po::options_description opts(
      "molecule_property [options]\nGraph-level property prediction (GIN/GCN) with fixed-size batches");
  opts.add_options()("help,h", "this help")(
      "data", po::value(&c.data), "PCQM4Mv2 layout (dir), MoleculeNet CSV or built .npz (default: the PCQM4Mv2-style set)")(
      "smiles-col", po::value(&c.smilesCol)->default_value("smiles"), "CSV: SMILES column")(
      "target-cols", po::value(&c.targetCols), "CSV: comma-separated target columns")(
      "model", po::value(&c.model)->default_value("gin"), "gin | gcn")(
      "layers", po::value(&c.layers)->default_value(5), "message-passing layers")(
      "hidden", po::value(&c.hidden)->default_value(300), "hidden width")(
      "pool", po::value(&c.pool)->default_value("mean"), "global pooling: sum | mean | max")(
      "dropout", po::value(&c.dropout)->default_value(0.0), "dropout after each layer")(
      "task", po::value(&c.task)->default_value("auto"), "regression | classification | auto (0/1 labels)")(
      "strategy", po::value(&c.strategy)->default_value("plan"), "pad | stream | plan")(
      "batch-size", po::value(&c.batchSize)->default_value(128),
      "real graphs per batch (pad), cap on real graphs (stream, plan); the padding graph comes on top")(
      "num-nodes", po::value(&c.numNodes)->default_value(0), "fixed nodes per batch (0: from the data)")(
      "num-edges", po::value(&c.numEdges)->default_value(0), "fixed edges per batch (0: from the data)")(
      "num-graphs", po::value(&c.numGraphs)->default_value(0), "fixed graphs per batch incl. padding (0: batch-size + 1)")(
      "oversize", po::value(&c.overSize)->default_value("error"), "error | skip | trim_nodes | trim_edges | trim")(
      "pack-window", po::value(&c.packWindow)->default_value(0), "PlannedPack window in graphs (0: whole epoch)")(
      "prefetch", po::value(&c.prefetch)->default_value(2), "batches prepared ahead on a background thread")(
      "epochs", po::value(&c.epochs)->default_value(1), "training epochs (0: evaluate only)")(
      "lr", po::value(&c.lr)->default_value(1e-3), "Adam learning rate")(
      "seed", po::value(&c.seed)->default_value(0), "seed for initialisation, shuffling and packing")(
      "threads", po::value(&c.threads)->default_value(0), "threads for ops (0: all cores)")(
      "limit", po::value(&c.limit)->default_value(-1), "use the first N molecules only")(
      "save", po::value(&c.save), "write a checkpoint (model + optimizer) at the end")(
      "load", po::value(&c.load), "start from a checkpoint")(
      "json", po::bool_switch(&c.json), "print one JSON object at the end")(
      "profile", po::bool_switch(&c.profile),
      "per-op table of the training steps on stderr (op, pass, calls, ms, GFLOP, GFLOP/s, share); rows under "
      "\"profile\" with --json")(
      "padding-report-only", po::bool_switch(&c.paddingReportOnly), "one pass of the loader, no training");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "molecule_property: " << e.what() << "\n" << opts << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }

  // Every step allocates the same activation sizes; keep freed blocks in the heap instead of returning them to
  // the kernel, which would zero fresh pages on every step (~12% of a step in perf on a 2-core machine).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  try {
    if (c.threads > 0) setNumThreads(c.threads);
    if (c.data.empty()) c.data = defaultMoleculeDataPath(GNN_EXAMPLES_DATA);
    PackingStrategy strategy = parsePackingStrategy(c.strategy);
    GNN_CHECK_ARG(c.batchSize >= 1, "--batch-size must be >= 1");

    MoleculeDataOptions mo;
    mo.path = c.data;
    mo.smilesColumn = c.smilesCol;
    mo.targetColumns = splitComma(c.targetCols);
    mo.limit = c.limit;
    mo.threads = c.threads > 0 ? c.threads : 2;
    MoleculeData md = openMoleculeData(mo);
    if (md.rejected > 0) {
      std::cerr << "molecule_property: " << md.rejected << " molecule(s) of " << c.data << " rejected";
      for (size_t k = 0; k < std::min<size_t>(md.rejectedLines.size(), 5); ++k) std::cerr << "\n  " << md.rejectedLines[k];
      if (md.rejectedLines.size() > 5) std::cerr << "\n  ... (build_dataset inspect " << md.npzPath << " lists all)";
      std::cerr << "\n";
    }
    std::shared_ptr<const Dataset> all = md.dataset;
    auto train = std::make_shared<Subset>(all, std::vector<size_t>(md.train.begin(), md.train.end()));
    auto valid = std::make_shared<Subset>(all, std::vector<size_t>(md.valid.begin(), md.valid.end()));
    int64_t tasks = std::max(md.dataset->numTargets(), 1);
    bool classification = c.task == "classification" || (c.task == "auto" && looksBinary(*all, md.train));

    // Fixed sizes from the whole set, so validation batches share the training shapes.
    FixedSizeOptions fixed = strategy == PackingStrategy::PadToMax ? FixedSizeOptions::fromDataset(*all, c.batchSize + 1)
                                                                   : FixedSizeOptions::forPacking(*all, c.batchSize);
    if (c.numGraphs > 0) fixed.numGraphs = c.numGraphs;
    if (c.numNodes > 0) fixed.numNodes = c.numNodes;
    if (c.numEdges > 0) fixed.numEdges = c.numEdges;
    FixedSizeDataLoader::Options lo;
    lo.strategy = strategy;
    lo.overSize = parseOverSizeStrategy(c.overSize);
    lo.seed = c.seed;
    lo.prefetch = c.prefetch;
    lo.packWindow = c.packWindow;
    FixedSizeDataLoader trainLoader(train, fixed, lo);
    FixedSizeDataLoader::Options vo = lo;
    vo.shuffle = false;
    FixedSizeDataLoader validLoader(valid, fixed, vo);

    nlohmann::json out;
    out["data"] = c.data;
    out["graphs"] = all->size();
    out["rejected"] = md.rejected;
    out["train_graphs"] = train->size();
    out["valid_graphs"] = valid->size();
    out["strategy"] = packingStrategyName(strategy);
    out["num_nodes"] = fixed.numNodes;
    out["num_edges"] = fixed.numEdges;
    out["num_graphs"] = fixed.numGraphs;
    out["batch_size"] = c.batchSize;
    out["task"] = classification ? "classification" : "regression";
    out["threads"] = numThreads();

    // Collation of the whole set, timed on this thread (no prefetch): the loader's cost per epoch.
    double collateSeconds = 0;
    PaddingReport fullReport;
    {
      FixedSizeDataLoader::Options so = lo;
      so.prefetch = 0;
      FixedSizeDataLoader once(all, fixed, so);
      auto t0 = Clock::now();
      once.startEpoch(0);
      for (Batch b; once.next(b);) {
      }
      collateSeconds = secondsSince(t0);
      fullReport = once.report();
    }
    out["collate_seconds_full_set"] = collateSeconds;
    out["collate_graphs_per_s"] = static_cast<double>(fullReport.realGraphs) / collateSeconds;

    trainLoader.startEpoch(0);
    PaddingReport report = trainLoader.report();
    nlohmann::json reportJson = report.toJson();  // items() must not outlive the json it iterates
    for (const auto& [k, v] : reportJson.items()) out[k] = v;
    if (c.paddingReportOnly) {
      if (c.json)
        std::cout << out.dump() << std::endl;
      else
        std::cout << "train loader (" << c.strategy << ", " << fixed.toString() << "): " << report.toString() << "\n"
                  << "collation of all " << all->size() << " graphs: " << collateSeconds << " s\n";
      return 0;
    }

    Generator gen(c.seed);
    GraphModelOptions mopt;
    mopt.layers = c.layers;
    mopt.hidden = c.hidden;
    mopt.tasks = tasks;
    mopt.dropout = c.dropout;
    mopt.pool = parsePoolKind(c.pool);
    std::unique_ptr<GraphModel> model;
    if (c.model == "gin")
      model = std::make_unique<GIN>(mopt, gen);
    else if (c.model == "gcn")
      model = std::make_unique<GCN>(mopt, gen);
    else
      invalidArgument("unknown --model '", c.model, "': use gin or gcn");
    Adam opt({{model->parameters(), 0.0}}, c.lr);
    int64_t startEpoch = 0;
    if (!c.load.empty()) {
      Checkpoint ck = Checkpoint::load(c.load);
      ck.loadModule("model", *model);
      if (c.epochs > 0) ck.loadOptimizer(opt);
      startEpoch = ck.meta.value("epoch", int64_t{0});
    }
    out["model"] = c.model;
    out["layers"] = c.layers;
    out["hidden"] = c.hidden;
    out["parameters"] = model->numParameters();

    double trainSeconds = 0, waitSeconds = 0, finalLoss = NAN;
    int64_t realGraphs = 0, steps = 0;
    std::vector<double> epochSeconds;
    model->train();
    OpProfiler profiler;
    std::optional<ObserverScope> profiling;
    if (c.profile) profiling.emplace(profiler);
    for (int64_t e = 0; e < c.epochs; ++e) {
      int64_t epoch = startEpoch + e;
      auto t0 = Clock::now();
      trainLoader.startEpoch(epoch);
      double lossSum = 0;
      int64_t lossGraphs = 0;
      for (;;) {
        Batch b;
        auto w0 = Clock::now();
        bool more = trainLoader.next(b);
        waitSeconds += secondsSince(w0);
        if (!more) break;
        opt.zeroGrad();
        // Dropout masks come from (seed, optimizer step, micro-batch); the step count is in the checkpoint, so
        // a resumed run draws the masks an uninterrupted one would.
        ExecutionContext::current().setRandomKey({c.seed, static_cast<uint64_t>(opt.stepCount()), 0});
        Variable pred = model->forward(b);
        Variable loss = classification ? bceWithLogits(pred, b.y, b.yMask) : l1Loss(pred, b.y, b.yMask);
        if (!std::isfinite(loss.value().item())) {
          // Stop before the bad step reaches the weights; keep the last good state when asked to save.
          std::string saved = "; the model was not saved (add --save FILE to keep the last good state)";
          if (!c.save.empty()) {
            saveCheckpoint(c, *model, opt, epoch);
            saved = "; the last good state (before this step) is saved in " + c.save;
          }
          throw std::runtime_error("training loss became " + std::to_string(loss.value().item()) + " at epoch " +
                                   std::to_string(epoch) + " (training step " + std::to_string(steps + 1) +
                                   " of the run), on a batch of " +
                                   std::to_string(b.numRealGraphs) + " molecules from " +
                                   describeMolecules(*md.dataset, md.sourcePath, md.train, b.graphIndex) +
                                   " (check their targets, or lower --lr)" + saved);
        }
        loss.backward();
        opt.step();
        lossSum += loss.value().item() * static_cast<double>(b.numRealGraphs);
        lossGraphs += b.numRealGraphs;
        realGraphs += b.numRealGraphs;
        ++steps;
      }
      double sec = secondsSince(t0);
      epochSeconds.push_back(sec);
      trainSeconds += sec;
      finalLoss = lossGraphs ? lossSum / static_cast<double>(lossGraphs) : NAN;
      if (!c.json)
        std::printf("epoch %lld  loss %.5f  %.1f s  %.0f real graphs/s\n", static_cast<long long>(epoch), finalLoss, sec,
                    static_cast<double>(lossGraphs) / sec);
    }
    profiling.reset();
    if (c.profile) {
      std::cerr << "per-op profile of " << steps << " training steps (forward and backward; optimizer not included)\n";
      profiler.print(std::cerr);
      out["profile"] = profiler.json();
      out["profile_steps"] = steps;
    }
    EvalResult ev = evaluate(*model, validLoader, classification, tasks);
    if (c.epochs == 0) finalLoss = ev.loss;

    if (!c.save.empty()) saveCheckpoint(c, *model, opt, startEpoch + c.epochs);
    out["epochs"] = c.epochs;
    out["steps"] = steps;
    out["train_seconds"] = trainSeconds;
    out["epoch_seconds"] = epochSeconds;
    out["loader_wait_seconds"] = waitSeconds;
    out["real_graphs_per_step"] = steps ? static_cast<double>(realGraphs) / static_cast<double>(steps) : 0.0;
    out["real_graphs_per_s"] = trainSeconds > 0 ? static_cast<double>(realGraphs) / trainSeconds : 0.0;
    if (!epochSeconds.empty()) out["collate_share_of_epoch"] = collateSeconds / epochSeconds.back();
    out["valid_metric_name"] = classification ? "rocauc" : "mae";
    out["valid_metric"] = ev.metric;
    out["final_loss"] = finalLoss;
    out["param_l2"] = paramL2(*model);
    if (c.json)
      std::cout << out.dump() << std::endl;
    else
      std::printf("valid %s %.5f, %.0f real graphs/s, node efficiency %.2f%%\n", classification ? "ROC-AUC" : "MAE",
                  ev.metric, out["real_graphs_per_s"].get<double>(), 100 * report.nodeEfficiency());
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "molecule_property: " << e.what() << "\n";
    return 1;
  }
}
