// HeteroHGT: the Heterogeneous Graph Transformer (Hu et al., WWW 2020) for node classification on a heterogeneous
// graph, as PyG 2.3.1's examples/hetero/hgt_dblp.py builds it: per node type a Linear to `hidden` and a ReLU,
// `layers` HGTConv(hidden, hidden, metadata, heads, group "sum") (gnn/nn/conv/HGTConv.h), and a Linear from
// hidden to the classes on the target type's rows. A node type without features gets a trained embedding
// [numNodes, hidden] instead of its Linear and ReLU (hgt_dblp.py gives DBLP's featureless conferences a constant
// feature through T.Constant, which makes every conference alike; a ReLU after an embedding would leave its
// negative entries without a gradient), drawn Xavier-uniform as OGB's ogbn-mag R-GCN script draws its embeddings:
// torch's N(0, 1) rows are far larger than the other types' input rows, and learnt slower here (the 20,000-paper
// ogbn-mag-shaped graph, 30 epochs without weight decay: validation 0.31 against 0.41). No dropout, as hgt_dblp.py.
// Only what the target's logits read is computed: the last layer takes the relations into the target type, each
// layer before it those into the types the next one reads (ogbn-mag's shape: 3 of 7 relations in the last layer,
// 6 in the first), and the input rows only of the types the first layer reads. The target's logits and all
// gradients are those of the whole model; the parameters the pruned parts hold get no gradient.
// Parameters: "emb.<type>.weight", "lin_dict.<type>.weight" / ".bias", "convs.<l>.*" (HGTConv's names),
// "norms.<l>.<type>.weight" / ".bias" (HeteroHGTOptions::layerNorm), "lin.weight" / ".bias", drawn from the
// generator in that order.
//
//   HeteroHGTOptions o;
//   o.nodeTypes = {{"author", 1134649, 0}, {"paper", 736389, 128}};   // name, nodes, feature width (0: none)
//   o.edgeTypes = {{"author", "writes", "paper"}, {"paper", "rev_writes", "author"}};
//   o.targetType = "paper";  o.outChannels = 349;
//   HeteroHGT net(o, gen);
//   Variable logits = net.forward({Tensor(), paperX}, net.relationEdges(h.edgeIndex, h.edgeType));  // [papers, 349]
//
// On a fixed-size batch (loaders/HeteroBatch.h) it reads the batch's rows of each type: a featured type's features,
// a featureless type's embedding rows looked up at the batch's node ids, each relation's edges in the batch's rows;
// padding rows only exchange messages among themselves, so the real rows' logits do not depend on the padding.
//
//   Variable seeds = net.forward(features, nodeIds, edgeIndexDict, targetRows);   // [targetRows, 349]
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gnn/nn/Embedding.h"
#include "gnn/nn/EdgeType.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/HGTConv.h"
#include "gnn/nn/norm/LayerNorm.h"
#include "models/HeteroRGCN.h"

namespace gnn {

struct HeteroHGTOptions {
  /// In the typed graph's order (HomogeneousGraph::nodeTypeNames), as HeteroRGCN takes them.
  std::vector<HeteroRGCNNodeType> nodeTypes;
  /// The graph's relations (HeteroData.metadata()[1]; HomogeneousGraph::edgeTypeNames), in order.
  std::vector<EdgeType> edgeTypes;
  std::string targetType;
  int64_t hidden = 64, outChannels = 0, layers = 2, heads = 2;
  /// A torch.nn.LayerNorm per node type after each layer ("norms.<l>.<type>"), as the HGT authors train ogbn-mag
  /// (acbull/pyHGT, HGTConv's use_norm with --prev_norm --last_norm: the norm of the skip's mix). hgt_dblp.py has
  /// none. Without it the model's rows start small (every projection's weights at PyG's fan-in scale, the node's
  /// own row in at the skip's 0.27 share) and full-batch training spends its first steps at the majority class
  /// (the 20,000-paper ogbn-mag-shaped graph, validation at epoch 24: 0.22 without, 0.82 with).
  bool layerNorm = false;
};

class HeteroHGT : public Module {
 public:
  HeteroHGT(HeteroHGTOptions options, Generator& gen);

  /// features: one tensor per node type, in order, float [numNodes, width] (undefined for a type without
  /// features); edges: each relation's edge_index in its types' own ids (int64 [2, E_r]) -> the target type's
  /// logits [N_target, outChannels].
  Variable forward(const std::vector<Tensor>& features, const std::vector<std::pair<EdgeType, Tensor>>& edges);
  /// The typed graph's edges (data/HeteroToHomogeneous.h: edgeIndex int64 [2, E] over every node, edgeType int64
  /// [E] indexing edgeTypes) as each relation's edge_index in its types' own ids, PyG's edge_index_dict.
  std::vector<std::pair<EdgeType, Tensor>> relationEdges(const Tensor& edgeIndex, const Tensor& edgeType) const;
  /// A batch: per node type its rows' features [rows, width] (featured types) or node ids int64 [rows]
  /// (featureless ones; the other list's entry undefined), each relation's edge_index in the batch's rows -> the
  /// target type's first targetRows rows' logits [targetRows, outChannels] (the seeds come first).
  Variable forward(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds,
                   const std::vector<std::pair<EdgeType, Tensor>>& edges, int64_t targetRows);
  /// relationEdges over a batch's typed layout, whose type t holds typeRows[t] rows (not the graph's node count).
  std::vector<std::pair<EdgeType, Tensor>> relationEdges(const Tensor& edgeIndex, const Tensor& edgeType,
                                                         const std::vector<int64_t>& typeRows) const;
  /// The model one part at a time, as a device runs it in blocks (models/HeteroHGTBlocks.h): the rows of each type
  /// the first layer reads, layer l over them (the relations it reads, from `edges`), the target's logits.
  std::map<std::string, Variable> input(const std::vector<Tensor>& features) { return inputRows(features); }
  std::map<std::string, Variable> layer(size_t l, const std::map<std::string, Variable>& x,
                                        const std::vector<std::pair<EdgeType, Tensor>>& edges);
  Variable output(const std::map<std::string, Variable>& x);
  size_t numLayers() const { return convs_.size(); }
  /// The relations layer l reads (those into the types layer l + 1 reads, the target's for the last).
  const std::set<EdgeType>& layerRelations(size_t l) const { return relations_[l]; }
  const HeteroHGTOptions& options() const { return opt_; }
  std::unique_ptr<Module> clone() const override;

 private:
  /// Each type the first layer reads: its embedding, or ReLU(Linear(features)).
  std::map<std::string, Variable> inputRows(const std::vector<Tensor>& features);
  /// The same for a batch: its features' rows, or the embeddings at its node ids.
  std::map<std::string, Variable> batchInputRows(const std::vector<Tensor>& features,
                                                 const std::vector<Tensor>& nodeIds);
  Variable layers(std::map<std::string, Variable> x, const std::vector<std::pair<EdgeType, Tensor>>& edges);

  HeteroHGTOptions opt_;
  std::vector<std::set<EdgeType>> relations_;  // per layer
  std::set<std::string> inputTypes_;           // the types the first layer reads
  std::vector<std::unique_ptr<Embedding>> embs_;  // per node type; null for a featured or empty type
  std::vector<std::unique_ptr<Linear>> lins_;     // per node type; null for a featureless one
  std::vector<std::unique_ptr<HGTConv>> convs_;
  std::vector<std::map<std::string, std::unique_ptr<LayerNorm>>> norms_;  // per layer, per node type
  std::unique_ptr<Linear> out_;
};

}  // namespace gnn
