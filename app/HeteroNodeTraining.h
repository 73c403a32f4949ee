// HeteroNodeTraining: one seed's run of node_property on a heterogeneous graph: its model
// (app/HeteroNodeModel.h) trained on the CPU by the Trainer loop, full-batch (one step per epoch over every node
// type and relation) or with --loader neighbor on sampled batches (app/HeteroNodeBatches.h: a step per batch, the
// loss over its seeds), the loss and the accuracies over the target type's split only, evaluated full-batch over
// the whole graph either way (exact, and already the model's forward); then its results as a
// homogeneous run's (app/NodeTraining.h): accuracies, checksums of the weights and of the target type's
// predictions, timings.
//
//   app::NodeRunResult r = app::trainHeteroNodeRun({prog, settings, config, data}, seed);
#pragma once
#include <cstdint>

#include "app/HeteroNodeData.h"
#include "app/HeteroNodeModel.h"
#include "app/NodeFlags.h"
#include "app/NodeTraining.h"
#include "app/Program.h"
#include "app/RunConfig.h"

namespace gnn::app {

/// What every seed's run shares.
struct HeteroNodeRunInputs {
  const Program& prog;
  const NodeSettings& settings;
  RunConfig& config;
  const HeteroNodeData& data;
};

/// The model spec the flags name over `data` (--model, --hidden, --layers, --dropout, --num-bases, --heads).
HeteroNodeModelSpec heteroModelSpec(const NodeSettings& s, const HeteroNodeData& data);
/// Trains from `seed` (weights and embeddings, dropout) to --epochs.
NodeRunResult trainHeteroNodeRun(const HeteroNodeRunInputs& in, uint64_t seed);

}  // namespace gnn::app
