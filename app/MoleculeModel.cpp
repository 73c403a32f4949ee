#include "app/MoleculeModel.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "app/MemoryBounds.h"
#include "data/EdgelessDataset.h"
#include "data/RadiusGraph.h"
#include "gnn/nn/pool/GlobalPooling.h"
#include "gnn/system/Random.h"
#include "models/Dmpnn.h"
#include "models/GpsPlusPlus.h"
#include "models/Graphormer.h"
#include "models/OgbMolConv.h"
#include "models/OgbMolGCN.h"
#include "models/OgbMolGIN.h"
#include "models/SchNet.h"

namespace gnn::app {

namespace {
std::string joinedModels(const std::vector<std::string>& models, const char* sep = " | ") {
  std::string s;
  for (const auto& m : models) s += (s.empty() ? "" : sep) + m;
  return s;
}
bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }
}  // namespace

bool MoleculeModelSpec::graphormerIn(const std::vector<std::string>& models) {
  return has(models, "slim") || has(models, "base");
}
bool MoleculeModelSpec::schnetIn(const std::vector<std::string>& models) { return has(models, "schnet"); }
bool MoleculeModelSpec::dmpnnIn(const std::vector<std::string>& models) { return has(models, "dmpnn"); }
bool MoleculeModelSpec::messagePassingIn(const std::vector<std::string>& models) {
  for (const char* m : {"gin", "gcn", "gine", "transformer", "gen", "nnconv", "pna"})
    if (has(models, m)) return true;
  return false;
}
bool MoleculeModelSpec::gpsIn(const std::vector<std::string>& models) { return has(models, "gps"); }
const std::vector<std::string>& MoleculeModelSpec::allModels() {
  static const std::vector<std::string> all = {"gin",  "gcn",  "gine", "transformer", "gen",  "nnconv",
                                               "pna",  "dmpnn", "slim", "base",        "schnet", "gps"};
  return all;
}

