// TypedLayerList: PyG layers on a heterogeneous graph laid out as one typed graph (PyG's HeteroData.to_homogeneous():
// the node types one after another, each edge's relation in edge_type, each node's type in node_type): each type's
// features through an optional `input` (a HeteroDictLinear, one Linear per type, so types of different widths meet
// in one), stacked type after type, then a LayerList (gnn/nn/models/LayerList.h) whose layers read the relations
// and node types they take (RGCNConv, FastRGCNConv, RGATConv, FiLMConv: edge_type; HeteroLinear: node_type). R-GCN
// (or R-GAT) as PyG's examples write it, and the model a `predict --pyg-model` spec {"to_homogeneous": {"input":
// {"class": "HeteroDictLinear", "args": {...}}, "layers": [...], "act": "relu"}, ...} describes. The PyG side: a
// module with `input` (optional) and `layers` (a torch.nn.ModuleList) whose forward is
//   x = torch.cat([input(x_dict)[t] for t in node_types]); x = layer(x, edge_index, edge_type) with act between;
// state_dict keys "input.lins.<type>.*" and "layers.<i>.*".
//
//   TypedLayerList model(spec["to_homogeneous"], gen);
//   HomogeneousGraph h = toHomogeneous(g, options);        // data/HeteroToHomogeneous.h
//   Variable out = model.forward(xPerType, h.edgeIndex, h.edgeType, h.nodeType);   // [N, out], type after type
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gnn/nn/HeteroDictLinear.h"
#include "gnn/nn/models/LayerList.h"

namespace gnn {

class TypedLayerList : public LayerList {
 public:
  /// spec: the layer list's keys ("layers", "act", "act_kwargs") and optionally "input": {"class":
  /// "HeteroDictLinear", "args": {...}}; std::invalid_argument naming a bad entry.
  TypedLayerList(const nlohmann::json& spec, Generator& gen, DType dtype = DType::F32);

  /// x: each node type's features [N_t, F_t], in the typed graph's order (without `input`, one width for all);
  /// edgeIndex int64 [2, E], edgeType int64 [E] and nodeType int64 [N] of the typed graph -> [N, out].
  Variable forward(const std::vector<std::pair<std::string, Variable>>& x, const Tensor& edgeIndex,
                   const Tensor& edgeType, const Tensor& nodeType);
  bool hasInput() const { return input_ != nullptr; }
  std::unique_ptr<Module> clone() const override;

 private:
  static nlohmann::json layersOnly(const nlohmann::json& spec);

  nlohmann::json fullSpec_;
  DType dtype_;
  std::unique_ptr<HeteroDictLinear> input_;
};

}  // namespace gnn
