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

#include "gnn/autograd/Variable.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/Random.h"
#include "gnn/tensor/SparseMatrix.h"
#include "loaders/Batch.h"
#include "models/BlockModel.h"

namespace gnn::app {

/// What a node model is built from: its name, the data's widths and the program's flags.
struct NodeModelSpec {
  std::string name = "gcn";
  int64_t inChannels = 0, hidden = 16, numClasses = 0;
  double dropout = 0.5;
  /// Keep the normalised adjacency between forwards (full-graph training on one graph), else let each batch's
  /// go with its forward (Cluster-GCN: every step sees another subgraph).
  bool cached = true;
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
  /// The optimizer's parameter groups, each with its weight decay, `weightDecay` being --weight-decay.
  virtual std::vector<ParamGroup> parameterGroups(double weightDecay) = 0;
};

/// Every model makeNodeModel builds, by name.
const std::vector<std::string>& nodeModelNames();
/// UsageError (naming --model) unless `name` is one of `allowed` and a known model.
void requireNodeModel(const std::string& name, const std::vector<std::string>& allowed);
/// The model `spec` names, its weights drawn from `gen`; UsageError listing the known ones for another name.
std::unique_ptr<NodeModel> makeNodeModel(const NodeModelSpec& spec, Generator& gen);
/// --hidden within the machine's memory for this model over `numNodes` nodes, before it is built
/// (requireFitsInMemory; `sizesFrom`: "" when the width is the command line's, else the checkpoint's path).
void requireNodeModelFits(const NodeModelSpec& spec, int64_t numNodes, const std::string& sizesFrom);

}  // namespace gnn::app
