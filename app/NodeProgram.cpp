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
#include "app/HeteroNodeData.h"
#include "app/HeteroNodeProgram.h"
#include "app/NodeData.h"
#include "app/NodeFlags.h"
#include "app/NodeModel.h"
#include "app/NodeRuns.h"
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

/// --json: one object of the data, the flags, the accuracies, the times and, per run, the checksums.
nlohmann::json resultsJson(const NodeData& data, const NodeSettings& s, const NodeRuns& runs,
                           const OpProfiler& profiler) {
  const OgbNodeDataset& ds = data.dataset;
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
  addNodeRunsJson(j, s, runs, profiler);
  return j;
}

/// The results on stdout: the summary line, or one JSON object with --json.
void printResults(const NodeData& data, const NodeSettings& s, const NodeRuns& runs, const OpProfiler& profiler) {
  if (s.training.json) {
    std::cout << resultsJson(data, s, runs, profiler).dump() << std::endl;
    return;
  }
  printNodeRunsLine(data.dataset.name, s, runs);
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
  // A folder in OGB's heterogeneous layout (ogbn-mag's) has a program body of its own: R-GCN or HGT, full-batch.
  if (heteroDataGiven(s)) return runHeteroNode(prog, s, d);
  refuseHeteroOnlyFlags(prog, s);
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
  const NodeRunInputs in{prog, s, config, data, from.get(), from.path};
  const NodeRuns runs = trainNodeRuns(s, profiler, [&](uint64_t seed) { return trainNodeRun(in, seed); });
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
