#include "app/NodeModel.h"

#include <algorithm>
#include <functional>

#include "app/MemoryBounds.h"
#include "app/Program.h"
#include "models/NodeGCN.h"

namespace gnn::app {

namespace {

/// Kipf & Welling's two-layer GCN.
class GcnNodeModel final : public NodeModel {
 public:
  GcnNodeModel(const NodeModelSpec& spec, Generator& gen)
      : net_(spec.inChannels, spec.hidden, spec.numClasses, gen, options(spec)) {}

  BlockModel& module() override { return net_; }
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex) override { return net_.forward(x, edgeIndex); }
  Variable forward(const Variable& x, const Tensor& edgeIndex) override { return net_.forward(x, edgeIndex); }
  Variable forward(const Batch& batch) override { return net_.forward(batch); }
  void prepare(const Batch& batch) override { net_.prepare(batch); }
  void keepAdjacencyOf(const Tensor& edgeIndex, int64_t numNodes) override {
    net_.keepAdjacencyOf(edgeIndex, numNodes);
  }
  std::vector<ParamGroup> parameterGroups(double weightDecay) override {
    // The paper's L2 regularisation applies to the first layer only (Kipf & Welling 2017, section 5.2).
    return {{net_.conv1().parameters(), weightDecay}, {net_.conv2().parameters(), 0.0}};
  }

 private:
  static NodeGCNOptions options(const NodeModelSpec& spec) {
    NodeGCNOptions mo;
    mo.dropout = spec.dropout;
    mo.cached = spec.cached;
    return mo;
  }

  NodeGCN net_;
};

struct NodeModelEntry {
  std::string name;
  std::function<std::unique_ptr<NodeModel>(const NodeModelSpec&, Generator&)> make;
  /// Bytes the model takes at `spec`'s width over `numNodes` nodes, and what they are.
  std::function<double(const NodeModelSpec&, int64_t numNodes)> bytes;
  std::function<std::string(int64_t numNodes)> what;
};

const std::vector<NodeModelEntry>& entries() {
  static const std::vector<NodeModelEntry> all = {
      {"gcn", [](const NodeModelSpec& s, Generator& g) { return std::make_unique<GcnNodeModel>(s, g); },
       // The two layers' weights with their gradients, Adam's moments and the best epoch's copy, and a few
       // activations of every node.
       [](const NodeModelSpec& s, int64_t numNodes) {
         const double h = static_cast<double>(s.hidden), f = static_cast<double>(s.inChannels),
                      k = static_cast<double>(s.numClasses), n = static_cast<double>(numNodes);
         return (f * h + h * k + h + k) * 6 * 4 + n * h * 6 * 4;
       },
       [](int64_t numNodes) {
         return "a two-layer GCN's weights and optimizer state, and its activations over " +
                std::to_string(numNodes) + " nodes";
       }},
  };
  return all;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

const NodeModelEntry& entry(const std::string& name) {
  for (const NodeModelEntry& e : entries())
    if (e.name == name) return e;
  throw UsageError("--model '" + name + "': must be one of " + joined(nodeModelNames()));
}

}  // namespace

const std::vector<std::string>& nodeModelNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const NodeModelEntry& e : entries()) v.push_back(e.name);
    return v;
  }();
  return names;
}

void requireNodeModel(const std::string& name, const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
    throw UsageError("--model '" + name + "': must be one of " + joined(allowed));
  entry(name);
}

std::unique_ptr<NodeModel> makeNodeModel(const NodeModelSpec& spec, Generator& gen) {
  return entry(spec.name).make(spec, gen);
}

void requireNodeModelFits(const NodeModelSpec& spec, int64_t numNodes, const std::string& sizesFrom) {
  const NodeModelEntry& e = entry(spec.name);
  requireFitsInMemory("hidden", static_cast<double>(spec.hidden), e.bytes(spec, numNodes), sizesFrom,
                      e.what(numNodes));
}

}  // namespace gnn::app