void MoleculeModelSpec::addTo(po::options_description& flags, const std::vector<std::string>& models) {
  std::string help = joinedModels(models) + " (";
  std::vector<std::string> parts;
  if (has(models, "gin") || has(models, "gcn"))
    parts.push_back("gin, gcn: OGB's atom and bond encoders, global pooling, linear head");
  if (has(models, "gine") || has(models, "transformer") || has(models, "gen"))
    parts.push_back("gine, transformer, gen, nnconv, pna: the same with PyG's GINEConv (OGB's GIN MLP), "
                    "TransformerConv (4 heads), GENConv (DeeperGCN: learnt softmax temperature), NNConv (an edge "
                    "network: hidden 64 unless given, as PyG's QM9 example) or PNAConv (4 aggregators, 3 degree "
                    "scalers from the training molecules' degrees) reading each layer's bond embedding");
  if (dmpnnIn(models))
    parts.push_back("dmpnn: Chemprop's directed message passing on bonds (D-MPNN) with its defaults, an FFN head");
  if (graphormerIn(models))
    parts.push_back("slim: Graphormer 12 layers x 80, 8 heads, FFN 80; base: 12 x 768, 32 heads, FFN 768");
  if (schnetIn(models)) parts.push_back("schnet: SchNet with PyTorch Geometric's defaults");
  if (gpsIn(models))
    parts.push_back("gps: GPS++ (Masters et al. 2022) as trained on PCQM4Mv2, 16 layers of message passing with edge and "
                    "global updates, attention within each molecule and an FFN; nodes 256, edges 128, globals 64, 32 "
                    "heads; 44M weights");
  help += joinedModels(parts, "; ") + ")";
  flags.add_options()("model", value(&model, model), help.c_str());
  added_ = {"model"};
  const bool mp = messagePassingIn(models), dm = dmpnnIn(models);
  if (mp || schnetIn(models)) {
    const std::string layersHelp = std::string(mp ? "message-passing layers" : "") + (mp && schnetIn(models) ? "; " : "") +
                                   (schnetIn(models) ? "schnet: interaction blocks" : "");
    flags.add_options()("layers", value(&layers, layers), layersHelp.c_str());
    added_.push_back("layers");
  }
  if (mp || schnetIn(models) || dm) {
    flags.add_options()("hidden", value(&hidden, hidden), dm ? "hidden width (dmpnn: of the bond and atom states)"
                                                             : "hidden width");
    added_.push_back("hidden");
  }
  if (mp) {
    flags.add_options()("pool", value(&pool, pool), "global pooling: sum | mean | max")(
        "norm", value(&norm, norm),
        "gin, gcn: auto | batch | layer. batch: BatchNorm in GIN's MLP and after each GIN or GCN layer, as OGB's "
        "baselines, with statistics over the batch's real atoms (padding never enters them) and running averages "
        "(momentum 0.1) used in evaluation; layer: LayerNorm there (gcn: no norm), which one model copy can "
        "collapse to a near-constant prediction (docs/programs.md); auto: batch, or layer where each replica or "
        "fp16 copy would keep its own statistics (--replicas > 1, --precision fp16)")(
        "virtual-node", po::bool_switch(&virtualNode),
        "gin, gcn: OGB's virtual node (GNN_node_Virtualnode): a per-molecule state added to every atom before each "
        "layer and updated by an MLP between layers");
    if (std::any_of(OgbMolConv::kinds().begin(), OgbMolConv::kinds().end(),
                    [&](const std::string& k) { return has(models, k); })) {
      flags.add_options()("residual", po::bool_switch(&residual),
                          "gine, transformer, gen, nnconv, pna: add each layer's input to its output (after the "
                          "dropout), as OGB's and PNA's `residual`");
      added_.push_back("residual");
    }
    added_.insert(added_.end(), {"pool", "norm", "virtual-node"});
  }
  if (mp || graphormerIn(models) || dm) {
    std::string dropoutHelp = graphormerIn(models) ? "dropout after each layer (gin, gcn); on embeddings, attention and "
                                                     "FFN outputs (Graphormer; 0 in its PCQM4M scripts)"
                                                   : "dropout after each layer";
    if (dm) dropoutHelp += "; dmpnn: after each update, the atom states and each FFN layer's ReLU, as Chemprop's";
    flags.add_options()("dropout", value(&dropout, dropout), dropoutHelp.c_str());
    added_.push_back("dropout");
  }
  if (dm) {
    flags.add_options()("depth", value(&depth, depth),
                        "dmpnn: message-passing steps, as Chemprop's --depth (depth - 1 updates of the bond states)")(
        "aggregation", value(&aggregation, aggregation),
        "dmpnn: atoms to molecule: norm (sum / --aggregation-norm, `chemprop train`'s default) | mean (Yang et al. "
        "2019, Chemprop v1) | sum; Chemprop v2's choices")(
        "aggregation-norm", po::value(&aggregationNorm)->default_value(aggregationNorm, "100"),
        "dmpnn: the divisor of --aggregation norm")(
        "ffn-hidden-dim", value(&ffnHiddenDim, ffnHiddenDim), "dmpnn: width of the FFN head's hidden layers")(
        "ffn-num-layers", value(&ffnNumLayers, ffnNumLayers),
        "dmpnn: hidden layers of the FFN head (Chemprop v2's meaning; 0: one linear layer)");
    added_.insert(added_.end(), {"depth", "aggregation", "aggregation-norm", "ffn-hidden-dim", "ffn-num-layers"});
  }
  if (graphormerIn(models) || gpsIn(models)) {
    flags.add_options()("max-node", value(&maxNode, maxNode),
                        "Graphormer's max_node (and GPS++'s attention blocks): training batches hold molecules of up "
                        "to this many atoms in blocks of this side (larger ones: --oversize); evaluation fits every "
                        "molecule")(
        "multi-hop-max-dist", value(&multiHopMaxDist, multiHopMaxDist),
        "hops of a shortest path the edge encoding reads (Graphormer's multi_hop_max_dist)");
    added_.insert(added_.end(), {"max-node", "multi-hop-max-dist"});
  }
  if (graphormerIn(models)) {
    flags.add_options()("attention-dropout", value(&attentionDropout, attentionDropout),
                        "dropout on attention weights (Graphormer)")(
        "act-dropout", value(&actDropout, actDropout), "dropout after the FFN's GELU (Graphormer)");
    added_.insert(added_.end(), {"attention-dropout", "act-dropout"});
  }
  if (schnetIn(models)) {
    flags.add_options()("filters", value(&filters, filters), "schnet: filter width of each CFConv")(
        "gaussians", value(&gaussians, gaussians), "schnet: Gaussians of the distance expansion on [0, cutoff]")(
        "cutoff", value(&cutoff, cutoff), "schnet: neighbours within this distance (Angstrom)")(
        "max-neighbors", value(&maxNeighbors, maxNeighbors), "schnet: at most this many (the nearest) per atom")(
        "readout", value(&readout, readout), "schnet: sum | mean of the atoms' contributions")(
        "radius-graph", value(&radiusGraph, radiusGraph),
        "schnet: where the neighbour graph is built: host (once per dataset, before training; batches carry it as "
        "edges, sized by --num-edges) | device (by SchNet per micro-batch from the positions: an N x N distance "
        "matrix and the --max-neighbors nearest of each atom, N x --max-neighbors edges; what published IPU runs "
        "of SchNet did, and what --device ipu then plans; the data carry no edges, so --num-edges can be as small "
        "as --num-graphs)");
    added_.insert(added_.end(), {"filters", "gaussians", "cutoff", "max-neighbors", "readout", "radius-graph"});
  }
}

