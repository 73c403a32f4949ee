// GraphConv: the higher-order GNN operator of Morris et al. (AAAI 2019, "Weisfeiler and Leman Go Neural") as
// PyG 2.3.1's GraphConv,
//   x'_i = W_rel aggr_{j -> i} x_j + b + W_root x_i,
// aggr "add" (default), "mean", "max" or any aggregation PyG's `aggr` names (aggregationFromPyG) over the incoming edges (the
// graph's self-loops are ordinary edges; a node without edges aggregates 0). State_dict as PyG's:
// "lin_rel.weight" [out, in], "lin_rel.bias" [out] (bias), "lin_root.weight" [out, in]. Sum and mean run as one
// sparse product with the graph's adjacency, cached per graph as GCNConv's (no [E, F] messages); when out < in
// the product runs after the projection (A x W^T = A (x W^T): fewer columns to sum). PyG's bipartite form:
// in_channels (source, target) widths (lin_rel reads the sources, lin_root the targets), called with (x_src, x_dst).
//
//   auto conv = GraphConv::fromPyG({{"in_channels", 16}, {"out_channels", 32}, {"aggr", "mean"}}, gen);
//   Variable h = conv->forward(x, edgeIndex);                     // [N, 16] -> [N, 32]
//   auto rel = GraphConv::fromPyG({{"in_channels", {16, 8}}, {"out_channels", 32}}, gen);
//   Variable hDst = rel->forward(xSrc, xDst, edgeIndex);          // [S, 16], [T, 8] -> [T, 32]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class GraphConv : public MessagePassing {
 public:
  /// aggr: PyG's argument (a name, a list, or {"class", "args"}: aggregationFromPyG).
  GraphConv(int64_t inChannels, int64_t outChannels, Generator& gen, const nlohmann::json& aggr = "add",
            bool bias = true, DType dtype = DType::F32);
  /// PyG's (source, target) in_channels: lin_rel reads the source width, lin_root the target width.
  GraphConv(std::pair<int64_t, int64_t> inChannels, int64_t outChannels, Generator& gen,
            const nlohmann::json& aggr = "add", bool bias = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels an int or [source, target] widths, out_channels, aggr, bias).
  static std::unique_ptr<GraphConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex int64 [2, E] (row 0 source, row 1 target) -> [N, out].
  Variable forward(const Variable& x, const Tensor& edgeIndex);
  /// PyG's bipartite form (x_src, x_dst): xSrc [S, in_src], xDst [T, in_dst], edgeIndex's row 0 into xSrc and row 1
  /// into xDst -> [T, out]. Sum and mean as one product with the [T, S] count adjacency (not cached), the other
  /// aggregations gathering the sources.
  Variable forward(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;

 protected:
  /// Sum and mean as a sparse product; other aggregations: undefined (propagate gathers and reduces).
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  int64_t in_, out_;
  int64_t inDst_;  // lin_root's width: in_ unless PyG's (source, target) widths differ
  bool bias_;
  DType dtype_;
  std::unique_ptr<Linear> linRel_, linRoot_;
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
