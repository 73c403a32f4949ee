#include "app/HeteroNodeProgram.h"

#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
    "a heterogeneous --data (OGB's heterogeneous layout) trains --model rgcn (R-GCN) or --model hgt (HGT) on the CPU, "
    "full-batch or with --loader neighbor or cluster, and on the simulated IPU (--device ipu) full-batch, R-GCN also "
    "with --loader neighbor";

// The flags of node_property's homogeneous models that neither heterogeneous model reads: given, they would change
// nothing.
const char* const kUnreadByHetero[] = {"out-heads", "act",       "input-dropout",  "attn-dropout",
                                       "jk",        "aggr",      "conv-args",      "feature-layout",  "keep-adjacency",
                                       "inference", "trim-to-layer", "eval-batch-size", "presample"};

// Per model: the flags it reads (for the message) and the shared ones it does not.
struct HeteroModelFlags {
  const char* model;
  const char* reads;
  std::vector<const char*> unread;
};
const HeteroModelFlags kHeteroModelFlags[] = {
    {"rgcn", "R-GCN takes --layers, --hidden, --dropout, --num-bases, --featureless and --target-type",
     {"heads", "norm"}},
    {"hgt", "HGT takes --layers, --hidden, --heads, --norm, --featureless and --target-type; hgt_dblp.py has no "
     "dropout", {"dropout", "num-bases"}},
};

// --device ipu: both models full-batch, R-GCN also on neighbour and cluster batches (app/HeteroNodeDevice.h). A
// batch's featureless rows are embedding rows at their node ids, which cross the host link in z
// (models/TypedGraphBatch.h), so --eight-bit-io, which narrows z to 8 bits, is refused there.
void checkHeteroDeviceFlags(const NodeSettings& s) {
  if (s.device.simulated() && s.model == "hgt" && (s.neighborLoader() || s.clusterLoader()))
    throw UsageError("--model hgt --loader " + s.loader + " --device ipu: HGT's blocks on the simulated IPU take the "
                     "whole typed graph (its rows per type fixed when the program is compiled); its batches train on "
                     "the CPU (--device cpu), and R-GCN's on both");
  if (!s.device.simulated() || !(s.neighborLoader() || s.clusterLoader()) || !s.device.eightBitIo) return;
  throw UsageError("--eight-bit-io with --loader " + s.loader +
                   " --device ipu: a heterogeneous batch's node ids cross the host link as z (its featureless rows' "
                   "embedding rows), which 8-bit I/O would narrow; run without --eight-bit-io, or full-batch (--loader "
                   "full), whose rows carry no ids");
}

// The refusals, each saying what is refused, why, and what exists.
void checkHeteroNodeFlags(const Program& prog, const NodeSettings& s) {
  const HeteroModelFlags* flags = nullptr;
  for (const HeteroModelFlags& f : kHeteroModelFlags)
    if (s.model == f.model) flags = &f;
  if (!flags)
    throw UsageError("--model " + s.model + ": " + s.data + " is a heterogeneous graph, and " + kHeteroOffer +
                     "; the other models take a homogeneous graph (OGB's node-property layout)");
  if (s.neighborLoader() && static_cast<int64_t>(s.fanouts().size()) != s.layers)
    throw UsageError("--num-neighbors " + s.numNeighbors + ": " + std::to_string(s.fanouts().size()) +
                     " hops for --layers " + std::to_string(s.layers) + "; the model takes one hop a layer (more hops "
                     "sample nodes no seed's output reads, fewer leave the outer rows without neighbours): give " +
                     std::to_string(s.layers) + " fan-outs, e.g. " + defaultHeteroFanouts(s.layers));
  checkHeteroDeviceFlags(s);
  if (prog.given("load") || s.training.resume)
    throw UsageError(std::string(prog.given("load") ? "--load" : "--resume") + ": " + kHeteroOffer +
                     " from fresh weights; continuing a saved run is offered for homogeneous graphs");
  std::vector<const char*> unread(std::begin(kUnreadByHetero), std::end(kUnreadByHetero));
  unread.insert(unread.end(), flags->unread.begin(), flags->unread.end());
  for (const char* flag : unread)
    if (prog.given(flag))
      throw UsageError(std::string("--") + flag + ": not read by --model " + s.model + " (" + flags->reads + ")");
  requireAtLeast("--num-bases", static_cast<double>(s.numBases), 0);
  requireAtLeast("--heads", static_cast<double>(s.heads), 1);
  if (s.model == "hgt" && s.norm != "none" && s.norm != "layer")
    throw UsageError("--norm " + s.norm + ": --model hgt takes layer (a LayerNorm per node type after each layer, "
                     "as the HGT authors train ogbn-mag) or none (hgt_dblp.py)");
  if (s.model == "hgt" && s.hidden % s.heads != 0)
    throw UsageError("--hidden " + std::to_string(s.hidden) + " must be a multiple of --heads " +
                     std::to_string(s.heads) + " (HGTConv's heads are hidden / heads wide each)");
}

