#include "gnn/nn/models/BasicGNN.h"

#include <algorithm>
#include <stdexcept>

#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/conv/ConvRegistry.h"
#include "gnn/nn/conv/EdgeConv.h"
#include "gnn/nn/conv/GATConv.h"
#include "gnn/nn/conv/GATv2Conv.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/GINConv.h"
#include "gnn/nn/conv/PNAConv.h"
#include "gnn/nn/conv/SAGEConv.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {

namespace {

using json = nlohmann::json;

// BasicGNN's own keywords; every other one is the convolution's (PyG's **kwargs).
const char* const kModelKeys[] = {"in_channels", "hidden_channels", "num_layers", "out_channels", "dropout", "act",
                                  "act_first",   "act_kwargs",      "norm",       "norm_kwargs",  "jk"};

bool isModelKey(const std::string& k) {
  return std::find(std::begin(kModelKeys), std::end(kModelKeys), k) != std::end(kModelKeys);
}

int64_t positive(const json& v, const char* key) {
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    throw std::invalid_argument(std::string("BasicGNN: ") + key + " must be a positive integer, got " + v.dump() +
                                (v.is_array() ? " (bipartite (source, target) sizes are not supported)" : ""));
  return v.get<int64_t>();
}

}  // namespace

BasicGNNOptions BasicGNNOptions::fromPyG(const json& args) {
  if (!args.is_object()) throw std::invalid_argument("BasicGNN: arguments must be a JSON object");
  BasicGNNOptions o;
  for (const char* k : {"in_channels", "hidden_channels", "num_layers"})
    if (!args.contains(k)) throw std::invalid_argument(std::string("BasicGNN: '") + k + "' is required");
  o.inChannels = positive(args["in_channels"], "in_channels");
  o.hiddenChannels = positive(args["hidden_channels"], "hidden_channels");
  o.numLayers = positive(args["num_layers"], "num_layers");
  if (args.contains("out_channels") && !args["out_channels"].is_null())
    o.outChannels = positive(args["out_channels"], "out_channels");
  o.dropout = args.value("dropout", 0.0);
  if (o.dropout < 0 || o.dropout >= 1) throw std::invalid_argument("BasicGNN: dropout must be in [0, 1)");
  if (args.contains("act")) o.act = args["act"];
  if (args.contains("act_kwargs")) o.actKwargs = args["act_kwargs"];
  o.actFirst = args.value("act_first", false);
  if (args.contains("norm")) o.norm = args["norm"];
  if (args.contains("norm_kwargs")) o.normKwargs = args["norm_kwargs"];
  if (args.contains("jk") && !args["jk"].is_null()) o.jk = args["jk"].get<std::string>();
  std::transform(o.jk.begin(), o.jk.end(), o.jk.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!o.jk.empty() && o.jk != "last" && o.jk != "cat" && o.jk != "max" && o.jk != "lstm")
    throw std::invalid_argument("BasicGNN: jk='" + o.jk + "' is not one of None, 'last', 'cat', 'max', 'lstm'");
  for (const auto& [k, v] : args.items())
    if (!isModelKey(k) && k != "conv_kwargs") o.conv[k] = v;
  // A stacked convolution's own arguments named as the model's (GatedGraphConv's num_layers).
  if (args.contains("conv_kwargs")) {
    if (!args["conv_kwargs"].is_object()) throw std::invalid_argument("BasicGNN: conv_kwargs must be a JSON object");
    for (const auto& [k, v] : args["conv_kwargs"].items()) o.conv[k] = v;
  }
  return o;
}

json BasicGNNOptions::toPyG() const {
  json a = json::object();
  for (const auto& [k, v] : conv.items()) {
    if (isModelKey(k))
      a["conv_kwargs"][k] = v;
    else
      a[k] = v;
  }
  a["in_channels"] = inChannels;
  a["hidden_channels"] = hiddenChannels;
  a["num_layers"] = numLayers;
  a["out_channels"] = outChannels > 0 ? json(outChannels) : json(nullptr);
  a["dropout"] = dropout;
  a["act"] = act;
  a["act_first"] = actFirst;
  a["act_kwargs"] = actKwargs;
  a["norm"] = norm;
  a["norm_kwargs"] = normKwargs;
  a["jk"] = jk.empty() ? json(nullptr) : json(jk);
  return a;
}

