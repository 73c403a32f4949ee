// HeteroBasicGNN: what PyG 2.3.1's to_hetero(model, metadata, aggr) (torch_geometric/nn/to_hetero_transformer.py)
// makes of a BasicGNN (GraphSAGE, GAT with v2 false, GIN), held as the copies it makes rather than as a traced graph: each convolution
// copied per edge type ("convs.<i>.<src>__<rel>__<dst>.*"), every other module per node type ("norms.<i>.<type>.*",
// "jk.<type>.*", "lin.<type>.*"), activations and dropout applied per node type. A layer runs each edge type's copy
// (a same-type relation on x[type], any other on (x[src], x[dst]), as PyG's mapping of the arguments does) and
// combines the outputs that end at one node type in the order of metadata's edge types, pairwise from a queue as
// to_hetero's graph does (sum, mean = that sum divided by their count, max, min, mul). Keys as PyG's key2str: the
// types joined by "__", ' ', '-' and ':' replaced by '_'. GAT's copies are GATConvs as PyG's GAT builds them (heads
// concatenated, the output layer's averaged; add_self_loops=False, which to_hetero demands for a relation between
// two types); GIN's are GINConvs with PyG's MLP([in, out, out]) ("convs.<i>.<edge type>.nn.*"), whose bipartite
// form adds x_dst to the sum of x_src, so a relation's two types need one width.
//
// in_channels is BasicGNN's: an int (every node type that wide), -1 (PyG's lazy widths: each relation's copy reads
// its source and destination types' widths, given here as inWidths) or [source, target] (each -1 or an int; BasicGNN
// then gives every layer (source, target) widths, so GAT's copies have a lin_src and a lin_dst each, where an int or
// -1 gives one shared lin_src = lin_dst). Every
// node type must be some relation's destination: to_hetero's graph has nothing to feed the layers after the first
// for the others (PyG warns and the model fails when it runs). PyG's traced model keeps F.dropout's `training` flag
// as it was when traced; here dropout follows train() / eval().
//
//   HeteroMetadata meta = {{"paper", "author"}, {{"paper", "cites", "paper"}, {"author", "writes", "paper"},
//                                                {"paper", "rev_writes", "author"}}};
//   HeteroBasicGNN model({{"class", "GraphSAGE"}, {"args", {{"in_channels", -1}, {"hidden_channels", 64},
//                                                          {"num_layers", 2}, {"out_channels", 8}}}},
//                        meta, {{"paper", 128}, {"author", 32}}, "sum", gen);
//   std::map<std::string, Variable> out = model.forward(xDict, edgeIndexDict);   // out["paper"]: [N_paper, 8]
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/nn/Activation.h"
#include "gnn/nn/EdgeType.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/Module.h"
#include "gnn/nn/conv/SAGEConv.h"
#include "gnn/nn/models/BasicGNN.h"
#include "gnn/nn/models/JumpingKnowledge.h"
#include "gnn/nn/norm/Normalization.h"

namespace gnn {

class HeteroBasicGNN : public Module {
 public:
  /// spec: {"class": "GraphSAGE", "args": {<PyG's constructor arguments>}}; inWidths: each node type's feature
  /// width (read where in_channels is -1, checked where it is an int); aggr: to_hetero's "sum", "mean", "max",
  /// "min" or "mul". std::invalid_argument naming what does not fit.
  HeteroBasicGNN(const nlohmann::json& spec, HeteroMetadata metadata, const std::map<std::string, int64_t>& inWidths,
                 std::string aggr, Generator& gen, DType dtype = DType::F32);

  /// xDict: features of every node type [N_t, in_t]; edgeIndexDict: every edge type of the metadata (any order, more
  /// are ignored). -> every node type's outputs [N_t, out_channels].
  std::map<std::string, Variable> forward(const std::map<std::string, Variable>& xDict,
                                          const EdgeIndexDict& edgeIndexDict);

  /// PyG's key2str: "__".join of an edge type, a node type as it is, ' ', '-' and ':' replaced by '_'.
  static std::string key(const std::string& nodeType);
  static std::string key(const EdgeType& edgeType);
  /// The classes to_hetero's copies are offered for (their convolutions' bipartite forms): GraphSAGE, GAT, GIN.
  static const std::vector<std::string>& classNames();

  const HeteroMetadata& metadata() const { return meta_; }
  const std::string& aggr() const { return aggr_; }
  int64_t outChannels() const { return opt_.outChannels > 0 ? opt_.outChannels : opt_.hiddenChannels; }
  const nlohmann::json& spec() const { return spec_; }
  std::unique_ptr<Module> clone() const override;

 private:
  /// Each relation's (source, target) widths into the first layer.
  std::vector<std::pair<int64_t, int64_t>> firstWidths(const nlohmann::json& in,
                                                       const std::map<std::string, int64_t>& inWidths) const;
  /// A layer's copy for one relation, widths (source, target) -> out, as PyG's BasicGNN.init_conv of the class.
  std::unique_ptr<Module> makeConv(std::pair<int64_t, int64_t> in, bool pairIn, int64_t out, bool toOut,
                                   Generator& gen) const;
  /// GAT's GATConv arguments: heads and concat as PyG's GAT.init_conv gives them, the model's dropout.
  nlohmann::json gatArgs(nlohmann::json a, int64_t out, bool toOut) const;
  /// Copy conv of relation t on h (a same-type relation on x, any other on (x_src, x_dst)).
  Variable runConv(Module& conv, const EdgeType& t, const std::map<std::string, Variable>& h,
                   const Tensor& edgeIndex) const;
  /// Layer i's convolutions, each destination type's outputs combined.
  std::map<std::string, Variable> convLayer(size_t i, const std::map<std::string, Variable>& h,
                                            const std::vector<const Tensor*>& edges);
  /// Act, norm, act and dropout after layer i, per node type (BasicGNN's afterConv).
  Variable afterConv(size_t i, size_t type, Variable x) const;
  /// to_hetero's pairwise combination of one destination type's outputs.
  Variable combine(std::vector<Variable> outs) const;

  nlohmann::json spec_;
  HeteroMetadata meta_;
  std::map<std::string, int64_t> inWidths_;
  std::string aggr_;
  DType dtype_;
  std::string class_;
  BasicGNNOptions opt_;
  Activation act_;
  std::vector<std::vector<std::unique_ptr<Module>>> convs_;           // [layer][edge type]
  std::vector<std::vector<std::unique_ptr<Normalization>>> norms_;  // [layer][node type]
  std::vector<std::unique_ptr<JumpingKnowledge>> jk_;                // [node type]: jk "cat", "max", "lstm"
  std::vector<std::unique_ptr<Linear>> lin_;                         // [node type]: with jk
};

}  // namespace gnn
