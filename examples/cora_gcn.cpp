// cora_gcn: semi-supervised node classification with a two-layer GCN (Kipf & Welling, ICLR 2017) on a
// dataset in OGB's node-property raw layout (default: the shipped Cora with the Planetoid public split).
//
//   cora_gcn                                  # Cora, paper settings, one run
//   cora_gcn --runs 10 --json                 # mean/std over seeds 0..9, one JSON object on stdout
//   cora_gcn --data examples/data/citeseer
//   cora_gcn --epochs 100 --save run.ckpt && cora_gcn --epochs 200 --load run.ckpt   # resume
//   cora_gcn --loader cluster --clusters 16 --clusters-per-batch 4   # Cluster-GCN, fixed-size batches
#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <numeric>

#include "data/GzLineReader.h"
#include "data/OgbNodeDataset.h"
#include "gnn/Profiler.h"
#include "gnn/Checkpoint.h"
#include "gnn/ExecutionContext.h"
#include "gnn/Ops.h"
#include "gnn/Optimizer.h"
#include "gnn/Parallel.h"
#include "gnn/SystemInfo.h"
#include "loaders/ClusterLoader.h"
#include "models/NodeGCN.h"

namespace po = boost::program_options;
using namespace gnn;

namespace {

struct Config {
  std::string data;
  int epochs = 200, hidden = 16, runs = 1, threads = 0;
  double lr = 0.01, weightDecay = 5e-4, dropout = 0.5;
  uint64_t seed = 0;
  std::string save, load;
  bool json = false, quiet = false, profile = false;
  std::string loader = "full";  // full | cluster
  int clusters = 16, clustersPerBatch = 4;
};

struct RunResult {
  double testAcc = 0, valAcc = 0, finalTestAcc = 0, finalLoss = 0;
  int bestEpoch = 0;
  std::vector<double> epochMs, inferMs;
  uint64_t lossChecksum = 1469598103934665603ULL, predChecksum = 1469598103934665603ULL;
};

void fnv(uint64_t& h, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ULL;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Accuracy of argmax(logits) over the nodes in idx; also returns predictions.
double accuracy(const Tensor& logits, const Tensor& y, const std::vector<int64_t>& idx, std::vector<int64_t>* pred) {
  auto l = logits.matrix<float>();
  const int64_t* yl = y.data<int64_t>();
  int64_t correct = 0;
  for (int64_t i : idx) {
    Eigen::Index arg;
    l.row(i).maxCoeff(&arg);
    correct += arg == yl[i];
  }
  if (pred) {
    pred->resize(static_cast<size_t>(l.rows()));
    for (int64_t i = 0; i < l.rows(); ++i) {
      Eigen::Index arg;
      l.row(i).maxCoeff(&arg);
      (*pred)[i] = arg;
    }
  }
  return idx.empty() ? 0 : static_cast<double>(correct) / static_cast<double>(idx.size());
}

RunResult trainOnce(const Config& cfg, const OgbNodeDataset& ds, const SparseMatrix& features, uint64_t seed,
                    const std::shared_ptr<const ClusterData>& clusters) {
  Generator initGen(seed);
  NodeGCNOptions mo;
  mo.dropout = cfg.dropout;
  // Cluster-GCN: every step sees another subgraph, so the normalised adjacency cannot be cached.
  mo.cached = clusters == nullptr;
  std::unique_ptr<ClusterLoader> loader;
  if (clusters) {
    ClusterLoader::Options lo;
    lo.clustersPerBatch = cfg.clustersPerBatch;
    lo.seed = seed;
    loader = std::make_unique<ClusterLoader>(clusters, clusters->worstCaseOptions(cfg.clustersPerBatch), lo);
  }
  NodeGCN net(ds.graph.x.dim(1), cfg.hidden, ds.numClasses, initGen, mo);
  // The paper's L2 regularisation applies to the first layer only (Kipf & Welling 2017, section 5.2).
  Adam opt({{net.conv1().parameters(), cfg.weightDecay}, {net.conv2().parameters(), 0.0}}, cfg.lr);

  RunResult r;
  int startEpoch = 0;
  double bestVal = -1;
  if (!cfg.load.empty()) {
    Checkpoint ck = Checkpoint::load(cfg.load);
    ck.loadModule("model", net);
    ck.loadOptimizer(opt);
    const auto& m = ck.meta;
    if (m.value("hidden", -1) != cfg.hidden || m.value("num_features", int64_t{-1}) != ds.graph.x.dim(1))
      throw std::runtime_error(cfg.load + ": checkpoint was made for another model or dataset");
    startEpoch = m.at("epoch").get<int>();
    bestVal = m.at("best_val_acc").get<double>();
    r.testAcc = m.at("test_acc_at_best_val").get<double>();
    r.bestEpoch = m.at("best_epoch").get<int>();
    r.lossChecksum = m.at("loss_checksum").get<uint64_t>();
    if (!cfg.quiet) std::fprintf(stderr, "resumed from %s at epoch %d\n", cfg.load.c_str(), startEpoch);
  }

  const Tensor& ei = ds.graph.edgeIndex;
  const Tensor& y = ds.graph.y;
  // Dropout masks come from (seed, optimizer step, micro-batch): the optimizer's step count is in the
  // checkpoint, so a resumed run draws the masks an uninterrupted one would.
  ExecutionContext& ctx = ExecutionContext::current();
  for (int epoch = startEpoch; epoch < cfg.epochs; ++epoch) {
    Stopwatch sw;
    net.train();
    double lossValue = 0;
    if (loader) {
      // One step per fixed-size cluster batch; batches without a labelled node give no gradient.
      loader->startEpoch(epoch);
      int steps = 0;
      for (Batch b; loader->next(b);) {
        if (b.trainMask.flat<uint8_t>().maxCoeff() == 0) continue;
        ctx.setRandomKey({seed, static_cast<uint64_t>(opt.stepCount()), 0});
        Variable logits = net.forward(b);
        Variable loss = crossEntropy(logits, b.y, b.trainMask);
        opt.zeroGrad();
        loss.backward();
        opt.step();
        lossValue += loss.value().item();
        ++steps;
      }
      lossValue /= std::max(steps, 1);
    } else {
      ctx.setRandomKey({seed, static_cast<uint64_t>(opt.stepCount()), 0});
      Variable logits = net.forward(features, ei);
      Variable loss = crossEntropy(logits, y, ds.graph.trainMask);
      opt.zeroGrad();
      loss.backward();
      opt.step();
      lossValue = loss.value().item();
    }
    r.epochMs.push_back(sw.ms());
    if (!std::isfinite(lossValue))
      throw std::runtime_error("training loss became " + std::to_string(lossValue) + " at epoch " +
                               std::to_string(epoch + 1) + " (try a lower --lr)");
    fnv(r.lossChecksum, &lossValue, sizeof lossValue);
    r.finalLoss = lossValue;

    sw.reset();
    net.eval();
    Tensor out;
    {
      NoGradGuard ng;
      out = net.forward(features, ei).value();
    }
    r.inferMs.push_back(sw.ms());
    double trainAcc = accuracy(out, y, ds.trainIdx, nullptr);
    double valAcc = accuracy(out, y, ds.validIdx, nullptr);
    double testAcc = accuracy(out, y, ds.testIdx, nullptr);
    // Model selection as in PyG's GCN example: report test accuracy at the best validation accuracy.
    if (valAcc > bestVal) {
      bestVal = valAcc;
      r.testAcc = testAcc;
      r.bestEpoch = epoch + 1;
    }
    r.finalTestAcc = testAcc;
    r.valAcc = valAcc;
    if (!cfg.quiet)
      std::fprintf(stderr, "epoch %3d  loss %.4f  train %.4f  val %.4f  %.2f ms\n", epoch + 1, lossValue, trainAcc,
                   valAcc, r.epochMs.back());
  }
  {
    NoGradGuard ng;
    net.eval();
    std::vector<int64_t> pred;
    Tensor out = net.forward(features, ei).value();
    accuracy(out, y, ds.testIdx, &pred);
    fnv(r.predChecksum, pred.data(), pred.size() * sizeof(int64_t));
    if (startEpoch >= cfg.epochs) {
      r.valAcc = accuracy(out, y, ds.validIdx, nullptr);
      r.finalTestAcc = accuracy(out, y, ds.testIdx, nullptr);
    }
  }
  if (!cfg.save.empty()) {
    Checkpoint ck;
    ck.addModule("model", net);
    ck.addOptimizer(opt);
    ck.meta = {{"format", "cora_gcn"},
               {"epoch", cfg.epochs},
               {"hidden", cfg.hidden},
               {"num_features", ds.graph.x.dim(1)},
               {"num_classes", ds.numClasses},
               {"dataset", ds.name},
               {"best_val_acc", bestVal},
               {"best_epoch", r.bestEpoch},
               {"test_acc_at_best_val", r.testAcc},
               {"loss_checksum", r.lossChecksum}};
    ck.save(cfg.save);
    if (!cfg.quiet) std::fprintf(stderr, "saved %s\n", cfg.save.c_str());
  }
  return r;
}

std::string hex(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  std::string defaultData = (std::filesystem::path(GNN_EXAMPLES_DATA) / "cora").string();
  po::options_description desc(
      "cora_gcn: two-layer GCN (Kipf & Welling 2017) for node classification on an OGB-raw-format dataset\n"
      "Options");
  desc.add_options()("help,h", "show this help")(
      "data", po::value(&cfg.data)->default_value(defaultData), "dataset directory (OGB node-property raw layout)")(
      "epochs", po::value(&cfg.epochs)->default_value(200), "training epochs (full batch)")(
      "hidden", po::value(&cfg.hidden)->default_value(16), "hidden channels")(
      "lr", po::value(&cfg.lr)->default_value(0.01), "Adam learning rate")(
      "weight-decay", po::value(&cfg.weightDecay)->default_value(5e-4), "L2 weight decay on the first layer")(
      "dropout", po::value(&cfg.dropout)->default_value(0.5), "dropout probability (input and hidden)")(
      "seed", po::value(&cfg.seed)->default_value(0), "random seed of the first run")(
      "runs", po::value(&cfg.runs)->default_value(1), "independent runs with seeds seed..seed+runs-1")(
      "threads", po::value(&cfg.threads)->default_value(0), "threads (0 = all cores)")(
      "save", po::value(&cfg.save), "write a checkpoint (model + optimizer, whose step count keys dropout) at the end")(
      "load", po::value(&cfg.load), "resume from a checkpoint and train on to --epochs")(
      "json", po::bool_switch(&cfg.json), "print one JSON summary object on stdout")(
      "loader", po::value(&cfg.loader)->default_value("full"), "full (one full-graph step per epoch) | cluster")(
      "clusters", po::value(&cfg.clusters)->default_value(16), "--loader cluster: METIS clusters")(
      "clusters-per-batch", po::value(&cfg.clustersPerBatch)->default_value(4),
      "--loader cluster: clusters merged per fixed-size batch")(
      "quiet,q", po::bool_switch(&cfg.quiet), "no per-epoch progress on stderr")(
      "profile", po::bool_switch(&cfg.profile),
      "per-op table of all runs on stderr (op, pass, calls, ms, GFLOP, GFLOP/s, share); rows under \"profile\" "
      "with --json");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "cora_gcn: " << e.what() << "\n" << desc << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  try {
    if (cfg.runs < 1 || cfg.epochs < 0 || cfg.hidden < 1) throw std::invalid_argument("need --runs >= 1, --epochs >= 0, --hidden >= 1");
    if (cfg.runs > 1 && (!cfg.save.empty() || !cfg.load.empty()))
      throw std::invalid_argument("--save/--load work with --runs 1");
    setNumThreads(cfg.threads);
    Stopwatch loadTime;
    OgbNodeDataset ds = OgbNodeDataset::load(cfg.data);
    SparseMatrix features = ds.sparseFeatures();
    if (!cfg.quiet)
      std::fprintf(stderr, "%s: %lld nodes, %lld edges, %lld features (%.1f%% non-zero), %lld classes, split %zu/%zu/%zu, loaded in %.0f ms, %d threads\n",
                   ds.name.c_str(), static_cast<long long>(ds.graph.numNodes),
                   static_cast<long long>(ds.graph.numEdges()), static_cast<long long>(ds.graph.x.dim(1)),
                   100.0 * static_cast<double>(features.nnz()) / static_cast<double>(ds.graph.x.numel()),
                   static_cast<long long>(ds.numClasses), ds.trainIdx.size(), ds.validIdx.size(), ds.testIdx.size(),
                   loadTime.ms(), numThreads());

    if (cfg.loader != "full" && cfg.loader != "cluster")
      throw std::invalid_argument("--loader must be full or cluster, got " + cfg.loader);
    std::shared_ptr<const ClusterData> clusters;
    if (cfg.loader == "cluster") {
      clusters = std::make_shared<ClusterData>(ds.graph, cfg.clusters, cfg.seed);
      FixedSizeOptions fo = clusters->worstCaseOptions(cfg.clustersPerBatch);
      if (!cfg.quiet)
        std::fprintf(stderr, "METIS: %d clusters in %.0f ms (edge cut %lld); batches of %d clusters, %s\n",
                     cfg.clusters, 1000 * clusters->partitionSeconds(), static_cast<long long>(clusters->edgeCut()),
                     cfg.clustersPerBatch, fo.toString().c_str());
    }
    std::vector<RunResult> results;
    std::vector<double> epochMs, inferMs;
    OpProfiler profiler;
    std::optional<ObserverScope> profiling;
    if (cfg.profile) profiling.emplace(profiler);
    for (int run = 0; run < cfg.runs; ++run) {
      RunResult r = trainOnce(cfg, ds, features, cfg.seed + static_cast<uint64_t>(run), clusters);
      if (!cfg.quiet)
        std::fprintf(stderr, "run %d (seed %llu): test accuracy %.4f (best val at epoch %d), final-epoch test %.4f\n",
                     run + 1, static_cast<unsigned long long>(cfg.seed + run), r.testAcc, r.bestEpoch,
                     r.finalTestAcc);
      epochMs.insert(epochMs.end(), r.epochMs.begin(), r.epochMs.end());
      inferMs.insert(inferMs.end(), r.inferMs.begin(), r.inferMs.end());
      results.push_back(std::move(r));
    }
    profiling.reset();
    if (cfg.profile) {
      std::fprintf(stderr, "per-op profile of %d run(s) (training and evaluation forwards, backward)\n", cfg.runs);
      profiler.print(std::cerr);
    }
    auto meanStd = [&](auto get) {
      double m = 0, s = 0;
      for (const auto& r : results) m += get(r);
      m /= static_cast<double>(results.size());
      for (const auto& r : results) s += (get(r) - m) * (get(r) - m);
      return std::pair{m, results.size() > 1 ? std::sqrt(s / static_cast<double>(results.size() - 1)) : 0.0};
    };
    auto [testMean, testStd] = meanStd([](const RunResult& r) { return r.testAcc; });
    auto [valMean, valStd] = meanStd([](const RunResult& r) { return r.valAcc; });
    auto [finalMean, finalStd] = meanStd([](const RunResult& r) { return r.finalTestAcc; });
    (void)valStd;
    (void)finalStd;
    if (!cfg.quiet)
      std::fprintf(stderr, "%s: test accuracy %.4f +- %.4f over %d run(s); epoch %.3f ms, inference %.3f ms (medians)\n",
                   ds.name.c_str(), testMean, testStd, cfg.runs, median(epochMs), median(inferMs));
    if (cfg.json) {
      nlohmann::json j;
      j["dataset"] = ds.name;
      j["runs"] = cfg.runs;
      j["epochs"] = cfg.epochs;
      j["seed"] = cfg.seed;
      j["loader"] = cfg.loader;
      if (clusters) {
        j["clusters"] = cfg.clusters;
        j["clusters_per_batch"] = cfg.clustersPerBatch;
      }
      j["test_acc_mean"] = testMean;
      j["test_acc_std"] = testStd;
      j["test_acc_final_epoch_mean"] = finalMean;
      j["val_acc_mean"] = valMean;
      j["epoch_ms_median"] = median(epochMs);
      j["infer_ms_median"] = median(inferMs);
      j["threads"] = numThreads();
      j["peak_rss_mb"] = peakRssMb();
      for (const auto& r : results) {
        j["test_acc"].push_back(r.testAcc);
        j["final_loss"].push_back(r.finalLoss);
        j["loss_checksum"].push_back(hex(r.lossChecksum));
        j["predictions_checksum"].push_back(hex(r.predChecksum));
      }
      if (cfg.profile) j["profile"] = profiler.json();
      std::cout << j.dump() << std::endl;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cora_gcn: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
