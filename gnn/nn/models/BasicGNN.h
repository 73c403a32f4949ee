// BasicGNN: PyTorch Geometric 2.3.1's ready node models (torch_geometric.nn.models.basic_gnn) with PyG's
// constructor arguments, structure and state_dict keys: GCN (GCNConv), GraphSAGE (SAGEConv), GIN (GINConv over
// PyG's MLP), GAT (GATConv, or GATv2Conv with v2), PNA (PNAConv) and EdgeCNN (EdgeConv over an MLP). num_layers
// convolutions, between them act / norm / act (act_first decides) and dropout; jumping knowledge ("last", "cat",
// "max", "lstm": gnn/nn/models/JumpingKnowledge.h) with a final Linear `lin`; with out_channels and no jk the last
// convolution maps to out_channels (GAT's last layer then averages its heads). Keys: "convs.<i>.*", "norms.<i>.*",
// "jk.*" (jk "lstm"), "lin.*", as PyG's.
//
// Beyond PyG's classes, the class may name any convolution of gnn/nn/conv/ConvRegistry.h ("TAGConv",
// "TransformerConv", ...): the same stack over that layer (node_property's --model for every convolution), each
// built by its widths form (ConvWidths: in/out channels, an MLP `nn` as GIN's, ...). A layer that keeps its width
// (GCN2Conv, FAConv, GatedGraphConv, APPNP) sits between an input Linear "lin_in" (in -> hidden, then act and
// dropout; GCN2Conv and FAConv mix its output in as x_0, as PyG's GCNII example) and the output Linear "lin"
// (hidden -> out), with act / norm / dropout after every layer; an EGConv stack ends in "lin" too (its heads must
// divide each layer's width). The keyword arguments of such a class that share a
// name with the model's (GatedGraphConv's num_layers) go in "conv_kwargs": {...}.
//
//   GAT gat(BasicGNNOptions::fromPyG({{"in_channels", 1433}, {"hidden_channels", 64}, {"num_layers", 2},
//                                     {"out_channels", 7}, {"heads", 8}}), gen);
//   Variable logits = gat.forward(x, edgeIndex);
//   Variable same = gat.forward(xSparse, edgeIndex);      // SparseMatrix features (GCN, GraphSAGE, GIN, GAT)
//   std::unique_ptr<BasicGNN> m = basicGNNFromSpec({{"class", "GraphSAGE"}, {"args", {...}}}, gen);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/nn/Activation.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/Module.h"
#include "gnn/nn/models/JumpingKnowledge.h"
#include "gnn/nn/norm/Normalization.h"
#include "gnn/system/Random.h"
#include "gnn/tensor/SparseMatrix.h"

namespace gnn {

/// BasicGNN's arguments under PyG's names; `conv` holds the rest (the convolution's keyword arguments, and
/// GAT's v2 / heads / concat), passed on to each layer as PyG's **kwargs are.
struct BasicGNNOptions {
  int64_t inChannels = 0, hiddenChannels = 0, numLayers = 0;
  /// -1: PyG's None (the output is hidden_channels wide).
  int64_t outChannels = -1;
  double dropout = 0.0;
  nlohmann::json act = "relu", actKwargs = nullptr;
  bool actFirst = false;
  nlohmann::json norm = nullptr, normKwargs = nullptr;
  /// "" (None), "last", "cat", "max", "lstm".
  std::string jk;
  nlohmann::json conv = nlohmann::json::object();
  DType dtype = DType::F32;

  // Beyond PyG's arguments (the programs' flags), off by default so a PyG model runs as PyG runs it.
  /// Dropout on the input features (the GAT paper's dropout before the first layer).
  double inputDropout = 0.0;
  /// GAT's attention dropout; negative: the model's dropout, as PyG's GAT passes it.
  double attentionDropout = -1.0;
  /// GAT's heads in the output layer (averaged); non-positive: the other layers' heads, as PyG has it.
  int64_t outputHeads = -1;

  /// From PyG's constructor arguments (in_channels, hidden_channels, num_layers, out_channels, dropout, act,
  /// act_first, act_kwargs, norm, norm_kwargs, jk; every other key goes to the convolutions).
  static BasicGNNOptions fromPyG(const nlohmann::json& args);
  /// The same arguments back as PyG's JSON.
  nlohmann::json toPyG() const;
};

class BasicGNN : public Module {
 public:
  /// className: "GCN", "GraphSAGE", "GIN", "GAT", "PNA", "EdgeCNN", or a convolution class (convClassNames()).
  BasicGNN(std::string className, BasicGNNOptions options, Generator& gen);

