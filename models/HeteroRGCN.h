// HeteroRGCN: R-GCN (Schlichtkrull et al., ESWC 2018) for node classification on a heterogeneous graph laid out
// as one typed graph (data/HeteroToHomogeneous.h), as PyG's R-GCN examples build it: PyG 2.3.1's examples/rgcn.py
// (a stack of RGCNConv, ReLU between layers, num_bases for the basis decomposition) with OGB's full-batch ogbn-mag
// recipe (ogb/examples/nodeproppred/mag/rgcn.py, on PyG): node types without features get a trained embedding,
// one row per node, and dropout follows each hidden layer's ReLU.
//   - Input: a type without features gets torch.nn.Embedding(numNodes, in) (torch's N(0, 1) initialisation,
//     gnn/nn/Embedding.h; OGB's script draws its embeddings Xavier-uniform), used whole as its rows; typed
//     features are used as they are when every featured type has the same width (ogbn-mag: papers' 128, so
//     in = 128), else each type's go through a Linear of its own to `hidden` (torch's initialisation) and
//     in = hidden; with no features at all, in = hidden.
//   - Layers: RGCNConv(in, hidden), RGCNConv(hidden, hidden) ..., RGCNConv(hidden, outChannels), PyG's RGCNConv
//     defaults (aggr "mean", one root weight, bias); numBases > 0 for the basis decomposition. Between layers
//     ReLU then dropout. (OGB's script writes `x_dict[key] = F.relu(x); x_dict[key] = F.dropout(x, ...)`, which
//     drops out the values before the ReLU and so loses it; the ReLU is kept here, as the script means. Its
//     RGCNConv also has a root weight per node type; PyG's, used here, has one.)
// The output is every node's logits in the layout's order; a caller takes its target type's rows.
// A sampled batch (loaders/HeteroBatch.h laid out by loaders/HeteroBatchToHomogeneous.h) runs through the same
// weights: any number of rows per type, a featureless type's rows its embedding's rows at the batch's node ids
// (looked up, not the whole table), the relations numbered as the whole graph's.
// Parameters: "emb.<type>.weight", then "lin.<type>.weight" / ".bias", then "convs.<l>.*" (RGCNConv's names),
// drawn from the generator in that order.
//
//   HeteroRGCNOptions o;
//   o.nodeTypes = {{"author", 1134649, 0}, {"paper", 736389, 128}};   // name, nodes, feature width (0: none)
//   o.numRelations = 7;  o.outChannels = 349;
//   HeteroRGCN net(o, gen);
//   Variable logits = net.forward({Tensor(), paperX}, h.edgeIndex, h.edgeType);   // [N, 349]
//   (with o.targetType = 1: the papers' rows only, [736389, 349])
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gnn/nn/Embedding.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/RGCNConv.h"

namespace gnn {

struct HeteroRGCNNodeType {
  std::string name;
  int64_t numNodes = 0;
  int64_t features = 0;  ///< the type's feature width; 0 = no features (a trained embedding instead)
};

struct HeteroRGCNOptions {
  /// In the typed graph's order (HomogeneousGraph::nodeTypeNames).
  std::vector<HeteroRGCNNodeType> nodeTypes;
  int64_t numRelations = 1, hidden = 64, outChannels = 0, layers = 2;
  int64_t numBases = 0;  ///< RGCNConv's num_bases; 0 = None (a full weight per relation)
  double dropout = 0.5;
  /// The node type classified (its position in nodeTypes): the last layer then computes that type's rows only,
  /// as PyG's bipartite RGCNConv((x, x_target)); -1: every node's.
  int64_t targetType = -1;
};

class HeteroRGCN : public Module {
 public:
  HeteroRGCN(HeteroRGCNOptions options, Generator& gen);

  /// features: one tensor per node type, in order, float [numNodes, width] (undefined for a type without
  /// features); edgeIndex int64 [2, E] and edgeType int64 [E] of the typed graph -> logits [N, outChannels], or
  /// the target type's rows [N_target, outChannels] when it is set.
  Variable forward(const std::vector<Tensor>& features, const Tensor& edgeIndex, const Tensor& edgeType);
  /// A sampled batch laid out the same way: per node type its rows' features [rows, width] (featured types) or
  /// their node ids int64 [rows] (embedded types; the other list's entry undefined), edges and relations in the
  /// batch's rows -> with the target type set, its first targetRows rows' logits [targetRows, outChannels] (the
  /// seeds come first), else every row's.
  Variable forward(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds, const Tensor& edgeIndex,
                   const Tensor& edgeType, int64_t targetRows);
  /// The layers one at a time, as a device runs them in blocks (models/HeteroRGCNBlocks.h): every node's input
  /// row [N, in] (embeddings, features or their Linear, type after type), then layer l over h, whose type t has
  /// rows[t] rows (the last over the target's first targetRows rows when the target type is set).
  Variable input(const std::vector<Tensor>& features) { return inputRows(features); }
  /// A sampled batch's input rows [rows, in] (as the batch forward above reads them).
  Variable input(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds) {
    std::vector<int64_t> rows;
    return batchInputRows(features, nodeIds, rows);
  }
  Variable layer(size_t l, const Variable& h, const std::vector<int64_t>& rows, const Tensor& edgeIndex,
                 const Tensor& edgeType, int64_t targetRows);
  size_t numLayers() const { return convs_.size(); }
  /// The first layer's input width (see above).
  int64_t inChannels() const { return in_; }
  const HeteroRGCNOptions& options() const { return opt_; }
  std::unique_ptr<Module> clone() const override;

 private:
  /// Every node's input row, [N, in]: embeddings, features or their Linear, type after type.
  Variable inputRows(const std::vector<Tensor>& features);
  /// A batch's input rows, [rows, in]: embedding rows at nodeIds, features or their Linear, type after type.
  Variable batchInputRows(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds,
                          std::vector<int64_t>& rows);
  /// A type's featured rows as the first layer takes them: as they are, or through the type's Linear.
  Variable featuredRows(size_t t, const Tensor& x, int64_t rows);
  /// The layers over h, whose type t has rows[t] rows; the last over the target's first targetRows rows.
  Variable layers(Variable h, const std::vector<int64_t>& rows, const Tensor& edgeIndex, const Tensor& edgeType,
                  int64_t targetRows);
  /// The last layer over the target rows [first, first + count) only (their incoming edges).
  Variable lastLayerOnTarget(const Variable& h, int64_t first, int64_t count, const Tensor& edgeIndex,
                             const Tensor& edgeType);

  HeteroRGCNOptions opt_;
  int64_t in_ = 0;
  bool project_ = false;  // featured types through a Linear each (their widths differ)
  std::vector<std::unique_ptr<Embedding>> embs_;  // per node type; null for a featured or empty type
  std::vector<std::unique_ptr<Linear>> lins_;     // per node type; null unless project_ and featured
  std::vector<std::unique_ptr<RGCNConv>> convs_;
};

}  // namespace gnn
