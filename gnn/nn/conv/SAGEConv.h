// SAGEConv: GraphSAGE's operator (Hamilton et al., NeurIPS 2017) as PyG 2.3.1's SAGEConv,
//   x'_i = W_l aggr_{j -> i} x_j + b + W_r x_i,
// with aggr "mean" (default), "sum" ("add"), "max" (or another of aggregationFromName's names) over the
// incoming edges (the graph's own self-loops are ordinary edges; a node without edges aggregates 0),
// root_weight (the W_r x_i term), project (the sources first go through relu(lin(x)); the root term keeps the
// raw x, as PyG's), normalize (rows L2-normalised, F.normalize with eps 1e-12). Parameters as PyG's
// state_dict: "lin_l.weight" [out, in], "lin_l.bias" [out], "lin_r.weight" [out, in] (no bias), and with
// project "lin.weight" [in, in], "lin.bias" [in]. Sum and mean run as one sparse product with the graph's
// adjacency (no [E, F] messages), cached per graph as GCNConv's; max gathers. PyG's bipartite form: in_channels
// (source, target) widths (lin_l and lin reading the sources, lin_r the targets), called with (x_src, x_dst), as
// HeteroConv and to_hetero call it for a relation between two node types.
//
//   auto conv = SAGEConv::fromPyG({{"in_channels", 64}, {"out_channels", 32}, {"aggr", "max"}}, gen);
//   Variable h = conv->forward(x, edgeIndex);      // [N, 64] -> [N, 32]
//   Variable h = conv->forward(xSparse, edgeIndex);  // SparseMatrix features
//   auto rel = SAGEConv::fromPyG({{"in_channels", {16, 8}}, {"out_channels", 32}}, gen);
//   Variable hDst = rel->forward(xSrc, xDst, edgeIndex);  // [S, 16], [T, 8] -> [T, 32]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/system/Random.h"

namespace gnn {

/// PyG's keyword arguments, with PyG's defaults.
struct SAGEConvOptions {
  std::string aggr = "mean";
  bool normalize = false;
  bool rootWeight = true;
  bool project = false;
  bool bias = true;
  DType dtype = DType::F32;
};

class SAGEConv : public MessagePassing {
 public:
  SAGEConv(int64_t inChannels, int64_t outChannels, Generator& gen, SAGEConvOptions options = {});
  /// PyG's (source, target) in_channels: lin_l (and project's lin) read the source width, lin_r the target width.
  SAGEConv(std::pair<int64_t, int64_t> inChannels, int64_t outChannels, Generator& gen, SAGEConvOptions options = {});
  /// From PyG's keyword arguments (in_channels, out_channels, aggr, normalize, root_weight, project, bias).
  /// in_channels is an int or [source, target] widths (not -1, lazy); aggregations not named by one string that
  /// aggregationFromName knows (lists, "lstm", modules) are refused, as are MessagePassing's extra keywords
  /// (aggr_kwargs, flow, node_dim, decomposed_layers).
  static std::unique_ptr<SAGEConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex int64 [2, E] (row 0 source, row 1 target) -> [N, out]. The source and target widths must
  /// agree (PyG's x becomes (x, x)).
  Variable forward(const Variable& x, const Tensor& edgeIndex);
  /// The outputs of the first numTargets nodes only [numTargets, out] (PyG's bipartite (x, x[:numTargets])
  /// form, as neighbour batches trimmed to each layer use it): every edge must end at one of them. Sum and mean
  /// aggregate into those rows alone; the others run the whole forward and keep those rows.
  Variable forward(const Variable& x, const Tensor& edgeIndex, int64_t numTargets);
  /// PyG's bipartite form (x_src, x_dst): outputs [targets, out] for the rows of xDst, edgeIndex's row 0 indexing
  /// xSrc [S, in_src] and row 1 xDst [T, in_dst]. Sum and mean run as one product with the [T, S] count adjacency;
  /// max and the others gather the (projected) sources and reduce them at the targets.
  Variable forward(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex);
  /// Whether the bipartite form is one sparse product over the sources as they are (sum or mean, no project), so
  /// a trimmed layer reads the targets' rows alone rather than running the whole forward.
  bool takesBipartite() const { return linearAggregation() && !lin_; }
  /// Same with constant sparse input features (bag of words), the same map up to rounding: the Linear layers
  /// that read x run as sparse products (sum and mean then aggregate x W_l^T whatever the widths); without
  /// project, max and the other aggregations read x's rows themselves and run on its dense copy.
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;
  const SAGEConvOptions& options() const { return opt_; }

 protected:
  /// Sum and mean as a sparse product with the adjacency (mean: rows scaled by 1 / in-degree); other
  /// aggregations: undefined (propagate gathers the messages and reduces them).
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  SparseMatrix adjacency(const Tensor& edgeIndex, int64_t numNodes) const;
 public:
  /// From now on this layer uses `other`'s adjacency cache (the same aggregation required): the layers of a
  /// model on one graph build its matrix, and the transpose the backward builds, once (a 245k-node graph's
  /// are ~150 MB each). The shared cache keeps the two most recent graphs.
  void shareAdjacencyWith(SAGEConv& other);

 private:
  /// Sum or mean: linear in the messages (a sparse product; the Linear may go first).
  bool linearAggregation() const;
  /// W_l aggr(src) + b [N, out] (sum and mean project first when out < in).
  Variable neighbourTerm(const Variable& src, const Tensor& edgeIndex, int64_t numNodes);
  /// aggr(src W_l^T) + b from the projected sources srcW [N, out] (sum and mean only).
  Variable projectedNeighbourTerm(const Variable& srcW, const Tensor& edgeIndex, int64_t numNodes);
  /// Adds the root term (when defined) and normalises the rows (normalize).
  Variable finish(Variable out, const Variable& root) const;

  int64_t in_, out_;
  int64_t inDst_;  // lin_r's width: in_ unless PyG's (source, target) widths differ
  SAGEConvOptions opt_;
  // Built in PyG's order (lin, lin_l, lin_r), which is also their registration order.
  std::unique_ptr<Linear> lin_;  // project only
  std::unique_ptr<Linear> linL_;
  std::unique_ptr<Linear> linR_;  // root_weight only
  // The last graph's adjacency (sum, mean); a clone starts empty.
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