  /// Node outputs [N, out_channels]. edgeAttr: edge features for GAT (edge_dim) and PNA; nb: the graphs and
  /// real rows of a fixed-size batch (undefined: one graph, every row real).
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable(),
                   const NormBatch& nb = {});
  /// Same from constant sparse features (bag of words): the first convolution's input projection runs as a
  /// sparse product (see takesSparseInput), input dropout on the non-zeros; the same map up to rounding, and
  /// dropout the same in distribution. std::invalid_argument for a class that takes dense features only.
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable(),
                   const NormBatch& nb = {});
  /// Whether forward takes sparse features: GCN, GraphSAGE, GIN, GAT (v2 too); not PNA and EdgeCNN, whose
  /// convolutions read the raw features per edge.
  bool takesSparseInput() const { return classTakesSparseInput(class_); }
  /// The same by class name ("GCN", "GAT", ...), before a model is built.
  static bool classTakesSparseInput(const std::string& className);
  /// A GAT layer's GATConv / GATv2Conv arguments from the model's conv arguments `a`, as PyG's GAT.init_conv
  /// gives them: out_channels out / heads when the heads concatenate (refused unless divisible), out when they
  /// average; the attention `dropout`. Drops the model-level "v2" switch. Shared with HeteroBasicGNN.
  static nlohmann::json gatConvArgs(nlohmann::json a, int64_t out, int64_t heads, bool concat, double dropout);

  /// The model a layer at a time, as a device's pipeline stages run it: input() (input dropout), then
  /// layer(i) for i < numLayers(), then head() over every layer's output (jk and lin; the last output alone
  /// when the model has neither).
  Variable input(const Variable& x) const;
  /// x0: input()'s output, which GCN2Conv's and FAConv's layers mix in (readsInitial(); undefined: h).
  Variable layer(int64_t i, const Variable& h, const Tensor& edgeIndex, const Variable& edgeAttr,
                 const NormBatch& nb, const Variable& x0 = Variable());
  /// The same two from sparse features (dropout on the non-zeros; layer 0, when takesSparseInput()).
  SparseMatrix input(const SparseMatrix& x) const;
  Variable layer(int64_t i, const SparseMatrix& h, const Tensor& edgeIndex, const Variable& edgeAttr,
                 const NormBatch& nb);
  Variable head(const std::vector<Variable>& layerOutputs) const;
  /// Layer i's outputs for the first numTargets rows only, every edge ending at one of them (PyG's bipartite
  /// (x, x[:numTargets]) form): GraphSAGE with sum or mean aggregates into those rows alone, the other classes
  /// run the layer over every row and keep those. Norms see the targets' rows (as PyG's trim_to_layer).
  Variable layer(int64_t i, const Variable& h, const Tensor& edgeIndex, int64_t numTargets);
  /// Layer i in PyG's bipartite form: outputs for the rows of hDst from the sources hSrc (edgeIndex's row 0 into
  /// hSrc, row 1 into hDst), when bipartiteLayers().
  Variable layer(int64_t i, const Variable& hSrc, const Variable& hDst, const Tensor& edgeIndex);
  /// GraphSAGE with sum or mean aggregation and no projection: its layers take sources and targets apart.
  bool bipartiteLayers() const;
  /// A neighbour batch's seeds' outputs, each layer over only the rows and edges it needs (PyG 2.3's
  /// trim_to_layer): the batch's nodes are ordered by hop, nodesPerHop[h] of hop h (h = 0: the seeds) and its
  /// edges by hop, edgesPerHop[h - 1] sampled by hop h, one hop per layer; layer l reads the nodes of hops
  /// 0 .. L-l and the edges of hops 1 .. L-l and writes the nodes of hops 0 .. L-l-1. [nodesPerHop[0], out].
  Variable forwardHops(const Variable& x, const Tensor& edgeIndex, const std::vector<int64_t>& nodesPerHop,
                       const std::vector<int64_t>& edgesPerHop);
  /// Whether head() reads every layer's output (jk "cat", "max" or "lstm") rather than the last one.
  bool headReadsAllLayers() const { return opt_.jk == "cat" || opt_.jk == "max" || opt_.jk == "lstm"; }

  /// Whether the class is a convolution stacked (not one of PyG's BasicGNN classes).
  bool convStack() const { return convStack_; }
  /// Whether the layers keep the hidden width between "lin_in" and "lin" (GCN2Conv, FAConv, GatedGraphConv, APPNP).
  bool keepsWidth() const { return keepsWidth_; }
  /// Whether each layer reads input()'s output as well (GCN2Conv, FAConv).
  bool readsInitial() const { return class_ == "GCN2Conv" || class_ == "FAConv"; }

  int64_t numLayers() const { return opt_.numLayers; }
  int64_t outChannels() const { return opt_.outChannels > 0 ? opt_.outChannels : opt_.hiddenChannels; }
  const std::string& className() const { return class_; }
  const BasicGNNOptions& options() const { return opt_; }
  Module& conv(int64_t i) { return *convs_.at(static_cast<size_t>(i)); }
  /// The model's classes and its arguments as PyG's JSON spec {"class": ..., "args": {...}}.
  nlohmann::json spec() const { return {{"class", class_}, {"args", opt_.toPyG()}}; }
  std::unique_ptr<Module> clone() const override;

 private:
  std::unique_ptr<Module> makeConv(int64_t i, int64_t in, int64_t out, bool toOut, Generator& gen) const;
  /// A stacked convolution's layer i (convStack()).
  std::unique_ptr<Module> makeStackedConv(int64_t i, int64_t in, int64_t out, bool toOut, Generator& gen) const;
  /// A layer's network spec, MLP([in, out, out]) with the model's act and norm.
  nlohmann::json layerMlp(int64_t in, int64_t out) const;
  void shareAdjacencies();
  Variable runConv(int64_t i, const Variable& h, const Tensor& edgeIndex, const Variable& edgeAttr,
                   const NormBatch& nb, const Variable& x0 = Variable());
  Variable runConv(int64_t i, const SparseMatrix& x, const Tensor& edgeIndex, const Variable& edgeAttr,
                   const NormBatch& nb);
  /// Layer i's activation, norm and dropout after its convolution (none after the output layer).
  Variable afterConv(int64_t i, Variable x, const NormBatch& nb);
  /// The layers after the first from its output `first`, then the head.
  Variable forwardFrom(const Variable& first, const Tensor& edgeIndex, const Variable& edgeAttr,
                       const NormBatch& nb, const Variable& x0);

  std::string class_;
  BasicGNNOptions opt_;
  bool convStack_ = false, keepsWidth_ = false;
  std::unique_ptr<Linear> linIn_;  // keepsWidth(): in -> hidden
  Activation act_;
  std::vector<std::unique_ptr<Module>> convs_;
  std::vector<std::unique_ptr<Normalization>> norms_;
  std::unique_ptr<JumpingKnowledge> jk_;  // jk "cat", "max", "lstm" (PyG's self.jk)
  std::unique_ptr<Linear> lin_;
};