void MoleculeModelSpec::bind(RunConfig& config) {
  for (const std::string& f : added_) {
    if (f == "model") config.bind(f, &model);
    else if (f == "layers") config.bind(f, &layers);
    else if (f == "hidden") config.bind(f, &hidden);
    else if (f == "pool") config.bind(f, &pool);
    else if (f == "norm") config.bind(f, &norm);
    else if (f == "virtual-node") config.bind(f, &virtualNode);
    else if (f == "residual") config.bind(f, &residual);
    else if (f == "dropout") config.bind(f, &dropout);
    else if (f == "max-node") config.bind(f, &maxNode);
    else if (f == "multi-hop-max-dist") config.bind(f, &multiHopMaxDist);
    else if (f == "attention-dropout") config.bind(f, &attentionDropout);
    else if (f == "act-dropout") config.bind(f, &actDropout);
    else if (f == "filters") config.bind(f, &filters);
    else if (f == "gaussians") config.bind(f, &gaussians);
    else if (f == "cutoff") config.bind(f, &cutoff);
    else if (f == "max-neighbors") config.bind(f, &maxNeighbors);
    else if (f == "readout") config.bind(f, &readout);
    else if (f == "radius-graph") config.bind(f, &radiusGraph);
    else if (f == "depth") config.bind(f, &depth);
    else if (f == "aggregation") config.bind(f, &aggregation);
    else if (f == "aggregation-norm") config.bind(f, &aggregationNorm);
    else if (f == "ffn-hidden-dim") config.bind(f, &ffnHiddenDim);
    else if (f == "ffn-num-layers") config.bind(f, &ffnNumLayers);
  }
}

void MoleculeModelSpec::validate(const std::vector<std::string>& models, const Program* prog) const {
  if (!has(models, model)) throw UsageError("--model '" + model + "': must be one of " + joinedModels(models, ", "));
  if (prog && isFixedConfiguration())
    for (const char* f : {"layers", "hidden", "pool", "norm", "virtual-node"})
      if (prog->given(f))
        throw UsageError(std::string("--") + f + " applies to " + (schnetIn(models) ? "gin, gcn and schnet" : "gin and gcn") +
                         "; " + (isGps() ? "GPS++ (gps)" : "Graphormer's " + model) + " is a fixed configuration");
  if (prog && isGps())
    for (const char* f : {"dropout", "attention-dropout", "act-dropout"})
      if (prog->given(f))
        throw UsageError(std::string("--") + f + ": GPS++ (gps) trains with its configuration's dropouts (nodes 0.3, "
                         "edges 0.0035, globals 0.35, attention 0.3, stochastic depth up to 0.3)");
  if (prog && !readsPairBlocks())
    for (const char* f : {"max-node", "multi-hop-max-dist"})
      if (prog->given(f)) throw UsageError(std::string("--") + f + " applies to Graphormer (--model slim or base) and gps");
  if (prog && !isGraphormer())
    for (const char* f : {"attention-dropout", "act-dropout"})
      if (prog->given(f)) throw UsageError(std::string("--") + f + " applies to Graphormer (--model slim or base)");
  if (prog && !isSchNet())
    for (const char* f : {"filters", "gaussians", "cutoff", "max-neighbors", "readout", "radius-graph"})
      if (prog->given(f)) throw UsageError(std::string("--") + f + " applies to --model schnet");
  if (prog && isDmpnn()) {
    if (prog->given("layers")) throw UsageError("--layers: dmpnn's message-passing steps are --depth (Chemprop's name)");
    if (prog->given("pool")) throw UsageError("--pool: dmpnn's readout is --aggregation mean | sum | norm (Chemprop's name)");
  }
  if (prog && (isDmpnn() || isSchNet()))
    for (const char* f : {"norm", "virtual-node"})
      if (prog->given(f)) throw UsageError(std::string("--") + f + " applies to --model gin and gcn");
  if (prog && prog->given("residual") &&
      std::find(OgbMolConv::kinds().begin(), OgbMolConv::kinds().end(), model) == OgbMolConv::kinds().end())
    throw UsageError("--residual applies to --model gine, transformer, gen, nnconv and pna");
  if (prog && !isDmpnn())
    for (const char* f : {"depth", "aggregation", "aggregation-norm", "ffn-hidden-dim", "ffn-num-layers"})
      if (prog->given(f)) throw UsageError(std::string("--") + f + " applies to --model dmpnn");
  requireOneOf("--pool", pool, {"sum", "mean", "max"});
  requireOneOf("--norm", norm, {"auto", "layer", "batch"});
  requireRange("--layers", static_cast<double>(layers), 1, 1000);
  requireRange("--hidden", static_cast<double>(hidden), 2, 1 << 20);
  requireRange("--dropout", dropout, 0, 0.999);
  requireRange("--max-node", static_cast<double>(maxNode), 1, 4096);
  requireRange("--multi-hop-max-dist", static_cast<double>(multiHopMaxDist), 1, 64);
  requireRange("--attention-dropout", attentionDropout, 0, 0.999);
  requireRange("--act-dropout", actDropout, 0, 0.999);
  requireRange("--filters", static_cast<double>(filters), 1, 1 << 20);
  requireRange("--gaussians", static_cast<double>(gaussians), 2, 10000);
  requireRange("--cutoff", cutoff, 1e-3, 1000);
  requireRange("--max-neighbors", static_cast<double>(maxNeighbors), 1, 100000);
  requireOneOf("--readout", readout, {"sum", "mean"});
  requireOneOf("--radius-graph", radiusGraph, {"host", "device"});
  requireRange("--depth", static_cast<double>(depth), 1, 1000);
  requireOneOf("--aggregation", aggregation, {"mean", "sum", "norm"});
  requireRange("--aggregation-norm", aggregationNorm, 1e-6, 1e12);
  requireRange("--ffn-hidden-dim", static_cast<double>(ffnHiddenDim), 1, 1 << 20);
  requireRange("--ffn-num-layers", static_cast<double>(ffnNumLayers), 0, 100);
  requireRange("molecule features' width", static_cast<double>(graphFeatures), 0, 1 << 24);
  if (outputsPerTarget != 1 && (outputsPerTarget != 2 || isFixedConfiguration() || isSchNet()))
    throw UsageError("--task regression-mve (a mean and a variance per target) applies to --model gin, gcn and dmpnn, "
                     "not " + model);
  if (graphFeatures > 0 && (isFixedConfiguration() || isSchNet()))
    throw UsageError("molecule features apply to --model gin, gcn and dmpnn; " + model + " reads none");
  requireRange("atom features' width", static_cast<double>(nodeFeatures), 0, 1 << 20);
  if (nodeFeatures > 0 && (isFixedConfiguration() || isSchNet()))
    throw UsageError("atom features apply to --model gin, gcn and dmpnn; " + model + " reads none");
}

