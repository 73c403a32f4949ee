// NodeTraining: one seed's run of a node program: its model (app/NodeModel.h) trained by the Trainer loop on the
// whole graph (one step per epoch) or on Cluster-GCN's batches, on the CPU or the simulated IPUs (--device ipu),
// validated on accuracy every epoch, then its results: accuracies, checksums of the weights and the predictions,
// timings, the device's keys.
//
//   app::NodeRunResult r = app::trainNodeRun({prog, settings, config, data, checkpoint, path}, seed);
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/NodeData.h"
#include "app/NodeFlags.h"
#include "app/Program.h"
#include "app/RunConfig.h"
#include "gnn/io/Checkpoint.h"
#include "gnn/io/Fnv1a.h"

namespace gnn::app {

/// What every seed's run of a program shares.
struct NodeRunInputs {
  const Program& prog;
  const NodeSettings& settings;
  RunConfig& config;
  const NodeData& data;
  const Checkpoint* resumeFrom = nullptr;  // --load, --resume: the run to continue (--runs 1)
  std::string resumePath;
};

struct NodeRunResult {
  nlohmann::json summary;  // Trainer::summary()
  /// Test accuracy at the best validation epoch, that validation accuracy, the final weights' test accuracy.
  double testAcc = 0, valAcc = 0, finalTestAcc = 0, paramL2 = 0;
  std::string paramChecksum;
  int64_t bestEpoch = 0;
  std::vector<double> epochMs, inferMs;
  Fnv1a predChecksum;  // the final weights' predictions, in the dataset's own numbering
  nlohmann::json device;  // --device ipu: the device's keys for --json
  /// --loader cluster | neighbor: the batches' fixed sizes, the last epoch's padding report (with the nodes and
  /// edges trimmed) and the time the steps waited for the loader.
  nlohmann::json loader;
  bool layerwiseInference = false;  // evaluation ran a layer at a time (--loader neighbor)
};

/// Trains from `seed` (weights, dropout, the cluster batches' order) to --epochs.
NodeRunResult trainNodeRun(const NodeRunInputs& in, uint64_t seed);

}  // namespace gnn::app
