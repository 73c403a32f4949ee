// NodeFlags: the command line of a node program (app/NodeProgram.h): the data and its features, the model, the
// loader, the runs, with the training (app/TrainingFlags.h) and device (app/DeviceFlags.h) flags; the values
// checked in flag terms and the ones that define a run bound for its checkpoints.
//
//   app::NodeSettings s;
//   app::addNodeFlags(prog, s, defaults);
//   ... s.bind(config);  continue from a checkpoint;  app::checkNodeFlags(s, defaults);
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/DeviceFlags.h"
#include "app/NodeModel.h"
#include "app/NodeProgram.h"
#include "app/Program.h"
#include "app/RunConfig.h"
#include "app/TrainingFlags.h"

namespace gnn::app {

/// The program's settings, as its command line sets them (addNodeFlags).
struct NodeSettings {
  std::string data, model = "gcn", loader = "full", normalizeFeatures = "auto", featureLayout = "auto",
                    keepAdjacency = "auto", addInverseEdges = "auto",
              additionalNodeFiles = "auto";
  int64_t hidden = 16, runs = 1, clusters = 16, clustersPerBatch = 4;
  // --loader neighbor: PyG NeighborLoader's num_neighbors (comma-separated, -1 = all) and batch_size, and how the
  // fixed sizes are chosen (loader: PopTorch Geometric's from_loader with sizeMargin; worst: the bound).
  std::string numNeighbors = "15,10,5", fixedSizes = "loader", inference = "auto", trimToLayer = "on";
  int64_t batchSize = 1024, evalBatchSize = 4096;
  double sizeMargin = 0.05;
  // --presample: each epoch's batches all made before its first step (PresampledLoader), the sampler's reference.
  bool presample = false;
  double dropout = 0.5;
  // PyG's models (NodeProgramDefaults::basicGnn): their arguments.
  bool basicGnn = false;
  int64_t layers = 2, heads = 1, outHeads = -1;
  std::string act = "relu", norm = "none", jk = "none", aggr, convArgs;
  double inputDropout = 0, attnDropout = -1;
  // --model rgcn on a heterogeneous --data: the labelled node type to classify ("" = the only one) and
  // RGCNConv's num_bases (0 = none).
  std::string targetType;
  int64_t numBases = 0;
  // The featureless node types' input: "embedding" (a trained row per node) or "mean" (their featured neighbours'
  // mean, data/NeighbourMeanFeatures.h); "" = embedding.
  std::string featureless;
  bool profile = false;
  bool modelFlag = false;  // --model exists (the program offers more than one model)
  TrainingFlags training;
  DeviceFlags device;

  /// Binds the flags that define a run: its checkpoints keep them, --load and --resume restore them.
  void bind(RunConfig& config);
  bool clusterLoader() const { return loader == "cluster"; }
  bool neighborLoader() const { return loader == "neighbor"; }
  /// Whether evaluation runs a layer at a time (--inference; auto: with --loader neighbor, whose point is to
  /// train in less memory than the whole graph's intermediates take).
  bool layerwiseInference() const;
  /// --additional-node-files: nullopt for auto (OGB's master.csv by the folder's name), else the names.
  std::optional<std::vector<std::string>> nodeFiles() const;
  /// --num-neighbors as fan-outs (checked by checkNodeFlags).
  std::vector<int64_t> fanouts() const;
  /// Whether a Cluster-GCN run keeps the whole graph's adjacency between evaluations (--keep-adjacency on | off |
  /// auto, by the graph's directed edges).
  bool keepsAdjacency(int64_t directedEdges) const;
  /// The model the flags name over data of `inChannels` features and `numClasses` classes.
  NodeModelSpec modelSpec(int64_t inChannels, int64_t numClasses) const;
};

/// --add-inverse-edges's help, for every program that reads a folder in OGB's node-property raw layout.
extern const char* const kAddInverseEdgesHelp;

/// Adds every flag of the program (`d`'s defaults) to `prog`, bound to `s`.
void addNodeFlags(Program& prog, NodeSettings& s, const NodeProgramDefaults& d);
/// Checks the values in flag terms (UsageError naming the flag), before any work; --clusters against the graph's
/// nodes waits for the data.
void checkNodeFlags(const NodeSettings& s, const NodeProgramDefaults& d);

}  // namespace gnn::app
