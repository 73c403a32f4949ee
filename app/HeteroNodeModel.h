// HeteroNodeModel: the node models node_property trains on a heterogeneous graph ("rgcn": models/HeteroRGCN.h;
// "hgt": models/HeteroHGT.h), built by name as app/NodeModel.h builds the homogeneous ones, each with the memory
// its width takes. They read every node type's features and the typed graph's edges and relations
// (data/HeteroToHomogeneous.h) and give the target type's logits; or a fixed-size batch's rows, laid out the same
// way (app/HeteroNodeBatches.h).
//
//   app::HeteroNodeModelSpec spec;
//   spec.name = "hgt";  spec.nodeTypes = nodeTypes;  spec.edgeTypes = h.edgeTypeNames;  spec.targetType = 3;  // paper
//   spec.numRelations = 7;  spec.numClasses = classes;
//   app::requireHeteroNodeModelFits(spec, "");
//   std::unique_ptr<app::HeteroNodeModel> m = app::makeHeteroNodeModel(spec, gen);
//   Variable logits = m->forward(features, h.edgeIndex, h.edgeType);      // [papers, classes]
//   Variable seeds = m->forward(st.features, st.nodeIds, st.edgeIndex, st.edgeType, st.targetRows);  // a batch
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gnn/autograd/Variable.h"
#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"
#include "gnn/nn/EdgeType.h"
#include "models/BlockModel.h"
#include "models/HeteroRGCN.h"
#include "models/TypedGraphBatch.h"

namespace gnn::app {

/// What a heterogeneous node model is built from: its name, the graph's node types and relations, the flags.
struct HeteroNodeModelSpec {
  std::string name = "rgcn";
  /// In the typed graph's order, each with its node count and feature width (0: none).
  std::vector<HeteroRGCNNodeType> nodeTypes;
  /// The typed graph's relations in order (numRelations of them) and their edges in all.
  std::vector<EdgeType> edgeTypes;
  int64_t numEdges = 0;
  int64_t targetType = 0;  ///< the classified type's position in nodeTypes
  int64_t numRelations = 1, hidden = 64, numClasses = 0, layers = 2, numBases = 0, heads = 2;
  double dropout = 0.5;
  std::string norm = "none";  ///< hgt: "layer", a LayerNorm per type after each layer (HeteroHGTOptions)
};

class HeteroNodeModel {
 public:
  virtual ~HeteroNodeModel() = default;
  /// The model as the Trainer, the checksums and a device (its blocks: models/HeteroRGCNBlocks.h,
  /// models/HeteroHGTBlocks.h, over the whole graph's TypedGraphBatch) see it.
  virtual BlockModel& module() = 0;
  /// features: per node type (undefined where it has none) -> the target type's logits [N_target, classes]. HGT
  /// also takes undefined edges: the relations of setWholeGraphRelations.
  virtual Variable forward(const std::vector<Tensor>& features, const Tensor& edgeIndex, const Tensor& edgeType) = 0;
  /// A fixed-size batch laid out as one typed graph (app/HeteroNodeBatches.h): per node type its rows' features or
  /// node ids (featureless types) -> the target type's first targetRows rows' logits [targetRows, classes].
  virtual Variable forward(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds,
                           const Tensor& edgeIndex, const Tensor& edgeType, int64_t targetRows) = 0;
  /// The rows per type of the batches a device runs module()'s blocks on (a sampled batch's: R-GCN only); the
  /// whole graph's until set.
  virtual void setBatchLayout(const TypedBatchLayout& layout) = 0;
  /// The whole graph's relations as the dataset holds them, each in its types' own ids (PyG's edge_index_dict): a
  /// model that reads relations one by one (HGT) takes these for a full-batch forward given no typed edges
  /// (node_property then drops the typed graph's copy of every edge). Others ignore them.
  virtual void setWholeGraphRelations(std::vector<std::pair<EdgeType, Tensor>> relations) { (void)relations; }
};

/// The whole graph as a device's batch lays it out (models/TypedGraphBatch.h): every type's nodes, the target's
/// rows all read by the loss.
TypedBatchLayout wholeGraphLayout(const HeteroNodeModelSpec& spec);

/// Every model makeHeteroNodeModel builds, by name.
const std::vector<std::string>& heteroNodeModelNames();
/// The model `spec` names, its weights drawn from `gen`; UsageError listing the known ones for another name.
std::unique_ptr<HeteroNodeModel> makeHeteroNodeModel(const HeteroNodeModelSpec& spec, Generator& gen);
/// --hidden within the machine's memory for this model over the graph, before it is built (requireFitsInMemory;
/// `sizesFrom` "" when the width is the command line's).
void requireHeteroNodeModelFits(const HeteroNodeModelSpec& spec, const std::string& sizesFrom);

}  // namespace gnn::app