const std::vector<std::string>& basicGNNClassNames() {
  static const std::vector<std::string> names = {"GCN", "GraphSAGE", "GIN", "GAT", "PNA", "EdgeCNN"};
  return names;
}

bool isBasicGNNClass(const std::string& className) {
  const auto& names = basicGNNClassNames();
  return std::find(names.begin(), names.end(), className) != names.end();
}

BasicGNN::BasicGNN(std::string className, BasicGNNOptions options, Generator& gen)
    : class_(std::move(className)), opt_(std::move(options)) {
  convStack_ = !isBasicGNNClass(class_);
  if (convStack_) {
    const std::vector<std::string> convs = convClassNames();
    if (std::find(convs.begin(), convs.end(), class_) == convs.end()) {
      std::string known;
      for (const std::string& n : convs) known += ", " + n;
      throw std::invalid_argument(
          "BasicGNN: unknown class '" + class_ +
          "' (GCN, GraphSAGE, GIN, GAT, PNA, EdgeCNN, or a convolution to stack:" + known.substr(1) + ")");
    }
    const ConvWidths w = convWidths(class_);
    keepsWidth_ = w == ConvWidths::Channels || w == ConvWidths::OutOnly || w == ConvWidths::None;
  }
  if (opt_.inChannels <= 0 || opt_.hiddenChannels <= 0 || opt_.numLayers <= 0)
    throw std::invalid_argument(class_ + ": in_channels, hidden_channels and num_layers must be positive");
  act_ = activationFromPyG(opt_.act, opt_.actKwargs);
  int64_t in = opt_.inChannels;
  if (keepsWidth_) {
    linIn_ = std::make_unique<Linear>(in, opt_.hiddenChannels, gen, true, opt_.dtype);
    registerModule("lin_in", *linIn_);
    in = opt_.hiddenChannels;
  }
  // PyG's layout: the first num_layers - 1 convolutions to hidden_channels, the last to out_channels when it
  // is set and there is no jumping knowledge (that last layer is then the output), else to hidden_channels.
  for (int64_t i = 0; i + 1 < opt_.numLayers; ++i) {
    convs_.push_back(makeConv(i, in, opt_.hiddenChannels, false, gen));
    in = opt_.hiddenChannels;
  }
  // EGConv's heads must divide its width, which a class count need not: its stack ends in "lin" as well.
  const bool linearOut = keepsWidth_ || class_ == "EGConv";
  const bool toOut = opt_.outChannels > 0 && opt_.jk.empty() && !linearOut;
  convs_.push_back(makeConv(opt_.numLayers - 1, in, toOut ? opt_.outChannels : opt_.hiddenChannels, toOut, gen));
  for (size_t i = 0; i < convs_.size(); ++i) registerModule("convs." + std::to_string(i), *convs_[i]);
  shareAdjacencies();
  // Whether the last layer is hidden too (act, norm and dropout after it, then "lin").
  const bool hiddenLast = !opt_.jk.empty() || linearOut;
  if (!opt_.norm.is_null()) {
    const int64_t count = opt_.numLayers - 1 + (hiddenLast ? 1 : 0);
    for (int64_t i = 0; i < count; ++i) {
      norms_.push_back(normalizationFromPyG(opt_.norm, opt_.hiddenChannels, opt_.normKwargs, gen, opt_.dtype));
      if (norms_.back()) registerModule("norms." + std::to_string(i), *norms_.back());
    }
  }
  if (!opt_.jk.empty() && opt_.jk != "last") {
    // PyG's JumpingKnowledge(jk, hidden_channels, num_layers); only "lstm" has parameters (and draws).
    jk_ = std::make_unique<JumpingKnowledge>(opt_.jk, opt_.hiddenChannels, opt_.numLayers, gen, opt_.dtype);
    registerModule("jk", *jk_);
  }
  if (hiddenLast) {
    const int64_t width = jk_ ? jk_->outChannels(opt_.hiddenChannels) : opt_.hiddenChannels;
    lin_ = std::make_unique<Linear>(width, outChannels(), gen, true, opt_.dtype);
    registerModule("lin", *lin_);
  }
}