void MoleculeModelSpec::requireFeatures(MoleculeDataOptions& data) const {
  if (readsPairBlocks()) data.graphormerMaxDist = static_cast<int>(multiHopMaxDist);
  if (isSchNet()) data.positions = true;
}

std::shared_ptr<const Dataset> MoleculeModelSpec::view(std::shared_ptr<const Dataset> dataset) const {
  if (!isSchNet()) return dataset;
  if (radiusGraphOnDevice()) return std::make_shared<EdgelessDataset>(std::move(dataset));
  return std::make_shared<RadiusGraphDataset>(std::move(dataset), cutoff, maxNeighbors);
}

nlohmann::json MoleculeModelSpec::outputJson() const {
  nlohmann::json j = {{"scale", scale}, {"shift", shift}, {"atomref", atomref}};
  if (!degreeHistogram.empty()) j["degree_histogram"] = degreeHistogram;
  return j;
}

void MoleculeModelSpec::outputFromJson(const nlohmann::json& j) {
  scale = j.value("scale", std::vector<double>());
  shift = j.value("shift", std::vector<double>());
  atomref = j.value("atomref", std::vector<double>());
  degreeHistogram = j.value("degree_histogram", std::vector<int64_t>());
}

void fitDegreeHistogram(MoleculeModelSpec& spec, const Dataset& dataset, const std::vector<int64_t>& positions) {
  spec.degreeHistogram.clear();
  for (int64_t i : positions) {
    const Graph g = dataset.get(static_cast<size_t>(i));
    std::vector<int64_t> in(static_cast<size_t>(g.numNodes), 0);
    const int64_t E = g.edgeIndex.dim(1);
    const int64_t* dst = g.edgeIndex.data<int64_t>() + E;
    for (int64_t e = 0; e < E; ++e) ++in[static_cast<size_t>(dst[e])];
    for (int64_t d : in) {
      if (static_cast<size_t>(d) >= spec.degreeHistogram.size()) spec.degreeHistogram.resize(static_cast<size_t>(d) + 1, 0);
      ++spec.degreeHistogram[static_cast<size_t>(d)];
    }
  }
}

MoleculeModelSpec MoleculeModelSpec::fromConfig(const nlohmann::json& c) {
  MoleculeModelSpec s;
  s.model = c.value("model", s.model);
  s.pool = c.value("pool", s.pool);
  // A configuration without "norm" predates the flag: its models had LayerNorm (gcn: none).
  s.norm = c.value("norm", std::string("layer"));
  s.virtualNode = c.value("virtual_node", s.virtualNode);
  s.residual = c.value("residual", s.residual);
  s.layers = c.value("layers", s.layers);
  s.hidden = c.value("hidden", s.hidden);
  s.dropout = c.value("dropout", s.dropout);
  s.maxNode = c.value("max_node", s.maxNode);
  s.multiHopMaxDist = c.value("multi_hop_max_dist", s.multiHopMaxDist);
  s.attentionDropout = c.value("attention_dropout", s.attentionDropout);
  s.actDropout = c.value("act_dropout", s.actDropout);
  s.filters = c.value("filters", s.filters);
  s.gaussians = c.value("gaussians", s.gaussians);
  s.cutoff = c.value("cutoff", s.cutoff);
  s.maxNeighbors = c.value("max_neighbors", s.maxNeighbors);
  s.readout = c.value("readout", s.readout);
  s.radiusGraph = c.value("radius_graph", s.radiusGraph);
  s.depth = c.value("depth", s.depth);
  s.aggregation = c.value("aggregation", std::string("mean"));  // the default before "norm"
  s.aggregationNorm = c.value("aggregation_norm", s.aggregationNorm);
  s.ffnHiddenDim = c.value("ffn_hidden_dim", s.ffnHiddenDim);
  s.ffnNumLayers = c.value("ffn_num_layers", s.ffnNumLayers);
  if (c.contains("derived")) {
    const auto& d = c["derived"];
    if (d.contains("targets")) s.tasks = static_cast<int64_t>(d["targets"].size());
    if (d.contains("task") && d["task"] == "regression-mve") s.outputsPerTarget = 2;
    if (d.contains("model_output")) s.outputFromJson(d["model_output"]);
    if (d.contains("molecule_features") && d["molecule_features"].is_object())
      s.graphFeatures = d["molecule_features"].value("width", int64_t{0});
    if (d.contains("atom_features") && d["atom_features"].is_object())
      s.nodeFeatures = d["atom_features"].value("width", int64_t{0});
  }
  return s;
}

