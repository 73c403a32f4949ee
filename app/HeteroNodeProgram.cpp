#include "app/HeteroNodeProgram.h"

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "app/HeteroNodeBatches.h"
#include "app/HeteroNodeData.h"
#include "app/HeteroNodeModel.h"
#include "app/HeteroNodeTraining.h"
#include "app/NodeRuns.h"
#include "gnn/autograd/Profiler.h"

namespace gnn::app {

namespace {

// What exists for a heterogeneous graph, for the refusals' messages.
const char* const kHeteroOffer =
    "a heterogeneous --data (OGB's heterogeneous layout) trains --model rgcn (R-GCN) on the CPU, full-batch or "
    "with --loader neighbor";

// The flags of node_property's homogeneous models that R-GCN does not read: given, they would change nothing.
const char* const kUnreadByRgcn[] = {"heads",        "out-heads", "act",  "input-dropout", "attn-dropout", "norm",
                                     "jk",           "aggr",      "conv-args", "feature-layout", "keep-adjacency",
                                     "inference",    "clusters",  "clusters-per-batch", "trim-to-layer",
                                     "eval-batch-size", "presample"};

// The refusals, each saying what is refused, why, and what exists.
void checkHeteroNodeFlags(const Program& prog, const NodeSettings& s) {
  if (s.model != "rgcn")
    throw UsageError("--model " + s.model + ": " + s.data + " is a heterogeneous graph, and " + kHeteroOffer +
                     "; the other models take a homogeneous graph (OGB's node-property layout)");
  if (s.clusterLoader())
    throw UsageError(std::string("--loader cluster: ") + kHeteroOffer +
                     "; Cluster-GCN's loader partitions one homogeneous edge list with METIS, and no heterogeneous "
                     "cluster loader (partitions across node types, batches of fixed rows per type) exists yet");
  if (s.neighborLoader() && static_cast<int64_t>(s.fanouts().size()) != s.layers)
    throw UsageError("--num-neighbors " + s.numNeighbors + ": " + std::to_string(s.fanouts().size()) +
                     " hops for --layers " + std::to_string(s.layers) + "; R-GCN takes one hop a layer (more hops "
                     "sample nodes no seed's output reads, fewer leave the outer rows without neighbours): give " +
                     std::to_string(s.layers) + " fan-outs, e.g. " + defaultHeteroFanouts(s.layers));
  if (s.device.simulated())
    throw UsageError("--device ipu: " + std::string(kHeteroOffer) +
                     "; the simulated IPU runs homogeneous graphs' fixed-size batches");
  if (prog.given("load") || s.training.resume)
    throw UsageError(std::string(prog.given("load") ? "--load" : "--resume") + ": " + kHeteroOffer +
                     " from fresh weights; continuing a saved run is offered for homogeneous graphs");
  for (const char* flag : kUnreadByRgcn)
    if (prog.given(flag))
      throw UsageError(std::string("--") + flag + ": not read by --model rgcn (" +
                       "R-GCN takes --layers, --hidden, --dropout, --num-bases and --target-type)");
  requireAtLeast("--num-bases", static_cast<double>(s.numBases), 0);
}

nlohmann::json heteroResultsJson(const HeteroNodeData& data, const NodeSettings& s, const NodeRuns& runs,
                                 const OpProfiler& profiler) {
  nlohmann::json j;
  j["runs"] = s.runs;
  j["epochs"] = s.training.epochs;
  j["seed"] = s.training.seed;
  j["loader"] = s.loader;
  j["model"] = s.model;
  j["layers"] = s.layers;
  j["hidden"] = s.hidden;
  j["dropout"] = s.dropout;
  j["num_bases"] = s.numBases;
  j["evaluation"] = "full";  // validation and test: full-batch over the whole graph, whatever the loader
  if (data.sampler) {
    j["num_neighbors"] = s.fanouts();
    j["batch_size"] = s.batchSize;
    j["fixed_sizes"] = s.fixedSizes;
    j["sampler_index_ms"] = data.samplerMs;
  }
  addHeteroNodeDataJson(j, data);
  addNodeRunsJson(j, s, runs, profiler);
  return j;
}

}  // namespace

void refuseHeteroOnlyFlags(const Program& prog, const NodeSettings& s) {
  const std::string data = s.data.empty() ? "the shipped dataset" : s.data;
  if (s.model == "rgcn")
    throw UsageError("--model rgcn: R-GCN classifies the nodes of a heterogeneous graph (OGB's heterogeneous layout, "
                     "raw/triplet-type-list.csv); " + data + " is homogeneous: one node type, one relation");
  for (const char* flag : {"target-type", "num-bases"})
    if (prog.given(flag))
      throw UsageError(std::string("--") + flag + ": for --model rgcn on a heterogeneous --data; " + data +
                       " is homogeneous");
}

int runHeteroNode(const Program& prog, NodeSettings& s, const NodeProgramDefaults& d) {
  // A fan-out per R-GCN layer where --num-neighbors is not given (the homogeneous default is for 3 layers).
  if (s.neighborLoader() && !prog.given("num-neighbors")) s.numNeighbors = defaultHeteroFanouts(s.layers);
  checkHeteroNodeFlags(prog, s);
  checkNodeFlags(s, d);
  RunConfig config;
  s.bind(config);
  HeteroNodeData data = readHeteroNodeData(s);
  config.derived["data"] = {{"dataset", data.dataset.name}, {"target_type", data.targetType},
                            {"num_classes", data.numClasses}, {"num_relations", data.graph.edgeTypeNames.size()}};
  requireHeteroNodeModelFits(heteroModelSpec(s, data), "");
  printHeteroNodeData(data, s);
  buildHeteroSampler(data, s);
  OpProfiler profiler;
  const HeteroNodeRunInputs in{prog, s, config, data};
  const NodeRuns runs = trainNodeRuns(s, profiler, [&](uint64_t seed) { return trainHeteroNodeRun(in, seed); });
  if (s.training.json)
    std::cout << heteroResultsJson(data, s, runs, profiler).dump() << std::endl;
  else
    printNodeRunsLine(data.dataset.name + " (" + data.targetType + ")", s, runs);
  return 0;
}

}  // namespace gnn::app