// PyG's class names, each a BasicGNN with its convolution.
struct GCN : BasicGNN {
  GCN(BasicGNNOptions o, Generator& gen) : BasicGNN("GCN", std::move(o), gen) {}
};
struct GraphSAGE : BasicGNN {
  GraphSAGE(BasicGNNOptions o, Generator& gen) : BasicGNN("GraphSAGE", std::move(o), gen) {}
};
struct GIN : BasicGNN {
  GIN(BasicGNNOptions o, Generator& gen) : BasicGNN("GIN", std::move(o), gen) {}
};
struct GAT : BasicGNN {
  GAT(BasicGNNOptions o, Generator& gen) : BasicGNN("GAT", std::move(o), gen) {}
};
struct PNA : BasicGNN {
  PNA(BasicGNNOptions o, Generator& gen) : BasicGNN("PNA", std::move(o), gen) {}
};
struct EdgeCNN : BasicGNN {
  EdgeCNN(BasicGNNOptions o, Generator& gen) : BasicGNN("EdgeCNN", std::move(o), gen) {}
};

/// PyG's BasicGNN class names (GCN, GraphSAGE, GIN, GAT, PNA, EdgeCNN); BasicGNN also stacks any convolution.
const std::vector<std::string>& basicGNNClassNames();
/// Whether className is one of basicGNNClassNames() (not a stacked convolution).
bool isBasicGNNClass(const std::string& className);

/// A model from PyG's JSON spec {"class": "GAT", "args": {<constructor arguments>}}; std::invalid_argument
/// naming the class or argument that is not known.
std::unique_ptr<BasicGNN> basicGNNFromSpec(const nlohmann::json& spec, Generator& gen, DType dtype = DType::F32);

}  // namespace gnn
