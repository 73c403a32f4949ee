// Aggregation: how a message-passing layer reduces the messages arriving at each node, as a module any layer
// takes (PyG's torch_geometric.nn.aggr: `aggr="sum"` or an aggregation object), not code inside each layer.
// forward(x [E, F], index [E], dimSize) -> [dimSize, F]: row i reduces the rows of x whose index is i; a row no
// message reaches is 0 (PyG's default fill). The reductions are deterministic (a destination-sorted pass, no
// atomics), so the same bits come back for any thread count.
//
//   std::unique_ptr<Aggregation> mean = aggregationFromName("mean");
//   Variable h = mean->forward(messages, dst, numNodes);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

class Aggregation : public Module {
 public:
  /// Reduces x [E, F] by index (int64 [E], values in [0, dimSize)) into [dimSize, F].
  virtual Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const = 0;
  /// PyG's name of the reduction: "sum", "mean", "max".
  virtual const char* name() const = 0;
  /// What aggregationFromPyG builds this aggregation from again: its name, or {"class", "args"}.
  virtual nlohmann::json spec() const { return name(); }
};

/// The aggregation PyG names `name` ("sum" or its alias "add", "mean", "max"); std::invalid_argument listing
/// the known names otherwise.
std::unique_ptr<Aggregation> aggregationFromName(const std::string& name);

/// An aggregation as PyG's `aggr` argument gives it (aggregation_resolver): a name ("mean", "softmax",
/// "SoftmaxAggregation", ...), a list of them (MultiAggregation, mode cat) or {"class": ..., "args": {PyG's
/// keyword arguments}} (SoftmaxAggregation, PowerMeanAggregation, MultiAggregation, AttentionalAggregation, Set2Set,
/// SortAggregation, LSTMAggregation and the plain reductions).
/// std::invalid_argument naming what is not offered.
std::unique_ptr<Aggregation> aggregationFromPyG(const nlohmann::json& spec, Generator& gen, DType dtype = DType::F32);

}  // namespace gnn