void BasicGNN::shareAdjacencies() {
  // The layers run on the same graph: one matrix (and one backward transpose) per graph for all of them, not
  // one per layer. GCN's layers share only when their options (hence matrices) agree, which PyG's kwargs make
  // so.
  for (size_t i = 1; i < convs_.size(); ++i) {
    if (class_ == "GCN") static_cast<GCNConv&>(*convs_[i]).shareAdjacencyWith(static_cast<GCNConv&>(*convs_[0]));
    if (class_ == "GraphSAGE")
      static_cast<SAGEConv&>(*convs_[i]).shareAdjacencyWith(static_cast<SAGEConv&>(*convs_[0]));
    if (class_ == "GIN") static_cast<GINConv&>(*convs_[i]).shareAdjacencyWith(static_cast<GINConv&>(*convs_[0]));
  }
}

json BasicGNN::layerMlp(int64_t in, int64_t out) const {
  // PyG builds GIN's and EdgeCNN's layer networks as MLP([in, out, out]) with the model's act and norm.
  const json mlp = {{"channel_list", {in, out, out}}, {"act", opt_.act},   {"act_first", opt_.actFirst},
                    {"act_kwargs", opt_.actKwargs},   {"norm", opt_.norm}, {"norm_kwargs", opt_.normKwargs}};
  return {{"class", "MLP"}, {"args", mlp}};
}

std::unique_ptr<Module> BasicGNN::makeConv(int64_t i, int64_t in, int64_t out, bool toOut, Generator& gen) const {
  if (convStack_) return makeStackedConv(i, in, out, toOut, gen);
  json a = opt_.conv;
  const DType dt = opt_.dtype;
  if (class_ == "GIN" || class_ == "EdgeCNN") {
    a["nn"] = layerMlp(class_ == "GIN" ? in : 2 * in, out);  // EdgeCNN's reads [x_i, x_j - x_i]
    if (class_ == "GIN") return GINConv::fromPyG(a, gen, dt);
    return EdgeConv::fromPyG(a, gen, dt);
  }
  a["in_channels"] = in;
  a["out_channels"] = out;
  if (class_ == "GCN") return GCNConv::fromPyG(a, gen, dt);
  if (class_ == "GraphSAGE") return SAGEConv::fromPyG(a, gen, dt);
  if (class_ == "PNA") return PNAConv::fromPyG(a, gen, dt);
  // GAT: hidden_channels is the total width, heads x (hidden / heads); the output layer averages its heads.
  const bool v2 = a.value("v2", false);
  int64_t heads = a.value("heads", int64_t{1});
  if (toOut && opt_.outputHeads > 0) heads = opt_.outputHeads;
  const bool concat = !toOut && a.value("concat", true);
  a = gatConvArgs(std::move(a), out, heads, concat, opt_.attentionDropout >= 0 ? opt_.attentionDropout : opt_.dropout);
  if (v2) return GATv2Conv::fromPyG(a, gen, dt);
  return GATConv::fromPyG(a, gen, dt);
}

json BasicGNN::gatConvArgs(json a, int64_t out, int64_t heads, bool concat, double dropout) {
  a.erase("v2");
  if (concat && out % heads != 0)
    throw std::invalid_argument("GAT: the output channels of 'GATConv' (" + std::to_string(out) +
                                ") must be divisible by the number of heads (" + std::to_string(heads) + ")");
  a["out_channels"] = concat ? out / heads : out;
  a["heads"] = heads;
  a["concat"] = concat;
  a["dropout"] = dropout;
  return a;
}

std::unique_ptr<Module> BasicGNN::makeStackedConv(int64_t i, int64_t in, int64_t out, bool toOut,
                                                  Generator& gen) const {
  json a = opt_.conv;
  switch (convWidths(class_)) {
    case ConvWidths::InOut: {
      a["in_channels"] = in;
      a["out_channels"] = out;
      // TransformerConv's heads concatenated: hidden_channels is their total width, as GAT's; the output
      // layer averages them.
      const int64_t heads = a.value("heads", int64_t{1});
      if (class_ == "TransformerConv" && heads > 1) {
        const bool concat = !toOut && a.value("concat", true);
        if (concat && out % heads != 0)
          throw std::invalid_argument(class_ + ": hidden_channels (" + std::to_string(out) +
                                      ") must be divisible by the number of heads (" + std::to_string(heads) + ")");
        a["out_channels"] = concat ? out / heads : out;
        a["concat"] = concat;
      }
      break;
    }
    case ConvWidths::Channels:
      a["channels"] = out;
      // GCNII's identity mapping strength log(theta / layer + 1) depends on the layer's depth, from 1.
      if (class_ == "GCN2Conv" && a.contains("theta") && !a["theta"].is_null() && !a.contains("layer"))
        a["layer"] = i + 1;
      break;
    case ConvWidths::OutOnly:
      a["out_channels"] = out;
      break;
    case ConvWidths::None:
      break;
    case ConvWidths::Mlp:
    case ConvWidths::PairMlp: {
      // As PyG's GIN and EdgeCNN build theirs ([2 in, out, out] for the layers that read [x_i, x_j - x_i]).
      a["nn"] = layerMlp(convWidths(class_) == ConvWidths::PairMlp ? 2 * in : in, out);
      break;
    }
  }
  return convFromPyG(class_, a, gen, opt_.dtype);
}

