// HeteroConv: PyG 2.3.1's HeteroConv (torch_geometric/nn/conv/hetero_conv.py), a convolution per edge type of a
// heterogeneous graph. For each edge type of edge_index_dict (in that order) that has a convolution, the layer runs
// it on the source and destination types' features (a same-type relation on x_dict[type] alone, any other on the
// pair (x_dict[src], x_dict[dst])) and keeps the output for the destination type; each destination type's outputs
// are then grouped by `aggr` (PyG's group(): "sum", "mean", "max", "min" over the relations, "cat" along the
// features, "none" = PyG's None: stacked as [N, relations, F]). Node types no relation ends at are left out of the
// output, as PyG's dict leaves them. Module keys "convs.<src>__<rel>__<dst>" (PyG's ModuleDict: '__'.join of the
// tuple, a '.' stored as '#'), so a PyG state_dict maps one to one.
//
// Convolutions: SAGEConv, GraphConv, GATConv (add_self_loops=False between two types, as PyG's
// check_add_self_loops demands) and GINConv on any relation (their bipartite forms; PyG's (source, target)
// in_channels for the first three); a same-type relation also takes any layer of ConvRegistry that reads node
// features and edges only (GCNConv, ...), called as PyG calls it there. Layers that need edge features are refused.
//
//   std::vector<HeteroConv::Entry> convs;
//   convs.push_back({{"paper", "cites", "paper"}, "SAGEConv", convFromPyG("SAGEConv", {{"in_channels", 16},
//                                                                                     {"out_channels", 8}}, gen)});
//   convs.push_back({{"author", "writes", "paper"}, "SAGEConv", convFromPyG("SAGEConv", {{"in_channels", {4, 16}},
//                                                                                       {"out_channels", 8}}, gen)});
//   HeteroConv conv(std::move(convs), "sum");
//   std::map<std::string, Variable> out = conv.forward(xDict, {{{"paper", "cites", "paper"}, cites},
//                                                              {{"author", "writes", "paper"}, writes}});
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gnn/nn/EdgeType.h"
#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

class HeteroConv : public Module {
 public:
  /// One edge type's convolution and its PyG class name (ConvRegistry's).
  struct Entry {
    EdgeType type;
    std::string className;
    std::unique_ptr<Module> conv;
  };

  /// convs in PyG's dict order (the state_dict's); aggr: "sum", "mean", "max", "min", "cat" or "none".
  /// std::invalid_argument for an edge type given twice, a class without the form its relation needs, or another
  /// aggr.
  explicit HeteroConv(std::vector<Entry> convs, std::string aggr = "sum");
  /// From JSON: {"convs": [{"edge_type": [src, rel, dst], "class": "SAGEConv", "args": {...}}, ...],
  /// "aggr": "sum" | ... | null}.
  static std::unique_ptr<HeteroConv> fromPyG(const nlohmann::json& spec, Generator& gen, DType dtype = DType::F32);

  /// xDict: features per node type; edgeIndexDict: int64 [2, E] per edge type, row 0 into the source type's rows,
  /// row 1 into the destination's. Relations without a convolution are skipped (as PyG's); a relation whose types
  /// have no features is an error naming it. -> per destination type [N_dst, F] ([N_dst, k F] for "cat",
  /// [N_dst, k, F] for "none").
  std::map<std::string, Variable> forward(const std::map<std::string, Variable>& xDict,
                                          const EdgeIndexDict& edgeIndexDict);

  /// The module key PyG's HeteroConv gives an edge type: "src__rel__dst" with '.' as '#'.
  static std::string moduleKey(const EdgeType& type);
  const std::string& aggr() const { return aggr_; }
  size_t numRelations() const { return convs_.size(); }
  std::unique_ptr<Module> clone() const override;

 private:
  Variable runConv(const Entry& e, const std::map<std::string, Variable>& xDict, const Tensor& edgeIndex);

  std::vector<Entry> convs_;
  std::map<std::string, size_t> byKey_;
  std::string aggr_;
};

/// PyG 2.3.1's group(xs, aggr) (hgt_conv.py) over one destination type's outputs, in order: "none" stacks them
/// [N, k, F] (even one); one output is returned as it is; "cat" concatenates the features; "sum", "mean", "max",
/// "min" reduce over the outputs (max and min: the gradient to the first output holding the extreme, as torch.max's
/// index). std::invalid_argument for widths that disagree or another aggr.
Variable heteroGroup(const std::vector<Variable>& xs, const std::string& aggr);

}  // namespace gnn