nlohmann::json MoleculeModelSpec::resultJson() const {
  if (!isDmpnn()) return nlohmann::json::object();
  return {{"layers", depth},           {"depth", depth},
          {"aggregation", aggregation}, {"aggregation_norm", aggregationNorm},
          {"ffn_hidden_dim", ffnHiddenDim}, {"ffn_num_layers", ffnNumLayers}};
}

std::string MoleculeModelSpec::describe() const {
  if (isGraphormer()) return "graphormer " + model;
  if (isGps()) return "gps++ " + std::to_string(GpsOptions::pcqm4mv2().layers) + " layers";
  if (isDmpnn()) return "dmpnn depth " + std::to_string(depth) + " x " + std::to_string(hidden);
  return model + " " + std::to_string(layers) + "x" + std::to_string(hidden) + (resolvedNorm() == "batch" ? ", batch norm" : "") +
         (virtualNode ? ", virtual node" : "") + (residual ? ", residual" : "");
}

namespace {
// Training: weights, their gradients, Adam's m and v, the best epoch's copy and the one a checkpoint clones (6
// floats); inference: the weights.
constexpr double kTrainingBytesPerParameter = 6 * 4, kInferenceBytesPerParameter = 4;
// OGB's atom and bond feature vocabularies (173 and 13 rows for each encoder's width), rounded up.
constexpr double kAtomVocabulary = 180, kBondVocabulary = 16;
}  // namespace

double MoleculeModelSpec::stateBytes(bool training) const {
  // t: the head's outputs (2 per target for mean-variance estimation).
  const double h = static_cast<double>(hidden), l = static_cast<double>(layers), t = static_cast<double>(outputs());
  double params = 0;
  if (isGps()) {
    GpsOptions o = GpsOptions::pcqm4mv2();
    o.tasks = outputs();
    params = static_cast<double>(o.parameterCount());
  } else if (isGraphormer()) {
    const GraphormerOptions o = GraphormerOptions::named(model);
    const double gh = static_cast<double>(o.hidden), f = static_cast<double>(o.ffn);
    // Attention (4 H x H), the FFN (2 H x F), norms; the atom, degree and encoding embeddings (~6,000 rows).
    params = static_cast<double>(o.layers) * (4 * gh * gh + 2 * gh * f + 10 * gh) + 6000 * gh + gh * t;
  } else if (isSchNet()) {
    const double f = static_cast<double>(filters), g = static_cast<double>(gaussians);
    // Per interaction: the filter network (G x F, F x F), CFConv's two linears (H x F, F x H), the output H x H.
    params = l * (g * f + f * f + 2 * h * f + h * h + 4 * (f + h)) + SchNetOptions::kElements * h + h * h / 2 + h * t;
  } else if (isDmpnn()) {
    // W_i (one-hot atom and bond categories x H), W_h (H x H, shared by the updates), W_o (atom categories and
    // H, x H), the FFN head.
    const double f = static_cast<double>(ffnHiddenDim), fl = static_cast<double>(ffnNumLayers);
    params = (kAtomVocabulary + kBondVocabulary) * h + h * h + (kAtomVocabulary + h + 1) * h +
             (fl > 0 ? h * f + (fl - 1) * f * f + f * t : h * t) + (fl + 1) * f;
  } else {
    // GIN's MLP per layer (H -> 2H -> H; GCN's H x H is less), its bond encoder and norm; the atom encoder.
    params = l * (4 * h * h + (kBondVocabulary + 8) * h) + kAtomVocabulary * h + h * t;
    // --norm batch: each norm's running mean and variance (buffers, checkpointed like weights).
    if (resolvedNorm() == "batch") params += l * 4 * h;
    // --virtual-node: its embedding row and an H -> 2H -> H MLP with norms between layers (layers - 1 of them).
    if (virtualNode) params += h + std::max(0.0, l - 1) * (4 * h * h + 9 * h);
  }
  // Molecule features: one more input row per feature in the first layer of the head (or FFN).
  const double g = static_cast<double>(graphFeatures);
  params += g * (isDmpnn() ? (ffnNumLayers > 0 ? static_cast<double>(ffnHiddenDim) : t) : t);
  // Atom features: Linear(F, hidden) (gin, gcn), or F more input rows of W_i and W_o (dmpnn).
  params += static_cast<double>(nodeFeatures) * h * (isDmpnn() ? 2 : 1);
  return params * (training ? kTrainingBytesPerParameter : kInferenceBytesPerParameter);
}

