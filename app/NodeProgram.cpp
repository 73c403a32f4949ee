#include "app/NodeProgram.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "app/CheckpointDir.h"
#include "app/ComputeInfo.h"
#include "app/NodeData.h"
#include "app/NodeFlags.h"
#include "app/NodeModel.h"
#include "app/NodeTraining.h"
#include "app/ShippedData.h"
#include "gnn/autograd/OpInfo.h"
#include "gnn/autograd/Profiler.h"
#include "gnn/nn/models/BasicGNN.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/SystemInfo.h"
#include "loaders/LayerwiseInference.h"

namespace gnn::app {

namespace {

/// The checkpoint a run continues from: --load FILE, or --resume: the newest valid one of --checkpoint-dir.
struct Continuation {
  std::optional<Checkpoint> checkpoint;
  std::string path;

  const Checkpoint* get() const { return checkpoint ? &*checkpoint : nullptr; }
};

Continuation continueFrom(const Program& prog, NodeSettings& s, RunConfig& config) {
  std::optional<CheckpointDir::Found> found = s.training.continueRun(prog, config);
  Continuation c;
  if (found) {
    c.checkpoint = std::move(found->checkpoint);
    c.path = found->path;
    // Checkpoints from before the flag existed were trained on row-normalised features.
    const nlohmann::json& saved = std::as_const(c.checkpoint->meta).at("config");  // restore() checked it is an object
    if (!saved.contains("normalize_features") && !prog.given("normalize-features")) s.normalizeFeatures = "row";
    // And on edge.csv read one way, whatever the folder's name.
    if (!saved.contains("add_inverse_edges") && !prog.given("add-inverse-edges")) s.addInverseEdges = "off";
  }
  return c;
}

/// Every seed's run, in order, with their epochs' and evaluations' times.
struct NodeRuns {
  std::vector<NodeRunResult> results;
  std::vector<double> epochMs, inferMs;
};

/// --runs runs from seeds --seed .. --seed + runs - 1, profiled into `profiler` with --profile.
NodeRuns trainRuns(const NodeRunInputs& in, OpProfiler& profiler) {
  const NodeSettings& s = in.settings;
  NodeRuns runs;
  std::optional<ObserverScope> profiling;
  if (s.profile) profiling.emplace(profiler);
  for (int64_t run = 0; run < s.runs; ++run) {
    const uint64_t seed = s.training.seed + static_cast<uint64_t>(run);
    NodeRunResult r = trainNodeRun(in, seed);
    if (!s.training.quiet && s.runs > 1)
      std::fprintf(stderr, "run %lld (seed %llu): test accuracy %.4f (best validation at epoch %lld)\n",
                   static_cast<long long>(run + 1), static_cast<unsigned long long>(seed), r.testAcc,
                   static_cast<long long>(r.bestEpoch));
    runs.epochMs.insert(runs.epochMs.end(), r.epochMs.begin(), r.epochMs.end());
    runs.inferMs.insert(runs.inferMs.end(), r.inferMs.begin(), r.inferMs.end());
    runs.results.push_back(std::move(r));
  }
  profiling.reset();
  if (s.profile) {
    std::fprintf(stderr, "per-op profile of %lld run(s) (training and evaluation forwards, backward)\n",
                 static_cast<long long>(s.runs));
    profiler.print(std::cerr);
  }
  return runs;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The mean of `field` over the runs and its sample standard deviation (0 for one run).
std::pair<double, double> meanStd(const std::vector<NodeRunResult>& results, double NodeRunResult::*field) {
  double m = 0, s = 0;
  for (const auto& r : results) m += r.*field;
  m /= static_cast<double>(results.size());
  for (const auto& r : results) s += (r.*field - m) * (r.*field - m);
  return std::pair{m, results.size() > 1 ? std::sqrt(s / static_cast<double>(results.size() - 1)) : 0.0};
}

/// --json: one object of the data, the flags, the accuracies, the times and, per run, the checksums.
nlohmann::json resultsJson(const NodeData& data, const NodeSettings& s, const NodeRuns& runs,
                           const OpProfiler& profiler) {
  const OgbNodeDataset& ds = data.dataset;
  const std::vector<NodeRunResult>& results = runs.results;
  nlohmann::json j;
  j["dataset"] = ds.name;
  j["runs"] = s.runs;
  j["epochs"] = s.training.epochs;
  j["seed"] = s.training.seed;
  j["loader"] = s.loader;
  j["normalize_features"] = featureNormalizationName(ds.normalization);
  j["feature_layout"] = data.sparse ? "sparse" : "dense";
  j["feature_density"] = data.density;
  j["num_nodes"] = ds.graph.numNodes;
  j["num_edges"] = data.numEdges;
  if (data.sampler) j["edge_list_released"] = data.edgesReleased;
  j["inverse_edges_added"] = ds.inverseEdgesAdded;  // --add-inverse-edges as resolved (auto: by the folder's name)
  j["node_files"] = nlohmann::json::object();  // OGB's additional node files read (node_year): width and range
  for (const auto& [name, t] : ds.nodeFiles) {
    const auto v = t.flat<int64_t>();
    j["node_files"][name] = {{"width", t.dim(1)}, {"min", v.minCoeff()}, {"max", v.maxCoeff()}};
  }
  j["load_ms"] = data.loadMs;
  if (s.loader != "full") j["presampled"] = s.presample;
  if (data.clusters) {
    j["clusters"] = s.clusters;
    j["clusters_per_batch"] = s.clustersPerBatch;
    j["partition_ms"] = data.partitionMs;
    j["metis_spilled_mb"] = static_cast<double>(data.metisSpilledBytes) / (1 << 20);
    j["adjacency_kept"] = s.keepsAdjacency(ds.graph.edgeIndex.dim(1));
  }
  if (data.sampler) {
    j["num_neighbors"] = s.fanouts();
    j["batch_size"] = s.batchSize;
    j["fixed_sizes"] = s.fixedSizes;
    j["sampler_index_ms"] = data.samplerMs;
  }
  j["test_acc_mean"] = meanStd(results, &NodeRunResult::testAcc).first;
  j["test_acc_std"] = meanStd(results, &NodeRunResult::testAcc).second;
  j["test_acc_final_epoch_mean"] = meanStd(results, &NodeRunResult::finalTestAcc).first;
  j["val_acc_mean"] = meanStd(results, &NodeRunResult::valAcc).first;
  j["inference"] = !results.empty() && results.front().layerwiseInference ? "layerwise" : "full";
  j["epoch_ms_median"] = median(runs.epochMs);
  j["infer_ms_median"] = median(runs.inferMs);
  j["threads"] = numThreads();
  addComputeInfo(j);
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
    if (!r.loader.is_null()) j["loader_runs"].push_back(r.loader);
  }
  if (s.profile) j["profile"] = profiler.json();
  return j;
}

/// The results on stdout: the summary line, or one JSON object with --json.
void printResults(const NodeData& data, const NodeSettings& s, const NodeRuns& runs, const OpProfiler& profiler) {
  if (s.training.json) {
    std::cout << resultsJson(data, s, runs, profiler).dump() << std::endl;
    return;
  }
  const std::vector<NodeRunResult>& results = runs.results;
  const auto [testMean, testStd] = meanStd(results, &NodeRunResult::testAcc);
  std::printf("%s: test accuracy %.4f", data.dataset.name.c_str(), testMean);
  if (s.runs > 1)
    std::printf(" +- %.4f over %lld runs", testStd, static_cast<long long>(s.runs));
  else
    std::printf(" (best validation accuracy %.4f at epoch %lld)", meanStd(results, &NodeRunResult::valAcc).first,
                static_cast<long long>(results[0].bestEpoch));
  std::printf("; epoch %.3f ms, inference %.3f ms (medians); param_l2 %.6f\n", median(runs.epochMs),
              median(runs.inferMs), results[0].paramL2);
}

/// The nodes whose activations a step holds: the whole graph's, or with --loader neighbor a batch's (with
/// --trim-to-layer, the rows up to the last hop but one: the last hop's nodes feed the first layer only).
int64_t activationRows(const NodeSettings& s, int64_t numNodes) {
  if (!s.neighborLoader()) return numNodes;
  const std::vector<int64_t> fan = s.fanouts();
  int64_t rows = std::min(s.batchSize, numNodes), frontier = rows;
  const size_t hops = s.trimToLayer == "on" ? fan.size() - 1 : fan.size();
  for (size_t h = 0; h < hops && rows < numNodes; ++h) {
    if (fan[h] < 0) return numNodes;
    frontier = std::min(numNodes, frontier * std::max<int64_t>(fan[h], 0));
    rows = std::min(numNodes, rows + frontier);
  }
  return rows;
}

/// The program's body: flags checked, the checkpoint to continue, the data, the runs, the results.
int runNode(const Program& prog, NodeSettings& s, const NodeProgramDefaults& d) {
  s.training.apply(prog);
  s.device.apply(prog);
  if (s.neighborLoader()) {  // OGB's ogbn-products GraphSAGE with neighbour sampling, where not given
    if (s.basicGnn && !prog.given("layers")) s.layers = 3;
    if (!prog.given("hidden")) s.hidden = 256;
    if (!prog.given("lr")) s.training.lr = 0.003;
  }
  RunConfig config;
  s.bind(config);
  const Continuation from = continueFrom(prog, s, config);
  checkNodeFlags(s, d);
  if (s.data.empty()) s.data = shippedData(d.data);
  NodeData data = readNodeData(s);
  recordNodeData(data, s.data, config, from.get(), from.path);
  // The width within the machine's memory before a model is built with it.
  const OgbNodeDataset& ds = data.dataset;
  requireNodeModelFits(s.modelSpec(ds.graph.x.dim(1), ds.numClasses), activationRows(s, ds.graph.numNodes),
                       from.checkpoint && !prog.given("hidden") ? from.path : std::string());
  printNodeData(data, s);
  buildClusters(data, s);
  // Layer-wise evaluation reads the sampler's index only: the whole graph's edge list can go.
  const NodeModelSpec spec = s.modelSpec(ds.graph.x.dim(1), ds.numClasses);
  bool releaseEdges = s.layerwiseInference() && spec.basicGnn;
  if (releaseEdges) {
    const nlohmann::json j = spec.basicGnnSpec();
    releaseEdges = layerwiseInferenceRefusal(j["class"].get<std::string>(), BasicGNNOptions::fromPyG(j["args"])).empty();
  }
  buildNeighborSampler(data, s, releaseEdges);
  OpProfiler profiler;
  const NodeRuns runs = trainRuns({prog, s, config, data, from.get(), from.path}, profiler);
  printResults(data, s, runs, profiler);
  return 0;
}

}  // namespace

int runNodeProgram(int argc, char** argv, const NodeProgramDefaults& defaults) {
  Program prog(defaults.name, defaults.summary);
  NodeSettings s;
  addNodeFlags(prog, s, defaults);
  return prog.run(argc, argv, [&] { return runNode(prog, s, defaults); });
}

}  // namespace gnn::app