namespace {
// DynamicEdgeConv's graph of each row for a batch with padding rows (kept at the end): the real rows graph 0,
// the padding rows graph 1, so no real node takes a padding row as a neighbour.
Tensor paddingAsAGraph(const NormBatch& nb) {
  if (!nb.nodeMask.defined()) return Tensor();
  const int64_t n = nb.nodeMask.dim(0);
  Tensor batch = Tensor::empty({n}, DType::I64);
  const uint8_t* m = nb.nodeMask.data<uint8_t>();
  int64_t* b = batch.data<int64_t>();
  for (int64_t r = 0; r < n; ++r) {
    b[r] = m[r] ? 0 : 1;
    GNN_CHECK_ARG(r == 0 || b[r] >= b[r - 1], "DynamicEdgeConv: a batch's padding rows must follow its real rows");
  }
  return batch;
}
}  // namespace

Variable BasicGNN::runConv(int64_t i, const Variable& h, const Tensor& edgeIndex, const Variable& edgeAttr,
                           const NormBatch& nb, const Variable& x0) {
  Module& c = *convs_[static_cast<size_t>(i)];
  if (convStack_) {
    ConvInputs in;
    in.x = h;
    in.edgeIndex = edgeIndex;
    in.edgeAttr = edgeAttr;
    in.x0 = x0;
    if (class_ == "DynamicEdgeConv") in.batch = paddingAsAGraph(nb);
    GNN_CHECK_ARG(!convNeedsEdgeFeatures(class_) || edgeAttr.defined(), class_,
                  " needs edge features (edge_attr), and the graph has none");
    return convForward(class_, c, in);
  }
  if (class_ == "GCN") return static_cast<GCNConv&>(c).forward(h, edgeIndex);
  if (class_ == "GraphSAGE") return static_cast<SAGEConv&>(c).forward(h, edgeIndex);
  // GIN's MLP normalises nodes: the batch's real ones.
  if (class_ == "GIN") return static_cast<GINConv&>(c).forward(h, edgeIndex, NormBatch{Tensor(), 1, nb.nodeMask});
  if (class_ == "EdgeCNN") return static_cast<EdgeConv&>(c).forward(h, edgeIndex);
  if (class_ == "PNA") return static_cast<PNAConv&>(c).forward(h, edgeIndex, edgeAttr);
  if (opt_.conv.value("v2", false)) return static_cast<GATv2Conv&>(c).forward(h, edgeIndex, edgeAttr);
  return static_cast<GATConv&>(c).forward(h, edgeIndex, edgeAttr);
}

bool BasicGNN::classTakesSparseInput(const std::string& className) {
  return className == "GCN" || className == "GraphSAGE" || className == "GIN" || className == "GAT";
}

Variable BasicGNN::runConv(int64_t i, const SparseMatrix& x, const Tensor& edgeIndex, const Variable& edgeAttr,
                           const NormBatch& nb) {
  GNN_CHECK_ARG(takesSparseInput(), class_,
                " takes dense input features only (PNAConv and EdgeConv have no "
                "sparse-input forward): give it a dense feature matrix");
  Module& c = *convs_[static_cast<size_t>(i)];
  if (class_ == "GCN") return static_cast<GCNConv&>(c).forward(x, edgeIndex);
  if (class_ == "GraphSAGE") return static_cast<SAGEConv&>(c).forward(x, edgeIndex);
  if (class_ == "GIN") return static_cast<GINConv&>(c).forward(x, edgeIndex, NormBatch{Tensor(), 1, nb.nodeMask});
  if (opt_.conv.value("v2", false)) return static_cast<GATv2Conv&>(c).forward(x, edgeIndex, edgeAttr);
  return static_cast<GATConv&>(c).forward(x, edgeIndex, edgeAttr);
}

