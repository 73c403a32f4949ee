// NodeModel: the node-level models the node programs train (today "gcn": models/NodeGCN.h), built by name,
// each with the weight decay of its parameter groups and the memory its width takes.
//
//   app::requireNodeModel(s.model, {"gcn"});                      // --model: UsageError listing the known ones
//   app::NodeModelSpec spec{"gcn", features, 16, classes, 0.5, /*cached=*/true};
//   std::unique_ptr<app::NodeModel> m = app::makeNodeModel(spec, gen);
//   Variable logits = m->forward(sparseFeatures, edgeIndex);
//   auto opt = flags.makeOptimizer(m->parameterGroups(flags.weightDecay));
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gnn/autograd/Variable.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/Random.h"
#include "gnn/tensor/SparseMatrix.h"
#include "loaders/Batch.h"
#include "models/BlockModel.h"

namespace gnn {
class BasicGNN;
}

namespace gnn::app {

/// What a node model is built from: its name, the data's widths and the program's flags.
struct NodeModelSpec {
  std::string name = "gcn";
  int64_t inChannels = 0, hidden = 16, numClasses = 0;
  double dropout = 0.5;
  /// Keep the normalised adjacency between forwards (full-graph training on one graph), else let each batch's
  /// go with its forward (Cluster-GCN: every step sees another subgraph).
  bool cached = true;

  /// node_property: the model is PyG's BasicGNN of the name's class (gcn: GCN, sage: GraphSAGE, gin: GIN, gat:
  /// GAT, gatv2: GAT with v2, pna: PNA, edgecnn: EdgeCNN), or a BasicGNN stack of another convolution (tag:
  /// TAGConv, transformer: TransformerConv, ...: basicGnnNodeModelNames()), built from the fields below;
  /// --weight-decay applies to every parameter, as torch.optim.Adam's weight_decay does.
  bool basicGnn = false;
  int64_t layers = 2, heads = 1, outHeads = -1;
  std::string act = "relu", norm = "none", jk = "none";
  /// SAGEConv's and EdgeConv's aggr; PNA's aggregators, comma-separated ("" = the model's default).
  std::string aggr;
  double inputDropout = 0, attnDropout = -1;
  /// A stacked convolution's keyword arguments as a JSON object (--conv-args; "" = the defaults).
  std::string convArgs;
  /// PNA's in-degree histogram of the training graph (PyG's `deg`).
  std::vector<int64_t> degreeHistogram;
  /// The BasicGNN these fields describe as PyG's JSON spec {"class": ..., "args": {...}} (PyG's arguments only).
  nlohmann::json basicGnnSpec() const;
};

/// A node classifier: the whole graph's logits [N, classes] from its features, sparse or dense, or a batch's.
class NodeModel {
 public:
  virtual ~NodeModel() = default;
  /// The model as the Trainer, the devices and the checksums see it.
  virtual BlockModel& module() = 0;
  virtual Variable forward(const SparseMatrix& x, const Tensor& edgeIndex) = 0;
  virtual Variable forward(const Variable& x, const Tensor& edgeIndex) = 0;
  virtual Variable forward(const Batch& batch) { return module().forward(batch); }
  /// Work on a batch ahead of its forward, from the loader's thread (ClusterLoader::Options::prepare).
  virtual void prepare(const Batch& batch) { (void)batch; }
  /// Keeps this graph's normalised adjacency between forwards also when the model is not cached.
  virtual void keepAdjacencyOf(const Tensor& edgeIndex, int64_t numNodes) {
    (void)edgeIndex;
    (void)numNodes;
  }
  /// Whether forward(batch) runs each layer over only the rows a neighbour batch's seeds need (PyG's
  /// trim_to_layer; the models that can: node_property's), returning the seeds' rows.
  virtual void setTrimToLayer(bool on) { (void)on; }
  /// PyG's model inside (node_property's models), for layer-wise inference; null for the library's GCN.
  virtual BasicGNN* basicGnn() { return nullptr; }
  /// The optimizer's parameter groups, each with its weight decay, `weightDecay` being --weight-decay.
  virtual std::vector<ParamGroup> parameterGroups(double weightDecay) = 0;
};

/// Every model makeNodeModel builds, by name.
const std::vector<std::string>& nodeModelNames();
/// node_property's models (PyG's BasicGNN classes by their short names).
const std::vector<std::string>& basicGnnNodeModelNames();
/// The in-degree histogram of a graph (PyG's PNA `deg`: entry d counts the nodes with d incoming edges).
std::vector<int64_t> inDegreeHistogram(const Tensor& edgeIndex, int64_t numNodes);
/// UsageError (naming --model) unless `name` is one of `allowed` and a known model.
void requireNodeModel(const std::string& name, const std::vector<std::string>& allowed);
/// The model `spec` names, its weights drawn from `gen`; UsageError listing the known ones for another name.
std::unique_ptr<NodeModel> makeNodeModel(const NodeModelSpec& spec, Generator& gen);
/// --hidden within the machine's memory for this model over `numNodes` nodes, before it is built
/// (requireFitsInMemory; `sizesFrom`: "" when the width is the command line's, else the checkpoint's path).
void requireNodeModelFits(const NodeModelSpec& spec, int64_t numNodes, const std::string& sizesFrom);

}  // namespace gnn::app