// HGT's defaults where not given: 2 heads (hgt_dblp.py's num_heads), and no weight decay. Adam's L2 is added to the
// gradient before its per-element normalisation, and a featureless node's embedding row gets a gradient from its
// few papers only, ~1e-7 an element at 100,000 papers against 5e-4 x its value: the L2 then sets the embeddings'
// steps and only pulls them to zero. On the 20,000-paper ogbn-mag-shaped graph, 30 epochs: validation 0.13 with
// node_property's 5e-4, 0.41 without (0.90 at 50). (R-GCN reaches its papers' venues through their authors' other
// papers' features, a path without embeddings, and keeps 5e-4.)
void applyHgtDefaults(const Program& prog, NodeSettings& s) {
  if (!prog.given("heads")) s.heads = 2;
  if (!prog.given("weight-decay")) s.training.weightDecay = 0;
  if (!prog.given("norm")) s.norm = "layer";
}

// The featureless types' input where --featureless is not given: trained embeddings, as OGB's R-GCN example. The
// HGT authors' ogbn-mag preparation (their neighbours' mean features, data/NeighbourMeanFeatures.h) is offered, and
// learnt slower here: HGT with its LayerNorms on the 20,000-paper ogbn-mag-shaped graph, validation 0.82 against 0.97
// from embeddings after 32 epochs.
void applyFeaturelessDefault(NodeSettings& s) {
  if (s.featureless.empty()) s.featureless = "embedding";
  if (s.featureless != "mean" && s.featureless != "embedding")
    throw UsageError("--featureless " + s.featureless + ": embedding or mean");
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
  j["dropout"] = s.model == "hgt" ? 0.0 : s.dropout;  // HGT has none (hgt_dblp.py)
  j["num_bases"] = s.numBases;
  j["evaluation"] = "full";  // validation and test: full-batch over the whole graph, whatever the loader
  if (data.sampler) {
    j["num_neighbors"] = s.fanouts();
    j["batch_size"] = s.batchSize;
    j["fixed_sizes"] = s.fixedSizes;
    j["sampler_index_ms"] = data.samplerMs;
  }
  if (data.clusters) {
    j["clusters"] = s.clusters;
    j["clusters_per_batch"] = s.clustersPerBatch;
    j["edge_cut"] = data.clusters->edgeCut();
    j["partition_ms"] = data.partitionMs;
  }
  if (s.model == "hgt") j["heads"] = s.heads;
  if (s.model == "hgt") j["norm"] = s.norm;
  j["featureless"] = s.featureless;
  addHeteroNodeDataJson(j, data);
  addNodeRunsJson(j, s, runs, profiler);
  return j;
}

// HGT's full-batch steps on the CPU read the dataset's relations (HeteroNodeModel::setWholeGraphRelations), not the
// typed graph's copy of every edge (24 bytes an edge with its type: 137 MB at 100k papers), which would only sit
// beside them for the run.
void dropTypedEdgesUnread(HeteroNodeData& data, const NodeSettings& s) {
  if (s.model != "hgt" || s.neighborLoader() || s.clusterLoader() || s.device.simulated()) return;
  data.graph.edgeIndex = Tensor();
  data.graph.edgeType = Tensor();
}

}  // namespace

void refuseHeteroOnlyFlags(const Program& prog, const NodeSettings& s) {
  const std::string data = s.data.empty() ? "the shipped dataset" : s.data;
  if (s.model == "rgcn" || s.model == "hgt")
    throw UsageError("--model " + s.model + ": " + (s.model == "rgcn" ? "R-GCN" : "HGT") +
                     " classifies the nodes of a heterogeneous graph (OGB's heterogeneous layout, "
                     "raw/triplet-type-list.csv); " + data + " is homogeneous: one node type, one relation");
  for (const char* flag : {"target-type", "num-bases", "featureless"})
    if (prog.given(flag))
      throw UsageError(std::string("--") + flag + ": for --model rgcn or hgt on a heterogeneous --data; " + data +
                       " is homogeneous");
}

int runHeteroNode(const Program& prog, NodeSettings& s, const NodeProgramDefaults& d) {
  // A fan-out per R-GCN layer where --num-neighbors is not given (the homogeneous default is for 3 layers).
  if (s.neighborLoader() && !prog.given("num-neighbors")) s.numNeighbors = defaultHeteroFanouts(s.layers);
  if (s.model == "hgt") applyHgtDefaults(prog, s);
  applyFeaturelessDefault(s);
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
  dropTypedEdgesUnread(data, s);
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