double MoleculeModelSpec::bytesPerNode(bool training) const {
  // Training keeps every layer's activations for backward; inference (no tape) about one layer's at a time.
  const double l = training ? static_cast<double>(layers) : 1.0;
  // Inputs: 9 int64 features, batch index, in-degree, mask, 3 float64 coordinates, the atom features.
  const double input = 9 * 8 + 8 + 8 + 1 + 24 + 4 * static_cast<double>(nodeFeatures);
  if (isGraphormer()) return input;  // its activations are per row of a graph's block (bytesPerGraph)
  if (isGps()) {
    // Per layer: the node MLP's input (2 (De + Dn) + Dn + Dg) and hidden layer (4 Dn, three times: product,
    // norm, GELU), the attention's block rows, projections and norms (~12 Dn), the FFN's two F.
    const GpsOptions o = GpsOptions::pcqm4mv2();
    const double n = static_cast<double>(o.nodeDim), e = static_cast<double>(o.edgeDim), g = static_cast<double>(o.globalDim);
    const double gl = training ? static_cast<double>(o.layers) : 1.0;
    return input + gl * (2 * (e + n) + n + g + 3 * 4 * n + 12 * n + 2 * static_cast<double>(o.ffn)) * 4;
  }
  // D-MPNN: its layers' activations are the bonds' (bytesPerEdge); per atom, one sum per update and the readout.
  if (isDmpnn()) return input + ((training ? static_cast<double>(depth) : 1.0) + 4) * static_cast<double>(hidden) * 4;
  // SchNet building its radius graph: each atom's --max-neighbors edges are the batch's, not the loader's.
  const double ownEdges = radiusGraphOnDevice() ? static_cast<double>(maxNeighbors) * bytesPerEdge(training) : 0.0;
  // A layer keeps a few activations of width H (and GIN's 2H) for backward.
  return input + ownEdges + l * 8 * static_cast<double>(hidden) * 4;
}

double MoleculeModelSpec::bytesPerEdge(bool training) const {
  const double l = training ? static_cast<double>(layers) : 1.0;
  // edge_index, 3 int64 bond features, mask; dmpnn: the source atom's features W_i reads
  const double input = 2 * 8 + 3 * 8 + 1 + (isDmpnn() ? 4 * static_cast<double>(nodeFeatures) : 0.0);
  if (isGraphormer()) return input;
  if (isGps()) {
    // Per layer: the two gathered node rows, the edge MLP's input and hidden layer (4 De, three times), the two
    // messages [e' | x] and the updated edge.
    const GpsOptions o = GpsOptions::pcqm4mv2();
    const double n = static_cast<double>(o.nodeDim), e = static_cast<double>(o.edgeDim), g = static_cast<double>(o.globalDim);
    const double gl = training ? static_cast<double>(o.layers) : 1.0;
    return input + gl * (2 * n + (2 * n + e + g) + 3 * 4 * e + 2 * (e + n) + 2 * e) * 4;
  }
  // SchNet: the Gaussian expansion and the filters of every pair; GIN, GCN: the bond embedding and the message.
  if (isSchNet()) return input + l * (static_cast<double>(gaussians) + 3 * static_cast<double>(filters)) * 4;
  // D-MPNN: per update, the gathered sums, the reverse states, the message, W_h m, h0 + W_h m and its ReLU.
  if (isDmpnn()) return input + 12 * 8 + ((training ? static_cast<double>(depth) : 1.0) * 6 + 2) * static_cast<double>(hidden) * 4;
  return input + l * 2 * static_cast<double>(hidden) * 4;
}

double MoleculeModelSpec::bytesPerGraph(int64_t maxNodes, bool training) const {
  // ptr, masks, y, y_mask, the molecule features
  const double perGraph = 8 * 8 + 16 * static_cast<double>(tasks) + 4 * static_cast<double>(graphFeatures);
  if (isGps()) {
    // Per node pair: the distance, and per layer the attention probabilities per head (kept for the backward)
    // and the bias read; the globals' rows.
    const GpsOptions o = GpsOptions::pcqm4mv2();
    const double gl = training ? static_cast<double>(o.layers) : 1.0, m = static_cast<double>(std::max<int64_t>(maxNodes, 1));
    return perGraph + m * m * (8 + gl * static_cast<double>(o.heads) * 2 * 4) + gl * 12 * static_cast<double>(o.globalDim) * 4;
  }
  if (!isGraphormer()) return perGraph;
  const GraphormerOptions o = GraphormerOptions::named(model);
  const double gl = training ? static_cast<double>(o.layers) : 1.0;
  const double m = static_cast<double>(std::max<int64_t>(maxNodes, 1)) + 1;  // the block and its graph token
  // Per node pair: the shortest-path hops' bond features (int64 x 3 each), the distance, and per layer the
  // attention scores, their softmax and dropout mask per head. The blocks' rows (padded atoms) take the
  // activations of an atom.
  const double pair = static_cast<double>(multiHopMaxDist) * 3 * 8 + 8 +
                      gl * static_cast<double>(o.heads) * 3 * 4;
  const double slotActivations =
      gl * (8 * static_cast<double>(o.hidden) + 2 * static_cast<double>(o.ffn)) * 4;
  return perGraph + m * slotActivations + m * m * pair;
}