Variable BasicGNN::input(const Variable& x) const {
  GNN_CHECK_ARG(x.dim(1) == opt_.inChannels, class_, ": input has ", x.dim(1), " features, the model takes ",
                opt_.inChannels);
  Variable h = opt_.inputDropout > 0 ? dropout(x, opt_.inputDropout, isTraining()) : x;
  if (!linIn_) return h;
  h = act_(linIn_->forward(h));
  return opt_.dropout > 0 ? dropout(h, opt_.dropout, isTraining()) : h;
}

SparseMatrix BasicGNN::input(const SparseMatrix& x) const {
  GNN_CHECK_ARG(x.cols() == opt_.inChannels, class_, ": sparse input has ", x.cols(), " features, the model takes ",
                opt_.inChannels);
  if (opt_.inputDropout <= 0 || !isTraining()) return x;
  // One random stream, as dense dropout draws, so the model's later dropouts take the same streams either
  // way.
  return dropoutValues(x, opt_.inputDropout);
}

Variable BasicGNN::layer(int64_t i, const Variable& h, const Tensor& edgeIndex, const Variable& edgeAttr,
                         const NormBatch& nb, const Variable& x0) {
  return afterConv(i, runConv(i, h, edgeIndex, edgeAttr, nb, x0), nb);
}

Variable BasicGNN::layer(int64_t i, const SparseMatrix& h, const Tensor& edgeIndex, const Variable& edgeAttr,
                         const NormBatch& nb) {
  return afterConv(i, runConv(i, h, edgeIndex, edgeAttr, nb), nb);
}

Variable BasicGNN::afterConv(int64_t i, Variable x, const NormBatch& nb) {
  if (i == opt_.numLayers - 1 && !lin_) return x;
  if (opt_.actFirst) x = act_(x);
  if (!norms_.empty()) {
    // PyG 2.3.1's BasicGNN calls its norms without `batch`: a graph-wise norm sees the whole input as one
    // graph. Padding rows never enter a statistic.
    x = norms_[static_cast<size_t>(i)]->forward(x, NormBatch{Tensor(), 1, nb.nodeMask});
  }
  // relu then dropout in training as one op, the same numbers: it keeps a byte mask for the backward instead
  // of relu's output and a float mask (at 245k nodes and width 256, 420 MB less at the step's peak).
  if (!opt_.actFirst && opt_.dropout > 0 && isTraining() && opt_.act == "relu")
    return reluDropout(x, opt_.dropout, true);
  if (!opt_.actFirst) x = act_(x);
  return opt_.dropout > 0 ? dropout(x, opt_.dropout, isTraining()) : x;
}

Variable BasicGNN::layer(int64_t i, const Variable& h, const Tensor& edgeIndex, int64_t numTargets) {
  Variable out = class_ == "GraphSAGE"
                     ? static_cast<SAGEConv&>(*convs_[static_cast<size_t>(i)]).forward(h, edgeIndex, numTargets)
                     : sliceRows(runConv(i, h, edgeIndex, Variable(), NormBatch{}), 0, numTargets);
  return afterConv(i, out, NormBatch{});
}

Variable BasicGNN::layer(int64_t i, const Variable& hSrc, const Variable& hDst, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(bipartiteLayers(), class_, ": its layers do not take sources and targets apart");
  return afterConv(i, static_cast<SAGEConv&>(*convs_[static_cast<size_t>(i)]).forward(hSrc, hDst, edgeIndex),
                   NormBatch{});
}

bool BasicGNN::bipartiteLayers() const {
  if (class_ != "GraphSAGE") return false;
  for (const auto& c : convs_)
    if (!static_cast<const SAGEConv&>(*c).takesBipartite()) return false;
  return true;
}

