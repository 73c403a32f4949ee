// cora_gcn: semi-supervised node classification with a two-layer GCN (Kipf & Welling, ICLR 2017) on a
// dataset in OGB's node-property raw layout (default: the shipped Cora with the Planetoid public split).
//
//   cora_gcn                                  # Cora, paper settings, one run
//   cora_gcn --runs 10 --json                 # mean/std over seeds 0..9, one JSON object on stdout
//   cora_gcn --data examples/data/citeseer
//   cora_gcn --epochs 100 --save run.ckpt && cora_gcn --epochs 200 --load run.ckpt   # continue to 200
//   cora_gcn --loader cluster --clusters 16 --clusters-per-batch 4   # Cluster-GCN, fixed-size batches
//   cora_gcn --data ogbn-arxiv --normalize-features standard            # real-valued features
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "data/OgbNodeDataset.h"
#include "device/Device.h"
#include "app/ComputeInfo.h"
#include "app/DeviceFlags.h"
#include "app/MemoryBounds.h"
#include "app/Program.h"
#include "app/ShippedData.h"
#include "app/Trainer.h"
#include "app/TrainingFlags.h"
#include "gnn/BufferPool.h"
#include "gnn/Fnv1a.h"
#include "gnn/Ops.h"
#include "gnn/Parallel.h"
#include "gnn/Profiler.h"
#include "gnn/SystemInfo.h"
#include "loaders/ClusterLoader.h"
#include "models/NodeGCN.h"

namespace po = boost::program_options;
using namespace gnn;

namespace {

struct Config {
  std::string data, loader = "full", normalizeFeatures = "auto", featureLayout = "auto", keepAdjacency = "auto";
  int64_t hidden = 16, runs = 1, clusters = 16, clustersPerBatch = 4;
  double dropout = 0.5;
  bool profile = false;
};

// --keep-adjacency auto: from this many directed edges the whole graph's normalised adjacency is kept between
// evaluations. Rebuilding it is a counting sort of the edges by target, whose scattered writes leave the caches as
// the graph grows: 0.19 s per evaluation at 12.2M edges (245k nodes), 7 s at ogbn-products' 122M, where it was
// half of each evaluation. Keeping it costs about 8 bytes per edge for the whole run (110 MB at 12.2M edges,
// where the run's peak is otherwise 0.88 GB).
constexpr int64_t kKeepAdjacencyFromEdges = int64_t{32} << 20;

/// Whether a Cluster-GCN run keeps the whole graph's adjacency (--keep-adjacency on | off | auto).
bool keepsAdjacency(const std::string& flag, int64_t directedEdges) {
  return flag == "on" || (flag == "auto" && directedEdges >= kKeepAdjacencyFromEdges);
}

struct SeedRun {
  nlohmann::json summary;
  double testAcc = 0, valAcc = 0, finalTestAcc = 0, paramL2 = 0;
  std::string paramChecksum;
  int64_t bestEpoch = 0;
  std::vector<double> epochMs, inferMs;
  Fnv1a predChecksum;
  nlohmann::json device;  // --device ipu: the device's keys for --json
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}


// Accuracy of argmax(logits) over the nodes in idx; also returns every node's prediction.
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
      (*pred)[static_cast<size_t>(i)] = arg;
    }
  }
  return idx.empty() ? 0 : static_cast<double>(correct) / static_cast<double>(idx.size());
}

// Cluster-GCN's memory. Each batch's subgraph is cut at its own size before it is padded, so the buffer pool,
// which recycles buffers of equal size only, would keep every one of them (up to its 1 GiB) for requests that
// never come: ~20 MB a step at 245k nodes, 640 MB peak on a 24.5k-node graph of 30 MB. The heap reuses freed
// blocks of any size instead: no pool, and one heap for all threads (glibc gives the loader's thread an arena
// of its own, whose peak then adds to the main one's: 1,053 MB against 847 MB for 8 epochs at 245k nodes,
// batches of 4 of 16 clusters). Called before the dataset is read.
void boundClusterLoaderMemory() {
  BufferPool::setCapacity(0);
  mallopt(M_ARENA_MAX, 1);
}

