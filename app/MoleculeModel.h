// MoleculeModel: the graph-level models the molecule programs train (GIN, GCN, D-MPNN, Graphormer slim/base, SchNet),
// built from the flags a checkpoint records, so `predict` rebuilds exactly the model that was trained, reads
// the molecules the way it did (featurisation, SchNet's radius graph) and batches them as it did.
//
//   app::MoleculeModelSpec spec;  spec.model = "gin";  spec.tasks = 2;
//   spec.addTo(flags, {"gin", "gcn"});                  // --model, --layers, ... for these models
//   spec.bind(config);                                  // saved in checkpoints
//   std::unique_ptr<BlockModel> m = app::makeMoleculeModel(spec, seed);
#pragma once
#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/MoleculeData.h"
#include "app/Program.h"
#include "app/RunConfig.h"
#include "data/Dataset.h"
#include "loaders/FixedSizeOptions.h"
#include "models/BlockModel.h"

namespace gnn::app {

struct MoleculeModelSpec {
  std::string model = "gin", pool = "mean";
  int64_t layers = 5, hidden = 300, tasks = 1;
  // Outputs per target: 2 for mean-variance estimation (--task regression-mve: a mean and a raw variance per
  // target, gin, gcn, dmpnn; set from the checkpoint's derived task), 1 otherwise.
  int64_t outputsPerTarget = 1;
  double dropout = 0.0;
  // gin, gcn: --norm auto | layer | batch (models/NormLayer.h; "auto" is resolved by resolveModelDefaults before a
  // model is built) and --virtual-node (OGB's; models/VirtualNode.h).
  std::string norm = "auto";
  /// norm, with "auto" as one model copy has it ("batch"): what a model built from this spec holds.
  std::string resolvedNorm() const { return norm == "auto" ? "batch" : norm; }
  bool virtualNode = false;
  // gine, transformer, gen, nnconv, pna: --residual (each layer's input added to its output, as OGB's and PNA's
  // `residual`).
  bool residual = false;
  // Graphormer (--model slim | base) and GPS++ (--model gps, whose attention reads the shortest paths): max_node,
  // multi_hop_max_dist; Graphormer's PCQM4M scripts' dropouts (GPS++ has its configuration's, models/GpsPlusPlus.h).
  int64_t maxNode = 30, multiHopMaxDist = 5;
  double attentionDropout = 0.1, actDropout = 0.1;
  // SchNet (--model schnet): --layers is the interactions, --hidden the width.
  int64_t filters = 128, gaussians = 50, maxNeighbors = 32;
  double cutoff = 10.0;
  std::string readout = "sum";
  // --radius-graph host (RadiusGraphDataset: the neighbour lists built once per dataset on the host, batches
  // carry them as edges) | device (SchNetOptions::radiusGraphOnDevice: SchNet builds them per micro-batch from
  // the positions, as published IPU runs did; the dataset's graphs carry no edges).
  std::string radiusGraph = "host";
  bool radiusGraphOnDevice() const { return isSchNet() && radiusGraph == "device"; }
  // D-MPNN (--model dmpnn), with Chemprop's flag names and defaults; --hidden is its message width.
  int64_t depth = 3, ffnHiddenDim = 300, ffnNumLayers = 1;
  // aggregation: `chemprop train`'s (v2) default, sum / aggregationNorm (ESOL, 50 epochs, seeds 0-2: test RMSE
  // 0.652 against mean's 0.717, docs/programs.md).
  std::string aggregation = "norm";
  double aggregationNorm = 100.0;
  // Width of the molecule-level features the readout concatenates before the head (gin, gcn, dmpnn; 0: none;
  // app/MoleculeFeatures.h: set from the data, checkpoints keep it under derived.molecule_features.width).
  int64_t graphFeatures = 0;
  // Width of the user's per-atom features (gin, gcn, dmpnn; 0: none; app/AtomFeatures.h: set from the data,
  // checkpoints keep it under derived.atom_features.width).
  int64_t nodeFeatures = 0;
  // SchNet's output constants, fitted on the training split (checkpoints keep them under derived.model_output).
  std::vector<double> scale, shift, atomref;

  bool isGraphormer() const { return model == "slim" || model == "base"; }
  /// GPS++ (--model gps; models/GpsPlusPlus.h): the 44M configuration Graphcore trained on PCQM4Mv2.
  bool isGps() const { return model == "gps"; }
  /// The model reads Graphormer's node-pair blocks (shortest paths; Graphormer, GPS++): batches carry a block of
  /// side --max-node per graph slot.
  bool readsPairBlocks() const { return isGraphormer() || isGps(); }
  /// A named configuration (Graphormer slim or base, GPS++): --layers, --hidden and the like are not the run's.
  bool isFixedConfiguration() const { return isGraphormer() || isGps(); }
  bool isSchNet() const { return model == "schnet"; }
  bool isDmpnn() const { return model == "dmpnn"; }
  /// OGB's message-passing graph models: gin, gcn and PyG's edge-aware layers (gine, transformer, gen;
  /// models/OgbMolConv.h): --layers, --pool, --norm, --virtual-node apply.
  bool isMessagePassing() const { return messagePassingIn({model}); }
  static bool messagePassingIn(const std::vector<std::string>& models);
  /// The head's width: tasks x outputsPerTarget.
  int64_t outputs() const { return tasks * outputsPerTarget; }
  static bool graphormerIn(const std::vector<std::string>& models);
  static bool schnetIn(const std::vector<std::string>& models);
  static bool dmpnnIn(const std::vector<std::string>& models);
  static bool gpsIn(const std::vector<std::string>& models);
  /// Every model makeMoleculeModel builds (what a checkpoint may hold).
  static const std::vector<std::string>& allModels();