Variable BasicGNN::forwardHops(const Variable& x, const Tensor& edgeIndex, const std::vector<int64_t>& nodesPerHop,
                               const std::vector<int64_t>& edgesPerHop) {
  GNN_CHECK_ARG(!convStack_, class_,
                ": trimming each layer to its hops runs PyG's BasicGNN classes, whose layers "
                "read one hop each; run the stacked ",
                class_, " over the whole batch");
  const int64_t L = opt_.numLayers;
  GNN_CHECK_ARG(static_cast<int64_t>(nodesPerHop.size()) == L + 1 && static_cast<int64_t>(edgesPerHop.size()) == L,
                class_, ": ", L, " layers need a batch of ", L, " hops, got ", nodesPerHop.size(), " node counts and ",
                edgesPerHop.size(), " edge counts");
  std::vector<int64_t> nodesUpTo(static_cast<size_t>(L + 1)), edgesUpTo(static_cast<size_t>(L + 1), 0);
  for (int64_t h = 0; h <= L; ++h)
    nodesUpTo[static_cast<size_t>(h)] =
        nodesPerHop[static_cast<size_t>(h)] + (h ? nodesUpTo[static_cast<size_t>(h - 1)] : 0);
  for (int64_t h = 1; h <= L; ++h)
    edgesUpTo[static_cast<size_t>(h)] = edgesUpTo[static_cast<size_t>(h - 1)] + edgesPerHop[static_cast<size_t>(h - 1)];
  GNN_CHECK_ARG(nodesUpTo.back() <= x.dim(0) && edgesUpTo.back() <= edgeIndex.dim(1), class_, ": the hops hold ",
                nodesUpTo.back(), " nodes and ", edgesUpTo.back(), " edges, the batch ", x.dim(0), " and ",
                edgeIndex.dim(1));
  const int64_t E = edgeIndex.dim(1);
  const int64_t* ei = edgeIndex.data<int64_t>();
  std::vector<Variable> xs;
  Variable h = input(x);
  for (int64_t l = 0; l < L; ++l) {
    const int64_t rows = nodesUpTo[static_cast<size_t>(L - l)], targets = nodesUpTo[static_cast<size_t>(L - 1 - l)];
    const int64_t m = edgesUpTo[static_cast<size_t>(L - l)];
    Tensor sub = Tensor::empty({2, m}, DType::I64);
    std::copy(ei, ei + m, sub.data<int64_t>());
    std::copy(ei + E, ei + E + m, sub.data<int64_t>() + m);
    h = layer(l, sliceRows(h, 0, rows), sub, targets);
    if (headReadsAllLayers() || l + 1 == L) xs.push_back(sliceRows(h, 0, nodesUpTo[0]));
  }
  return head(xs);
}

Variable BasicGNN::head(const std::vector<Variable>& xs) const {
  GNN_CHECK_ARG(!xs.empty(), class_, ": head() needs the layers' outputs");
  if (!lin_) return xs.back();
  return lin_->forward(jk_ ? jk_->forward(xs) : xs.back());
}

Variable BasicGNN::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr, const NormBatch& nb) {
  const Variable h = input(x);
  return forwardFrom(layer(0, h, edgeIndex, edgeAttr, nb, h), edgeIndex, edgeAttr, nb, h);
}

Variable BasicGNN::forward(const SparseMatrix& x, const Tensor& edgeIndex, const Variable& edgeAttr,
                           const NormBatch& nb) {
  GNN_CHECK_ARG(takesSparseInput(), class_,
                " takes dense input features only (PNAConv and EdgeConv have no "
                "sparse-input forward): give it a dense feature matrix");
  return forwardFrom(layer(0, input(x), edgeIndex, edgeAttr, nb), edgeIndex, edgeAttr, nb, Variable());
}

Variable BasicGNN::forwardFrom(const Variable& first, const Tensor& edgeIndex, const Variable& edgeAttr,
                               const NormBatch& nb, const Variable& x0) {
  std::vector<Variable> xs;
  Variable h = first;
  for (int64_t i = 0; i < opt_.numLayers; ++i) {
    if (i > 0) h = layer(i, h, edgeIndex, edgeAttr, nb, x0);
    if (headReadsAllLayers() || i + 1 == opt_.numLayers) xs.push_back(h);
  }
  return head(xs);
}

std::unique_ptr<Module> BasicGNN::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<BasicGNN>(class_, opt_, unused));
}

std::unique_ptr<BasicGNN> basicGNNFromSpec(const json& spec, Generator& gen, DType dtype) {
  if (!spec.is_object() || !spec.contains("class") || !spec["class"].is_string())
    throw std::invalid_argument("model spec: expected {\"class\": \"<PyG model class>\", \"args\": {...}}, got " +
                                spec.dump().substr(0, 200));
  for (const auto& [k, v] : spec.items())
    if (k != "class" && k != "args") throw std::invalid_argument("model spec: unknown key '" + k + "'");
  BasicGNNOptions o = BasicGNNOptions::fromPyG(spec.value("args", json::object()));
  o.dtype = dtype;
  return std::make_unique<BasicGNN>(spec["class"].get<std::string>(), std::move(o), gen);
}

}  // namespace gnn