// Once the graph is partitioned: what METIS and the renumbering freed (more than the graph itself) goes back to
// the system, and from then on freed blocks under 32 MB stay in the heap (no trimming), so each step's buffers
// reuse the last step's memory instead of faulting in fresh pages (~20% of an epoch at 245k nodes). Larger
// blocks (a batch's edge list, the whole graph's arrays in evaluation) are mapped and returned when freed: in
// the heap they left holes the next, differently sized, ones did not fit, and the peak crept up from epoch to
// epoch (by ~130 MB over 20 epochs at 245k nodes, batches of 4 of 16 clusters; app::keepFreedMemoryInHeap's
// 1 GiB threshold). Kept from the start, the heap would also hold the reader's chunks through METIS.
void keepTrainingMemoryInHeap() {
  malloc_trim(0);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

SeedRun trainOnce(const app::Program& prog, const app::TrainingFlags& tf, const app::DeviceFlags& df,
                  const Config& cfg, app::RunConfig& config,
                    const OgbNodeDataset& ds, const SparseMatrix* sparseFeatures, uint64_t seed,
                    const std::shared_ptr<const ClusterData>& clusters, const std::vector<int64_t>& nodeOrder,
                    const Checkpoint* resumeFrom, const std::string& resumePath) {
  Generator initGen(seed);
  NodeGCNOptions mo;
  mo.dropout = cfg.dropout;
  // Cluster-GCN: every step sees another subgraph, so no batch's normalised adjacency is kept past its forward;
  // the whole graph's, which every evaluation comes back to, may be (--keep-adjacency, kKeepAdjacencyFromEdges).
  mo.cached = clusters == nullptr;
  NodeGCN net(ds.graph.x.dim(1), cfg.hidden, ds.numClasses, initGen, mo);
  if (clusters && keepsAdjacency(cfg.keepAdjacency, ds.graph.edgeIndex.dim(1)))
    net.keepAdjacencyOf(ds.graph.edgeIndex, ds.graph.numNodes);
  std::unique_ptr<ClusterLoader> loader;
  if (clusters) {
    ClusterLoader::Options lo;
    lo.clustersPerBatch = static_cast<int>(cfg.clustersPerBatch);
    lo.seed = seed;
    // One batch cut ahead overlaps the loader with the step (which keeps the cores busy itself); each further
    // one only holds memory: ~80 MB a batch of 4 of 16 clusters at 245k nodes.
    lo.prefetch = 1;
    // The batch's normalised adjacency is built there too, off the step's path (the devices run copies of the
    // model, with caches of their own).
    if (!df.simulated()) lo.prepare = [&net](const Batch& b) { net.prepare(b); };
    loader = std::make_unique<ClusterLoader>(clusters, clusters->worstCaseOptions(lo.clustersPerBatch), lo);
  }
  // The paper's L2 regularisation applies to the first layer only (Kipf & Welling 2017, section 5.2).
  std::unique_ptr<Optimizer> opt =
      tf.makeOptimizer({{net.conv1().parameters(), tf.weightDecay}, {net.conv2().parameters(), 0.0}});
  app::Trainer trainer(prog, tf, net, *opt, config, {"acc", /*higherIsBetter=*/true}, "nodes");
  trainer.setSeed(seed);
  if (resumeFrom) trainer.resume(*resumeFrom, resumePath);

  SeedRun r;
  const Tensor& ei = ds.graph.edgeIndex;
  const Tensor& y = ds.graph.y;
  // The whole graph's logits from its features as kept: sparse (bag-of-words), else the dense matrix.
  const Variable denseFeatures(ds.graph.x);
  auto forwardAll = [&] { return sparseFeatures ? net.forward(*sparseFeatures, ei) : net.forward(denseFeatures, ei); };
  auto infer = [&] {
    NoGradGuard ng;
    net.eval();
    Stopwatch sw;
    Tensor out = forwardAll().value();
    r.inferMs.push_back(sw.ms());
    net.train();
    return out;
  };
  trainer.logRunStart({{"data", cfg.data}, {"seed", seed},
                       {"split", {{"kind", "source"}, {"train", ds.trainIdx.size()}, {"valid", ds.validIdx.size()},
                                  {"test", ds.testIdx.size()}}}});
  // With --device ipu the steps run on simulated IPUs: the whole graph as one micro-batch of dense features
  // (repeated for every micro-batch of a request: each sees the same graph, so the update is the full-batch
  // one), or the cluster batches stacked into host requests. --device cpu keeps the sparse-feature path.
  std::unique_ptr<DeviceProgram> program;
  Batch full;
  const int64_t perRequest = df.microBatchesPerRequest();
  LossFn lossFn{[](const Variable& out, const Batch& b) { return crossEntropy(out, b.y, b.trainMask); },
                [](const Batch& b) { return labelCount(b.trainMask, 0); }};
  if (df.simulated()) {
    if (!loader) {
      full.numNodes = full.numRealNodes = ds.graph.numNodes;
      full.numEdges = full.numRealEdges = ds.graph.numEdges();
      full.numGraphs = full.numRealGraphs = 1;
      full.x = ds.graph.x;
      full.edgeIndex = ei;
      full.y = y;
      full.trainMask = ds.graph.trainMask;
      full.validMask = ds.graph.validMask;
      full.testMask = ds.graph.testMask;
      full.batch = Tensor::zeros({full.numNodes}, DType::I64);
      full.ptr = Tensor::zeros({2}, DType::I64);
      full.ptr.data<int64_t>()[1] = full.numNodes;
      full.edgePtr = Tensor::zeros({2}, DType::I64);
      full.edgePtr.data<int64_t>()[1] = full.numEdges;
      full.graphsMask = Tensor::full({1}, 1, DType::U8);
      full.nodesMask = Tensor::full({full.numNodes}, 1, DType::U8);
      full.edgesMask = Tensor::full({full.numEdges}, 1, DType::U8);
    }
    Batch shapes = full;
    if (loader) {
      loader->startEpoch(0);
      loader->next(shapes);
    }
    program = df.compile(prog, net, lossFn, opt.get(), shapes, 1.0, tf.quiet);
    if (!df.trace.empty() || !df.traceSvg.empty()) program->enableTrace(df.traceRequests);
  }
  app::Trainer::Hooks hooks;
  hooks.stepsPerEpoch = [&]() -> int64_t {
    const int64_t batches = loader ? loader->numBatches() : perRequest;
    return program ? program->updatesFor(batches) : batches;
  };
  hooks.trainEpoch = [&](int64_t epoch, int64_t skip) {
    Stopwatch sw;
    net.train();
    // Under mpirun each rank sends only its replicas' micro-batches (RequestShard: the device's mapping).
    const RequestShard shard = df.options.shard(/*training=*/true);
    if (program && !loader) {
      int64_t mine = 0;
      for (int64_t m = 0; m < perRequest; ++m) mine += shard.owns(m) ? 1 : 0;
      std::vector<Batch> copies(static_cast<size_t>(mine), full);
      trainer.step(*program, mine == 1 ? full : stackMicroBatches(copies));
    } else if (program) {
      // Cluster batches stacked into host requests (those without a labelled node weigh 0).
      loader->startEpoch(epoch);
      std::vector<Batch> parts;
      auto flush = [&] {
        if (parts.empty()) return true;
        const int64_t updates = program->updatesFor(static_cast<int64_t>(parts.size()));
        std::vector<Batch> mine;
        for (size_t m = 0; m < parts.size(); ++m)
          if (shard.owns(static_cast<int64_t>(m))) mine.push_back(std::move(parts[m]));
        Batch req = mine.empty() ? Batch() : mine.size() == 1 ? mine.front() : stackMicroBatches(mine);
        parts.clear();
        if (skip > 0) {
          skip -= updates;
          return true;
        }
        return trainer.step(*program, req);
      };
      bool more = true;
      for (Batch b; more && loader->next(b);) {
        parts.push_back(std::move(b));
        if (static_cast<int64_t>(parts.size()) == perRequest) more = flush();
      }
      if (more) flush();
    } else if (loader) {
      // One step per fixed-size cluster batch; batches without a labelled node give no gradient.
      loader->startEpoch(epoch);
      for (Batch b; loader->next(b);) {
        if (b.trainMask.flat<uint8_t>().maxCoeff() == 0) continue;
        if (skip > 0) {
          --skip;
          continue;
        }
        if (!trainer.step([&] { return crossEntropy(net.forward(b), b.y, b.trainMask); },
                          b.trainMask.flat<uint8_t>().cast<int64_t>().sum()))
          break;  // --time-budget spent
      }
    } else {
      trainer.step([&] { return crossEntropy(forwardAll(), y, ds.graph.trainMask); },
                   static_cast<int64_t>(ds.trainIdx.size()));
    }
    r.epochMs.push_back(sw.ms());
  };
  hooks.validate = [&] {
    Tensor out = infer();
    Evaluation e;
    e.metric = accuracy(out, y, ds.validIdx, nullptr);
    e.details = {{"train_acc", accuracy(out, y, ds.trainIdx, nullptr)}};
    return e;
  };
  hooks.test = [&] {
    Tensor out = infer();
    Evaluation e;
    e.metric = accuracy(out, y, ds.testIdx, nullptr);
    return e;
  };
  trainer.run(hooks);

  r.summary = trainer.summary();
  r.valAcc = trainer.bestValid();
  r.testAcc = trainer.bestTest().value("metric", NAN);
  r.bestEpoch = trainer.bestEpoch();
  r.paramL2 = paramL2(net);
  r.paramChecksum = paramChecksum(net);
  if (program) {
    df.writeTraces(*program, "cora_gcn");
    r.device = df.toJson(*program);
    const nlohmann::json planJson = df.planJson(*program);  // items() must not outlive the json it iterates
    for (const auto& [k, v] : planJson.items()) r.device[k] = v;
    if (!tf.quiet) std::cerr << "stages (per micro-batch):\n" << program->stageTable();
  }
  {
    // The final weights' test accuracy (beside the one at the best validation epoch) and predictions.
    std::vector<int64_t> pred;
    Tensor out = infer();
    r.finalTestAcc = accuracy(out, y, ds.testIdx, &pred);
    if (!nodeOrder.empty()) {  // back to the dataset's own numbering
      std::vector<int64_t> original(pred.size());
      for (size_t i = 0; i < pred.size(); ++i) original[static_cast<size_t>(nodeOrder[i])] = pred[i];
      pred = std::move(original);
    }
    r.predChecksum.add(pred.data(), pred.size() * sizeof(int64_t));
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  app::Program prog("cora_gcn",
                    "two-layer GCN (Kipf & Welling 2017) for node classification on a dataset in OGB's "
                    "node-property raw layout; test accuracy at the best validation epoch");
  Config cfg;
  app::TrainingFlags tf;
  app::DeviceFlags df;
  prog.flags().add_options()(
      "data", po::value(&cfg.data)->value_name("DIR"),
      ("dataset folder in OGB's node-property raw layout (default: the shipped " + app::shippedDataLabel("cora") + ")")
          .c_str())("hidden", app::value(&cfg.hidden, int64_t{16}), "hidden channels")(
      "dropout", app::value(&cfg.dropout, 0.5), "dropout probability (input and hidden layer)")(
      "runs", app::value(&cfg.runs, int64_t{1}), "independent runs with seeds seed .. seed+runs-1")(
      "loader", app::value(&cfg.loader, "full"), "full (one full-graph step per epoch) | cluster (Cluster-GCN)")(
      "clusters", app::value(&cfg.clusters, int64_t{16}), "--loader cluster: METIS clusters")(
      "clusters-per-batch", app::value(&cfg.clustersPerBatch, int64_t{4}),
      "--loader cluster: clusters merged per fixed-size batch")(
      "normalize-features", app::value(&cfg.normalizeFeatures, "auto"),
      "none | row (PyG's NormalizeFeatures: rows sum to 1) | standard (per feature, the training nodes' mean and "
      "std) | auto (row when every feature is >= 0, else standard)")(
      "feature-layout", app::value(&cfg.featureLayout, "auto"),
      "full-graph steps and evaluation: sparse | dense feature matrix | auto (sparse below "
      "OgbNodeDataset::kSparseFeatureDensity non-zeros, as bag-of-words features, else dense)")(
      "keep-adjacency", app::value(&cfg.keepAdjacency, "auto"),
      "--loader cluster: keep the whole graph's normalised adjacency between evaluations (about 8 bytes per "
      "directed edge) instead of rebuilding it for each: on | off | auto (on from 32M directed edges, where a "
      "rebuild takes seconds). The results are the same bits either way")(
      "profile", po::bool_switch(&cfg.profile),
      "per-op table of all runs on stderr (op, pass, calls, ms, GFLOP, GFLOP/s, share); rows under \"profile\" "
      "with --json");
  app::TrainingDefaults defaults;
  defaults.epochs = 200;
  defaults.lr = 0.01;
  defaults.weightDecay = 5e-4;
  defaults.weightDecayHelp = "weight decay of the first layer (the paper's L2 on layer 1 only)";
  tf.addTo(prog, defaults);
  df.addTo(prog);
  prog.setEpilog(
      "Results go to stdout (a summary line, or one JSON object with --json); progress goes to stderr. The JSON\n"
      "holds test_acc_mean/std (at the best validation epoch), val_acc_mean, epoch_ms_median, infer_ms_median,\n"
      "param_l2, param_checksum and per run test_acc, best_epoch, final_loss, loss_checksum and predictions_checksum.");
  return prog.run(argc, argv, [&] {
    tf.apply(prog);
    df.apply(prog);
    app::RunConfig config;
    config.bind("hidden", &cfg.hidden);
    config.bind("dropout", &cfg.dropout);
    config.bind("loader", &cfg.loader);
    config.bind("clusters", &cfg.clusters);
    config.bind("clusters-per-batch", &cfg.clustersPerBatch);
    config.bind("normalize-features", &cfg.normalizeFeatures);
    config.bind("seed", const_cast<uint64_t*>(&tf.seed));
    // --load FILE, or --resume: the newest valid checkpoint of --checkpoint-dir.
    std::optional<app::CheckpointDir::Found> found = tf.continueRun(prog, config);
    std::optional<Checkpoint> ck;
    std::string ckPath;
    if (found) {
      ck = std::move(found->checkpoint);
      ckPath = found->path;
      // Checkpoints from before the flag existed were trained on row-normalised features.
      const nlohmann::json& saved = std::as_const(ck->meta).at("config");  // restore() checked it is an object
      if (!saved.contains("normalize_features") && !prog.given("normalize-features")) cfg.normalizeFeatures = "row";
    }
    app::requireAtLeast("--runs", static_cast<double>(cfg.runs), 1);
    app::requireAtLeast("--hidden", static_cast<double>(cfg.hidden), 1);
    app::requireRange("--dropout", cfg.dropout, 0, 0.999);
    app::requireOneOf("--loader", cfg.loader, {"full", "cluster"});
    app::requireOneOf("--normalize-features", cfg.normalizeFeatures, {"none", "row", "standard", "auto"});
    app::requireOneOf("--feature-layout", cfg.featureLayout, {"auto", "sparse", "dense"});
    app::requireOneOf("--keep-adjacency", cfg.keepAdjacency, {"auto", "on", "off"});
    app::requireAtLeast("--clusters", static_cast<double>(cfg.clusters), 1);
    app::requireRange("--clusters-per-batch", static_cast<double>(cfg.clustersPerBatch), 1,
                      static_cast<double>(cfg.clusters));
    if (cfg.runs > 1 && (!tf.save.empty() || !tf.load.empty() || !tf.checkpointDir.empty()))
      throw app::UsageError("--save, --load, --checkpoint-dir and --resume work with --runs 1");
    if (cfg.data.empty()) cfg.data = app::shippedData("cora");
    if (cfg.loader == "cluster") boundClusterLoaderMemory();  // before the dataset's buffers and any thread

    Stopwatch loadTime;
    OgbNodeOptions loadOptions;
    loadOptions.normalization = *parseFeatureNormalization(cfg.normalizeFeatures);  // checked above
    OgbNodeDataset ds = OgbNodeDataset::load(cfg.data, loadOptions);
    const double loadMs = loadTime.ms();
    // Cluster-GCN: METIS on the graph as read, then its nodes renumbered cluster by cluster
    // (ClusterData::clusterOrder): the batches are the same bits, and the whole-graph evaluation reads its
    // neighbours' rows from a cluster's block instead of from anywhere in the graph. order maps back.
    std::vector<int64_t> partition, order;
    int64_t edgeCut = 0;
    double partitionMs = 0;
    int64_t metisSpilledBytes = 0;
    if (cfg.loader == "cluster") {
      app::requireRange("--clusters", static_cast<double>(cfg.clusters), 1, static_cast<double>(ds.graph.numNodes));
      Stopwatch metis;
      // The features and the edge list wait in temporary files while METIS runs (its own memory is about 40
      // bytes per edge): at ogbn-products' size the peak went from 8.6 GB to the partition's own.
      partition = ClusterData::partition(ds.graph.numNodes, ds.graph.edgeIndex, cfg.clusters, tf.seed, &edgeCut,
                                         {&ds.graph.x, &ds.graph.edgeIndex}, &metisSpilledBytes);
      partitionMs = metis.ms();
      order = ClusterData::clusterOrder(partition, cfg.clusters);
      ds.permuteNodes(order);
      std::vector<int64_t> renumbered(order.size());
      for (size_t i = 0; i < order.size(); ++i) renumbered[i] = partition[static_cast<size_t>(order[i])];
      partition = std::move(renumbered);
      keepTrainingMemoryInHeap();
    }
    const double density = ds.featureDensity();
    const bool sparse = cfg.featureLayout == "sparse" ||
                        (cfg.featureLayout == "auto" && density < OgbNodeDataset::kSparseFeatureDensity);
    std::optional<SparseMatrix> sparseFeatures;
    if (sparse) sparseFeatures = ds.sparseFeatures();
    nlohmann::json dataId = {{"dataset", ds.name}, {"num_features", ds.graph.x.dim(1)}, {"num_classes", ds.numClasses}};
    if (ck && config.derived.contains("data") && config.derived["data"] != dataId)
      throw app::UsageError("--data " + cfg.data + " (" + dataId.dump() + ") is not the dataset " + ckPath +
                            " was trained on (" + config.derived["data"].dump() + ")");
    config.derived["data"] = dataId;
    {
      // The normalisation the features got. Under `auto` it depends on the data, and `standard` on the training
      // split's statistics: those are recomputed from the data on resume (deterministic: fixed order, double) and
      // their checksum is kept, so a resumed run sees the features the checkpoint was trained on bit for bit, or
      // is refused.
      nlohmann::json norm = {{"normalization", featureNormalizationName(ds.normalization)}};
      if (ds.normalization == FeatureNormalization::Standard) {
        Fnv1a h;
        h.add(ds.featureMean.data(), ds.featureMean.size() * sizeof(double));
        h.add(ds.featureStd.data(), ds.featureStd.size() * sizeof(double));
        norm["mean_std_checksum"] = h.hex();
      }
      // A checkpoint without the record predates the choice: its run normalised rows.
      const nlohmann::json saved = !ck                                  ? norm
                                   : config.derived.contains("features") ? config.derived["features"]
                                                                         : nlohmann::json{{"normalization", "row"}};
      if (saved != norm)
        throw app::UsageError("--data " + cfg.data + " gives features normalised as " + norm.dump() + ", but " +
                              ckPath + " was trained on features normalised as " + saved.dump() +
                              " (the features or the training split changed)");
      config.derived["features"] = norm;
    }
    {
      // The width within the machine's memory before a model is built with it: the two layers' weights with
      // their gradients, Adam's moments and the best epoch's copy, and a few activations of every node.
      const double h = static_cast<double>(cfg.hidden), f = static_cast<double>(ds.graph.x.dim(1)),
                   k = static_cast<double>(ds.numClasses), n = static_cast<double>(ds.graph.numNodes);
      app::requireFitsInMemory("hidden", h, (f * h + h * k + h + k) * 6 * 4 + n * h * 6 * 4,
                               ck && !prog.given("hidden") ? ckPath : std::string(),
                               "a two-layer GCN's weights and optimizer state, and its activations over " +
                                   std::to_string(ds.graph.numNodes) + " nodes");
    }
    if (!tf.quiet)
      std::fprintf(stderr,
                   "%s: %lld nodes, %lld edges, %lld features (%.1f%% non-zero, kept %s, normalized: %s%s), %lld classes, "
                   "split %zu/%zu/%zu, loaded in %.0f ms, %d threads\n",
                   ds.name.c_str(), static_cast<long long>(ds.graph.numNodes),
                   static_cast<long long>(ds.graph.numEdges()), static_cast<long long>(ds.graph.x.dim(1)),
                   100.0 * density, sparse ? "sparse" : "dense", featureNormalizationName(ds.normalization), cfg.normalizeFeatures == "auto" ? " (auto)" : "",
                   static_cast<long long>(ds.numClasses), ds.trainIdx.size(), ds.validIdx.size(), ds.testIdx.size(),
                   loadMs, numThreads());

    std::shared_ptr<const ClusterData> clusters;
    if (cfg.loader == "cluster") {
      clusters = std::make_shared<ClusterData>(ds.graph, std::move(partition), cfg.clusters, edgeCut);
      FixedSizeOptions fo = clusters->worstCaseOptions(static_cast<int>(cfg.clustersPerBatch));
      if (!tf.quiet)
        std::fprintf(stderr, "METIS: %lld clusters in %.0f ms (edge cut %lld); batches of %lld clusters, %s\n",
                     static_cast<long long>(cfg.clusters), partitionMs,
                     static_cast<long long>(clusters->edgeCut()), static_cast<long long>(cfg.clustersPerBatch),
                     fo.toString().c_str());
    }
    std::vector<SeedRun> results;
    std::vector<double> epochMs, inferMs;
    OpProfiler profiler;
    std::optional<ObserverScope> profiling;
    if (cfg.profile) profiling.emplace(profiler);
    for (int64_t run = 0; run < cfg.runs; ++run) {
      const uint64_t seed = tf.seed + static_cast<uint64_t>(run);
      SeedRun r = trainOnce(prog, tf, df, cfg, config, ds, sparseFeatures ? &*sparseFeatures : nullptr, seed, clusters,
                            order, ck ? &*ck : nullptr, ckPath);
      if (!tf.quiet && cfg.runs > 1)
        std::fprintf(stderr, "run %lld (seed %llu): test accuracy %.4f (best validation at epoch %lld)\n",
                     static_cast<long long>(run + 1), static_cast<unsigned long long>(seed), r.testAcc,
                     static_cast<long long>(r.bestEpoch));
      epochMs.insert(epochMs.end(), r.epochMs.begin(), r.epochMs.end());
      inferMs.insert(inferMs.end(), r.inferMs.begin(), r.inferMs.end());
      results.push_back(std::move(r));
    }
    profiling.reset();
    if (cfg.profile) {
      std::fprintf(stderr, "per-op profile of %lld run(s) (training and evaluation forwards, backward)\n",
                   static_cast<long long>(cfg.runs));
      profiler.print(std::cerr);
    }
    auto meanStd = [&](auto get) {
      double m = 0, s = 0;
      for (const auto& r : results) m += get(r);
      m /= static_cast<double>(results.size());
      for (const auto& r : results) s += (get(r) - m) * (get(r) - m);
      return std::pair{m, results.size() > 1 ? std::sqrt(s / static_cast<double>(results.size() - 1)) : 0.0};
    };
    auto [testMean, testStd] = meanStd([](const SeedRun& r) { return r.testAcc; });
    auto [valMean, valStd] = meanStd([](const SeedRun& r) { return r.valAcc; });
    auto [finalMean, finalStd] = meanStd([](const SeedRun& r) { return r.finalTestAcc; });
    (void)valStd;
    (void)finalStd;
    if (tf.json) {
      nlohmann::json j;
      j["dataset"] = ds.name;
      j["runs"] = cfg.runs;
      j["epochs"] = tf.epochs;
      j["seed"] = tf.seed;
      j["loader"] = cfg.loader;
      j["normalize_features"] = featureNormalizationName(ds.normalization);
      j["feature_layout"] = sparse ? "sparse" : "dense";
      j["feature_density"] = density;
      j["num_nodes"] = ds.graph.numNodes;
      j["num_edges"] = ds.graph.numEdges();
      j["load_ms"] = loadMs;
      if (clusters) {
        j["clusters"] = cfg.clusters;
        j["clusters_per_batch"] = cfg.clustersPerBatch;
        j["partition_ms"] = partitionMs;
        j["metis_spilled_mb"] = static_cast<double>(metisSpilledBytes) / (1 << 20);
        j["adjacency_kept"] = keepsAdjacency(cfg.keepAdjacency, ds.graph.edgeIndex.dim(1));
      }
      j["test_acc_mean"] = testMean;
      j["test_acc_std"] = testStd;
      j["test_acc_final_epoch_mean"] = finalMean;
      j["val_acc_mean"] = valMean;
      j["epoch_ms_median"] = median(epochMs);
      j["infer_ms_median"] = median(inferMs);
      j["threads"] = numThreads();
      app::addComputeInfo(j);
      if (!results.empty() && results.front().device.is_object()) {
        const nlohmann::json dev = results.front().device;
        for (const auto& [k, v] : dev.items()) j[k] = v;
      } else {
        j["device"] = "cpu";
      }
      j["peak_rss_mb"] = peakRssMb();
      for (const auto& r : results) {
        j["test_acc"].push_back(r.testAcc);
        j["best_epoch"].push_back(r.bestEpoch);
        j["final_loss"].push_back(r.summary["final_loss"]);
        j["loss_checksum"].push_back(r.summary["loss_checksum"]);
        j["predictions_checksum"].push_back(r.predChecksum.hex());
        j["param_l2"].push_back(r.paramL2);
        j["param_checksum"].push_back(r.paramChecksum);
      }
      if (cfg.profile) j["profile"] = profiler.json();
      std::cout << j.dump() << std::endl;
    } else {
      std::printf("%s: test accuracy %.4f", ds.name.c_str(), testMean);
      if (cfg.runs > 1) std::printf(" +- %.4f over %lld runs", testStd, static_cast<long long>(cfg.runs));
      else std::printf(" (best validation accuracy %.4f at epoch %lld)", valMean, static_cast<long long>(results[0].bestEpoch));
      std::printf("; epoch %.3f ms, inference %.3f ms (medians); param_l2 %.6f\n", median(epochMs), median(inferMs),
                  results[0].paramL2);
    }
    return 0;
  });
}