void MoleculeModelSpec::requireFitsInMemory(const std::string& source, bool training) const {
  if (readsPairBlocks()) {
    // A fixed configuration: its widths are not the run's to choose, the side of its node-pair blocks is (a
    // batch holds at least one molecule's block and the padding graph's).
    app::requireFitsInMemory("max-node", static_cast<double>(maxNode), 2 * bytesPerGraph(maxNode, training), source,
                             "the node-pair blocks of a batch's graph slots, in " + describe());
    return;
  }
  const std::string what = training ? "the weights with their gradients and optimizer state" : "the weights";
  // Each width alone (one layer, the other widths at their least), so the message names the one at fault.
  MoleculeModelSpec one = *this;
  one.layers = 1;
  one.filters = 1;
  one.gaussians = 2;
  one.ffnHiddenDim = 1;
  one.ffnNumLayers = std::min<int64_t>(ffnNumLayers, 1);
  app::requireFitsInMemory("hidden", static_cast<double>(hidden), one.stateBytes(training), source, what);
  if (isSchNet()) {
    one.hidden = 2;
    one.filters = filters;
    app::requireFitsInMemory("filters", static_cast<double>(filters), one.stateBytes(training), source, what);
    one.filters = 1;
    one.gaussians = gaussians;
    app::requireFitsInMemory("gaussians", static_cast<double>(gaussians), one.stateBytes(training), source, what);
  }
  if (isDmpnn()) {
    one.hidden = 2;
    one.ffnHiddenDim = ffnHiddenDim;
    app::requireFitsInMemory("ffn-hidden-dim", static_cast<double>(ffnHiddenDim), one.stateBytes(training), source,
                             what);
    app::requireFitsInMemory("ffn-num-layers", static_cast<double>(ffnNumLayers), stateBytes(training), source,
                             what + " of " + describe());
    return;
  }
  app::requireFitsInMemory("layers", static_cast<double>(layers), stateBytes(training), source,
                           what + " of " + describe());
}

void MoleculeModelSpec::requireBatchFitsInMemory(const FixedSizeOptions& fixed, const std::array<std::string, 4>& fields,
                                                 const std::string& source, bool training) const {
  const std::string what =
      std::string("a batch's inputs and ") + (training ? "training" : "inference") + " activations through " + describe();
  if (readsPairBlocks())
    app::requireFitsInMemory(fields[3], static_cast<double>(fixed.maxNodesPerGraph),
                             2 * bytesPerGraph(fixed.maxNodesPerGraph, training), source, what);
  app::requireFitsInMemory(fields[0], static_cast<double>(fixed.numNodes),
                           static_cast<double>(fixed.numNodes) * bytesPerNode(training), source, what);
  app::requireFitsInMemory(fields[1], static_cast<double>(fixed.numEdges),
                           static_cast<double>(fixed.numEdges) * bytesPerEdge(training), source, what);
  app::requireFitsInMemory(fields[2], static_cast<double>(fixed.numGraphs),
                           static_cast<double>(fixed.numGraphs) * bytesPerGraph(fixed.maxNodesPerGraph, training),
                           source, what);
}

void useStaticShapes(BlockModel& model) {
  if (auto* g = dynamic_cast<Graphormer*>(&model)) g->setPackedRows(false);
  if (auto* s = dynamic_cast<SchNet*>(&model)) {
    s->setFusedCutoff(false);
    s->setSharedMessagePlan(false);
  }
}

