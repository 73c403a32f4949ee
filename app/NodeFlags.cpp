#include "app/NodeFlags.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "app/NodeModel.h"
#include "app/ShippedData.h"
#include "gnn/nn/models/BasicGNN.h"

namespace gnn::app {

namespace {

std::string joined(const std::vector<std::string>& names, const char* sep) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : sep) + n;
  return s;
}

const char* const kResultsHelp =
    "Results go to stdout (a summary line, or one JSON object with --json); progress goes to stderr. The JSON\n"
    "holds test_acc_mean/std (at the best validation epoch), val_acc_mean, epoch_ms_median, infer_ms_median,\n"
    "param_l2, param_checksum and per run test_acc, best_epoch, final_loss, loss_checksum and predictions_checksum.";

// --keep-adjacency auto: from this many directed edges the whole graph's normalised adjacency is kept between
// evaluations. Rebuilding it is a counting sort of the edges by target, whose scattered writes leave the caches as
// the graph grows: 0.19 s per evaluation at 12.2M edges (245k nodes), 7 s at ogbn-products' 122M, where it was
// half of each evaluation. Keeping it costs about 8 bytes per edge for the whole run (110 MB at 12.2M edges,
// where the run's peak is otherwise 0.88 GB).
constexpr int64_t kKeepAdjacencyFromEdges = int64_t{32} << 20;

}  // namespace

const char* const kAddInverseEdgesHelp =
    "also read each edge (s,d) of raw/edge.csv as (d,s), right after it, as OGB's loader does for its undirected "
    "sets, which store each edge once: on | off | auto (OGB's add_inverse_edge from its master.csv for a folder "
    "named after an OGB dataset: on for ogbn-products and ogbn-proteins, off for ogbn-arxiv and ogbn-papers100M "
    "(or ogbn_products etc.); off for any other folder)";

bool NodeSettings::keepsAdjacency(int64_t directedEdges) const {
  return keepAdjacency == "on" || (keepAdjacency == "auto" && directedEdges >= kKeepAdjacencyFromEdges);
}

NodeModelSpec NodeSettings::modelSpec(int64_t inChannels, int64_t numClasses) const {
  NodeModelSpec spec;
  spec.name = model;
  spec.inChannels = inChannels;
  spec.hidden = hidden;
  spec.numClasses = numClasses;
  spec.dropout = dropout;
  spec.basicGnn = basicGnn;
  spec.layers = layers;
  spec.heads = heads;
  spec.outHeads = outHeads;
  spec.act = act;
  spec.norm = norm;
  spec.jk = jk;
  spec.aggr = aggr;
  spec.convArgs = convArgs;
  spec.inputDropout = inputDropout;
  spec.attnDropout = attnDropout;
  return spec;
}

std::vector<int64_t> NodeSettings::fanouts() const {
  std::vector<int64_t> out;
  std::string item;
  for (size_t i = 0; i <= numNeighbors.size(); ++i) {
    if (i < numNeighbors.size() && numNeighbors[i] != ',') {
      item += numNeighbors[i];
      continue;
    }
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v < -1)
      throw UsageError("--num-neighbors " + numNeighbors +
                       ": give one count per hop, comma-separated (-1 = every neighbour), e.g. 15,10,5");
    out.push_back(v);
    item.clear();
  }
  return out;
}

std::optional<std::vector<std::string>> NodeSettings::nodeFiles() const {
  if (additionalNodeFiles == "auto") return std::nullopt;
  std::vector<std::string> names;
  if (additionalNodeFiles == "none") return names;
  for (size_t b = 0; b <= additionalNodeFiles.size();) {
    const size_t e = std::min(additionalNodeFiles.find(',', b), additionalNodeFiles.size());
    names.push_back(additionalNodeFiles.substr(b, e - b));
    if (names.back().size() <= 5 || names.back().compare(0, 5, "node_") != 0)
      throw UsageError("--additional-node-files " + additionalNodeFiles + ": '" + names.back() +
                       "' is not an OGB node file name (node_<what>, read from raw/<name>.csv.gz, e.g. node_year)");
    b = e + 1;
  }
  return names;
}

bool NodeSettings::layerwiseInference() const {
  return inference == "layerwise" || (inference == "auto" && neighborLoader());
}

void NodeSettings::bind(RunConfig& config) {
  config.bind("hidden", &hidden);
  config.bind("dropout", &dropout);
  config.bind("loader", &loader);
  config.bind("clusters", &clusters);
  config.bind("clusters-per-batch", &clustersPerBatch);
  config.bind("num-neighbors", &numNeighbors);
  config.bind("batch-size", &batchSize);
  config.bind("normalize-features", &normalizeFeatures);
  config.bind("add-inverse-edges", &addInverseEdges);
  config.bind("seed", &training.seed);
  if (modelFlag) config.bind("model", &model);
  if (basicGnn) {
    config.bind("layers", &layers);
    config.bind("heads", &heads);
    config.bind("out-heads", &outHeads);
    config.bind("act", &act);
    config.bind("norm", &norm);
    config.bind("jk", &jk);
    config.bind("aggr", &aggr);
    config.bind("conv-args", &convArgs);
    config.bind("input-dropout", &inputDropout);
    config.bind("attn-dropout", &attnDropout);
  }
}