  /// --model (one of `models`) and the flags of those models on `flags`.
  void addTo(po::options_description& flags, const std::vector<std::string>& models = {"gin", "gcn"});
  /// Binds the flags addTo added.
  void bind(RunConfig& config);
  /// UsageError for values out of range or a model not in `models`; `prog` (may be null) refuses flags given
  /// for another model (--hidden with a Graphormer configuration).
  void validate(const std::vector<std::string>& models = {"gin", "gcn"}, const Program* prog = nullptr) const;
  /// The featurisation the model reads: Graphormer's encodings, SchNet's positions.
  void requireFeatures(MoleculeDataOptions& data) const;
  /// The dataset as the model reads it: SchNet's radius graph (bonds replaced by the neighbours within the
  /// cutoff; with --radius-graph device, no edges: SchNet builds them), the dataset itself otherwise.
  std::shared_ptr<const Dataset> view(std::shared_ptr<const Dataset> dataset) const;
  /// Output constants (SchNet) <-> derived JSON.
  nlohmann::json outputJson() const;
  void outputFromJson(const nlohmann::json& j);
  /// pna: the in-degree histogram of the training molecules (checkpoints keep it with the output constants).
  std::vector<int64_t> degreeHistogram;
  /// Every model field from a checkpoint's config (keys it lacks keep their defaults) and its derived values.
  static MoleculeModelSpec fromConfig(const nlohmann::json& config);
  /// The model's own sizes for a run's results, beyond "model", "layers" and "hidden" (dmpnn: "layers" is its
  /// depth, and "depth", "aggregation", "aggregation_norm", "ffn_hidden_dim", "ffn_num_layers"); {} for the others.
  nlohmann::json resultJson() const;
  /// "gin 5x300", "dmpnn depth 3 x 300", "graphormer slim", "schnet 6x128".
  std::string describe() const;

  /// Rough bytes, to refuse sizes no machine holds before anything is allocated for them: the model's state
  /// (weights, gradients, Adam's two moments, the best epoch's and a checkpoint's copies), and what one atom,
  /// one directed bond and one graph slot (Graphormer: its node-pair block of side maxNodes) of a batch take
  /// through the model in training (every layer's activations kept) or inference.
  double stateBytes(bool training = true) const;
  double bytesPerNode(bool training = true) const;
  double bytesPerEdge(bool training = true) const;
  double bytesPerGraph(int64_t maxNodes, bool training = true) const;
  /// requireFitsInMemory (MemoryBounds.h) for the widths: --hidden, --filters, --gaussians each alone, then
  /// --layers with them (Graphormer: --max-node). `source`: "" when the values are the command line's, else
  /// the checkpoint's path; `training` false: what applying the model takes.
  void requireFitsInMemory(const std::string& source, bool training = true) const;
  /// Same for a batch of `fixed`'s sizes, named `fields` (atoms, bonds, graph slots, Graphormer's block side;
  /// e.g. {"num-nodes", "num-edges", "num-graphs", "max-node"}, or {"derived.fixed.num_nodes", ...} for a
  /// checkpoint's).
  void requireBatchFitsInMemory(const FixedSizeOptions& fixed, const std::array<std::string, 4>& fields,
                                const std::string& source, bool training = true) const;

 private:
  std::vector<std::string> added_;
};

/// GIN (OGB's baseline: 5 layers, 300 wide, virtual node off) or GCN with OGB's atom and bond encoders;
/// D-MPNN (Chemprop's); Graphormer slim or base (maxNodes 0: blocks of whatever side the batch has); SchNet; GPS++.
std::unique_ptr<BlockModel> makeMoleculeModel(const MoleculeModelSpec& spec, uint64_t seed);
/// For a device that compiles static shapes (the simulated IPU): Graphormer runs on its [G·T] blocks, padding
/// rows and all (what the device computes and its plans count), instead of each graph's real rows
/// (GraphormerOptions::packedRows, the default on this machine; the same evaluation outputs); SchNet multiplies
/// its filters by the cutoff in an op of its own, as the compiled PyTorch Geometric graph does
/// (SchNetOptions::fusedCutoff off; the same bits), and each message sum keeps its own index copies
/// (SchNetOptions::sharedMessagePlan off). Other models have no such choice and are left as they are.
void useStaticShapes(BlockModel& model);

/// Per-element references fitted on the training split for SchNet (--target-scaling atomref): least squares
/// of the target on the element counts (a tiny ridge keeps absent elements at 0), then the per-atom scale and
/// shift of what is left (its std and mean per atom). Fills spec.atomref, spec.scale, spec.shift.
/// spec.degreeHistogram from the molecules at `positions` (PNA's `deg`: entry d counts the atoms with d bonds in).
void fitDegreeHistogram(MoleculeModelSpec& spec, const Dataset& dataset, const std::vector<int64_t>& positions);
void fitAtomReferences(MoleculeModelSpec& spec, const Dataset& dataset, const std::vector<int64_t>& positions);

}  // namespace gnn::app