std::unique_ptr<BlockModel> makeMoleculeModel(const MoleculeModelSpec& spec, uint64_t seed) {
  spec.validate(MoleculeModelSpec::allModels());
  Generator gen(seed);
  if (spec.isDmpnn()) {
    DmpnnOptions o;
    o.hidden = spec.hidden;
    o.depth = spec.depth;
    o.tasks = spec.outputs();
    o.ffnHidden = spec.ffnHiddenDim;
    o.ffnLayers = spec.ffnNumLayers;
    o.dropout = spec.dropout;
    o.aggregation = spec.aggregation;
    o.aggregationNorm = spec.aggregationNorm;
    o.graphFeatures = spec.graphFeatures;
    o.nodeFeatures = spec.nodeFeatures;
    return std::make_unique<Dmpnn>(o, gen);
  }
  if (spec.isGraphormer()) {
    GraphormerOptions o = GraphormerOptions::named(spec.model);
    o.tasks = spec.tasks;
    o.maxNodes = 0;  // training batches have blocks of side --max-node, evaluation ones may be larger
    o.multiHopMaxDist = spec.multiHopMaxDist;
    o.dropout = spec.dropout;
    o.attentionDropout = spec.attentionDropout;
    o.activationDropout = spec.actDropout;
    return std::make_unique<Graphormer>(o, gen);
  }
  if (spec.isGps()) {
    GpsOptions o = GpsOptions::pcqm4mv2();
    o.tasks = spec.outputs();
    return std::make_unique<GpsPlusPlus>(o, gen);
  }
  if (spec.isSchNet()) {
    SchNetOptions o;
    o.hidden = spec.hidden;
    o.filters = spec.filters;
    o.interactions = spec.layers;
    o.gaussians = spec.gaussians;
    o.cutoff = spec.cutoff;
    o.maxNeighbors = spec.maxNeighbors;
    o.readout = spec.readout;
    o.radiusGraphOnDevice = spec.radiusGraphOnDevice();
    o.tasks = spec.tasks;
    o.scale = spec.scale;
    o.shift = spec.shift;
    o.atomref = spec.atomref;
    return std::make_unique<SchNet>(o, gen);
  }
  GraphModelOptions o;
  o.layers = spec.layers;
  o.hidden = spec.hidden;
  o.tasks = spec.outputs();
  o.dropout = spec.dropout;
  o.pool = parsePoolKind(spec.pool);
  o.norm = parseNormKind(spec.resolvedNorm());
  o.virtualNode = spec.virtualNode;
  o.residual = spec.residual;
  o.graphFeatures = spec.graphFeatures;
  o.nodeFeatures = spec.nodeFeatures;
  o.degreeHistogram = spec.degreeHistogram;
  if (spec.model == "gcn") return std::make_unique<OgbMolGCN>(o, gen);
  if (spec.model != "gin") return std::make_unique<OgbMolConv>(spec.model, o, gen);  // gine, transformer, gen, ...
  return std::make_unique<OgbMolGIN>(o, gen);
}

void fitAtomReferences(MoleculeModelSpec& spec, const Dataset& dataset, const std::vector<int64_t>& positions) {
  const int64_t K = SchNetOptions::kElements, T = spec.tasks;
  spec.atomref.assign(static_cast<size_t>(K * T), 0.0);
  spec.scale.assign(static_cast<size_t>(T), 1.0);
  spec.shift.assign(static_cast<size_t>(T), 0.0);
  // Element counts per molecule (z = OGB feature 0 + 1).
  std::vector<std::vector<double>> counts;
  std::vector<Graph> graphs;
  for (int64_t i : positions) {
    Graph g = dataset.get(static_cast<size_t>(i));
    std::vector<double> c(static_cast<size_t>(K), 0.0);
    const int64_t f = g.x.dim(1);
    for (int64_t a = 0; a < g.numNodes; ++a) {
      const int64_t z = g.z.defined() ? g.z.data<int64_t>()[a] : g.x.data<int64_t>()[a * f] + 1;
      if (z >= 1 && z < K) c[static_cast<size_t>(z)] += 1;
    }
    counts.push_back(std::move(c));
    graphs.push_back(std::move(g));
  }
  for (int64_t t = 0; t < T; ++t) {
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(K, K);
    Eigen::VectorXd b = Eigen::VectorXd::Zero(K);
    std::vector<size_t> used;
    for (size_t m = 0; m < graphs.size(); ++m) {
      const Graph& g = graphs[m];
      if (g.yMask.defined() && g.yMask.at(t) == 0) continue;
      const double y = g.y.at(t);
      if (!std::isfinite(y)) continue;
      Eigen::Map<const Eigen::VectorXd> c(counts[m].data(), K);
      A += c * c.transpose();
      b += y * c;
      used.push_back(m);
    }
    if (used.empty()) continue;
    // Ridge 1e-8 of the largest diagonal entry: elements absent from the training split get reference 0.
    A.diagonal().array() += 1e-8 * std::max(1.0, A.diagonal().maxCoeff());
    Eigen::VectorXd ref = A.ldlt().solve(b);
    for (int64_t z = 0; z < K; ++z) spec.atomref[static_cast<size_t>(z * T + t)] = ref(z);
    // What remains per atom: its mean and spread set the model's output shift and scale.
    double s = 0, s2 = 0;
    for (size_t m : used) {
      Eigen::Map<const Eigen::VectorXd> c(counts[m].data(), K);
      const double atoms = std::max(1.0, c.sum());
      const double r = (graphs[m].y.at(t) - c.dot(ref)) / atoms;
      s += r;
      s2 += r * r;
    }
    const double n = static_cast<double>(used.size()), mean = s / n, var = std::max(0.0, s2 / n - mean * mean);
    spec.shift[static_cast<size_t>(t)] = mean;
    spec.scale[static_cast<size_t>(t)] = var > 0 ? std::sqrt(var) : 1.0;
  }
}

}  // namespace gnn::app