namespace {
void addBasicGnnFlags(Program& prog, NodeSettings& s) {
  prog.flags().add_options()("layers", value(&s.layers, int64_t{2}), "message-passing layers (PyG's num_layers)")(
      "heads", value(&s.heads, int64_t{1}),
      "gat, gatv2, transformer, hgt: attention heads; --hidden is their total width (hidden / heads each), as "
      "PyG's GAT (default 1; hgt: 2, as PyG's hgt_dblp.py)")(
      "out-heads", value(&s.outHeads, int64_t{-1}),
      "gat, gatv2: heads of the output layer, averaged (default: --heads, as PyG's GAT; the GAT paper's Cora "
      "setup has 1)")(
      "act", value(&s.act, "relu"), "activation between layers: relu | elu | leaky_relu | gelu | tanh | sigmoid")(
      "input-dropout", value(&s.inputDropout, 0.0), "dropout on the input features (the GAT paper's 0.6)")(
      "attn-dropout", value(&s.attnDropout, -1.0),
      "gat, gatv2: dropout on the attention coefficients (default: --dropout, as PyG's GAT)")(
      "norm", value(&s.norm, "none"),
      "normalisation after each hidden layer: none | batch | layer | graph | instance (--model hgt: layer, a "
      "LayerNorm per node type after each layer as the HGT authors train ogbn-mag, its default, or none)")(
      "jk", value(&s.jk, "none"), "jumping knowledge: none | last | cat | max | lstm (then a final linear layer)")(
      "aggr", value(&s.aggr, ""),
      "sage: mean | max | sum (default mean); edgecnn: max | mean | sum (default max); pna: aggregators, "
      "comma-separated (default mean,min,max,std); a stacked convolution's aggr (PyG's name: add, mean, max, "
      "softmax, ...) where the layer has one")(
      "conv-args", value(&s.convArgs, ""),
      "the stacked convolutions (every --model but gcn, sage, gin, gat, gatv2, pna, edgecnn): the layer's PyG "
      "keyword arguments as JSON over the defaults, e.g. --model cheb --conv-args '{\"K\": 3}' (defaults: appnp "
      "K 10 alpha 0.1, cheb K 2, gcn2 alpha 0.1 theta 0.5, gatedgraph num_layers 3, dynamicedge k 20; PyG's for "
      "the rest). Layers that keep their width (appnp, fa, gatedgraph, gcn2) sit between input and output linear "
      "layers");
  prog.flags().add_options()(
      "target-type", value(&s.targetType, ""),
      "--model rgcn or hgt on a heterogeneous --data: the node type to classify, one with labels (default: the only "
      "labelled type; needed when there are several)")(
      "num-bases", value(&s.numBases, int64_t{0}),
      "--model rgcn: RGCNConv's basis decomposition, each relation's weight a mix of this many shared bases "
      "(PyG's num_bases; default 0: a full weight per relation)")(
      "featureless", value(&s.featureless, ""),
      "--model rgcn or hgt on a heterogeneous --data: the input of the node types without features: embedding (a "
      "trained row per node, as OGB's R-GCN example) | mean (each node's featured neighbours' mean features, as "
      "the HGT authors prepare ogbn-mag; a type two hops away takes its neighbours' means). Default embedding");
}
}  // namespace


void addNodeFlags(Program& prog, NodeSettings& s, const NodeProgramDefaults& d) {
  s.model = d.model;
  s.modelFlag = d.models.size() > 1;
  const std::string dataHelp =
      "dataset folder in OGB's node-property raw layout (default: the shipped " + shippedDataLabel(d.data) + ")" +
      std::string(d.basicGnn ? "; or in OGB's heterogeneous layout (ogbn-mag's, raw/triplet-type-list.csv), "
                               "trained with --model rgcn or hgt (full batch, --loader neighbor or cluster; on the CPU "
                               "or the simulated IPU)"
                             : "");
  prog.flags().add_options()("data", po::value(&s.data)->value_name("DIR"), dataHelp.c_str());
  if (s.modelFlag) {
    const std::string modelHelp = "the model: " + joined(d.models, " | ");
    prog.flags().add_options()("model", value(&s.model, d.model), modelHelp.c_str());
  }
  s.basicGnn = d.basicGnn;
  if (d.basicGnn) addBasicGnnFlags(prog, s);
  prog.flags().add_options()("hidden", value(&s.hidden, d.hidden), "hidden channels")(
      "dropout", value(&s.dropout, d.dropout),
      d.basicGnn ? "dropout between layers (PyG's dropout; also GAT's attention unless --attn-dropout)"
                 : "dropout probability (input and hidden layer)")(
      "runs", value(&s.runs, int64_t{1}), "independent runs with seeds seed .. seed+runs-1")(
      "loader", value(&s.loader, "full"),
      "full (one full-graph step per epoch) | cluster (Cluster-GCN) | neighbor (GraphSAGE's neighbour sampling, "
      "PopTorch Geometric's FixedSizeNeighborLoader; then --layers 3, --hidden 256 and --lr 0.003 unless given, "
      "OGB's ogbn-products setup). On a heterogeneous --data, --model rgcn and hgt take full | neighbor (batches of "
      "--batch-size training nodes of the target type, --num-neighbors for every edge type, by default a fan-out "
      "per layer: 15,10) | cluster (--clusters METIS clusters of all nodes of all types, --clusters-per-batch a "
      "batch with the typed edges between them, as OGB's ogbn-mag cluster_gcn.py); the loss over the batch's "
      "training nodes of the target type; the models' defaults kept; validation and test full-batch over the "
      "whole graph)")(
      "num-neighbors", value(&s.numNeighbors, "15,10,5"),
      "--loader neighbor: neighbours sampled per node at each hop, comma-separated (-1 = all; PyG's num_neighbors)")(
      "batch-size", value(&s.batchSize, int64_t{1024}), "--loader neighbor: seed nodes per batch")(
      "inference", value(&s.inference, "auto"),
      "evaluation: full (the whole graph at once) | layerwise (a layer at a time over batches of --eval-batch-size "
      "nodes with all their neighbours, PyG's BasicGNN.inference: memory bounded by two [nodes, hidden] matrices "
      "and one batch; gcn and graph-wise norms need the whole graph and take full) | auto (layerwise with --loader "
      "neighbor: at 245k nodes and hidden 256, 1.5 GB peak against 2.1, evaluation 2.5x slower)")(
      "eval-batch-size", value(&s.evalBatchSize, int64_t{4096}), "--inference layerwise: nodes per batch")(
      "fixed-sizes", value(&s.fixedSizes, "loader"),
      "--loader neighbor: the batches' node and edge counts: loader (the largest batch of the first epoch plus "
      "--size-margin, as PopTorch Geometric's FixedSizeOptions.from_loader; larger batches are trimmed from the "
      "last hop, counted in the JSON) | worst (room for any batch: batch-size x fan-out products)")(
      "size-margin", value(&s.sizeMargin, 0.05), "--loader neighbor --fixed-sizes loader: room above the largest batch")(
      "trim-to-layer", value(&s.trimToLayer, "on"),
      "--loader neighbor on the CPU: on (each layer over only the nodes and edges the seeds need, PyG's "
      "trim_to_layer: the seeds' outputs are the same function, graphsage aggregates into the needed rows alone) "
      "| off (every layer over the whole padded batch, as the simulated IPU's static shapes run it)")(
      "presample", po::bool_switch(&s.presample),
      "--loader neighbor|cluster: make each epoch's batches before its first step instead of on the loader's "
      "thread beside the steps (the same batches and bits; epoch_ms then counts the steps only and "
      "last_epoch_presample_ms the making): the reference the sampler's overlap is measured against. Holds a whole "
      "epoch's batches in memory")(
      "clusters", value(&s.clusters, int64_t{16}), "--loader cluster: METIS clusters")(
      "clusters-per-batch", value(&s.clustersPerBatch, int64_t{4}),
      "--loader cluster: clusters merged per fixed-size batch")(
      "normalize-features", value(&s.normalizeFeatures, "auto"),
      "none | row (PyG's NormalizeFeatures: rows sum to 1) | standard (per feature, the training nodes' mean and "
      "std) | auto (row when every feature is >= 0, else standard)")(
      "add-inverse-edges", value(&s.addInverseEdges, "auto"), kAddInverseEdgesHelp)(
      "additional-node-files", value(&s.additionalNodeFiles, "auto"),
      "OGB's additional node files to read (raw/<name>.csv.gz, integer rows, one per node; the JSON's node_files "
      "says their range): comma-separated names such as node_year | none | auto (OGB's master.csv for a folder "
      "named after an OGB dataset: node_year for ogbn-arxiv and ogbn-papers100M, node_species for ogbn-proteins; "
      "none for any other folder)")(
      "feature-layout", value(&s.featureLayout, "auto"),
      "full-graph steps and evaluation: sparse | dense feature matrix | auto (sparse below "
      "OgbNodeDataset::kSparseFeatureDensity non-zeros, as bag-of-words features, else dense)")(
      "keep-adjacency", value(&s.keepAdjacency, "auto"),
      "--loader cluster: keep the whole graph's normalised adjacency between evaluations (about 8 bytes per "
      "directed edge) instead of rebuilding it for each: on | off | auto (on from 32M directed edges, where a "
      "rebuild takes seconds). The results are the same bits either way")(
      "profile", po::bool_switch(&s.profile),
      "per-op table of all runs on stderr (op, pass, calls, ms, GFLOP, GFLOP/s, share); rows under \"profile\" "
      "with --json");
  s.training.addTo(prog, d.training);
  s.device.addTo(prog);
  prog.setEpilog(d.epilog.empty() ? std::string(kResultsHelp) : d.epilog + "\n\n" + kResultsHelp);
}

void checkNodeFlags(const NodeSettings& s, const NodeProgramDefaults& d) {
  requireAtLeast("--runs", static_cast<double>(s.runs), 1);
  requireAtLeast("--hidden", static_cast<double>(s.hidden), 1);
  requireRange("--dropout", s.dropout, 0, 0.999);
  requireNodeModel(s.model, d.models);
  requireOneOf("--loader", s.loader, {"full", "cluster", "neighbor"});
  requireOneOf("--inference", s.inference, {"auto", "full", "layerwise"});
  requireAtLeast("--eval-batch-size", static_cast<double>(s.evalBatchSize), 1);
  if (s.neighborLoader()) {
    (void)s.fanouts();  // throws naming the flag
    requireAtLeast("--batch-size", static_cast<double>(s.batchSize), 1);
    requireOneOf("--trim-to-layer", s.trimToLayer, {"on", "off"});
    requireOneOf("--fixed-sizes", s.fixedSizes, {"loader", "worst"});
    requireRange("--size-margin", s.sizeMargin, 0, 10);
  }
  if (s.presample && s.loader == "full")
    throw UsageError("--presample needs --loader neighbor or cluster (full-batch steps have no batches to make)");
  requireOneOf("--normalize-features", s.normalizeFeatures, {"none", "row", "standard", "auto"});
  requireOneOf("--add-inverse-edges", s.addInverseEdges, {"auto", "on", "off"});
  (void)s.nodeFiles();  // throws naming the flag
  requireOneOf("--feature-layout", s.featureLayout, {"auto", "sparse", "dense"});
  requireOneOf("--keep-adjacency", s.keepAdjacency, {"auto", "on", "off"});
  requireAtLeast("--clusters", static_cast<double>(s.clusters), 1);
  requireRange("--clusters-per-batch", static_cast<double>(s.clustersPerBatch), 1, static_cast<double>(s.clusters));
  if (s.basicGnn) {
    requireAtLeast("--layers", static_cast<double>(s.layers), 1);
    requireAtLeast("--heads", static_cast<double>(s.heads), 1);
    requireRange("--input-dropout", s.inputDropout, 0, 0.999);
    if (s.attnDropout >= 0) requireRange("--attn-dropout", s.attnDropout, 0, 0.999);
    requireOneOf("--act", s.act, {"relu", "elu", "leaky_relu", "gelu", "tanh", "sigmoid"});
    requireOneOf("--norm", s.norm, {"none", "batch", "layer", "graph", "instance"});
    requireOneOf("--jk", s.jk, {"none", "last", "cat", "max", "lstm"});
    if ((s.model == "gat" || s.model == "gatv2" || s.model == "transformer") && s.hidden % s.heads != 0)
      throw UsageError("--hidden " + std::to_string(s.hidden) + " must be a multiple of --heads " +
                       std::to_string(s.heads) + " (each head is hidden / heads wide, as PyG's GAT)");
    // rgcn and hgt are no BasicGNN (app/HeteroNodeModel.h): their flags are checked with their heterogeneous data.
    const std::string cls = s.model == "rgcn" || s.model == "hgt"
                                ? ""
                                : s.modelSpec(1, 1).basicGnnSpec()["class"].get<std::string>();
    if (!cls.empty() && s.featureLayout == "sparse" && !BasicGNN::classTakesSparseInput(cls))
      throw UsageError("--feature-layout sparse: --model " + s.model +
                       " takes dense features (sparse ones go to gcn, sage, gin, gat, gatv2)");
    if (s.clusterLoader() && s.model == "pna")
      throw UsageError("--loader cluster with --model pna: PNA's degree histogram is the whole graph's");
  }
  const TrainingFlags& tf = s.training;
  if (s.runs > 1 && (!tf.save.empty() || !tf.load.empty() || !tf.checkpointDir.empty()))
    throw UsageError("--save, --load, --checkpoint-dir and --resume work with --runs 1");
}

}  // namespace gnn::app
