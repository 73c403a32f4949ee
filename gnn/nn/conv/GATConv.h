// GATConv: the graph attentional operator of Velickovic et al. (ICLR 2018), as PyG 2.3.1's GATConv:
//   x'_i = sum over j in N(i) + {i} of alpha_ij Theta x_j (per head; heads concatenated or averaged) + b,
//   alpha_ij = softmax_j(leakyRelu(a_src . Theta x_j + a_dst . Theta x_i (+ a_edge . Theta_e e_ij))),
// with PyG's arguments and defaults (heads=1, concat=True, negative_slope=0.2, dropout=0.0 on the attention in
// training, add_self_loops=True, edge_dim=None, fill_value="mean", bias=True) and its parameters named and
// shaped as PyG's named_parameters: "att_src", "att_dst" [1, heads, out], "att_edge" [1, heads, out] and
// "lin_edge.weight" [heads * out, edge_dim] with edge_dim, "bias" [heads * out] ([out] when not concat),
// "lin_src.weight" [heads * out, in]. PyG's state_dict also lists "lin_dst.weight": the same tensor (with an
// int in_channels PyG sets lin_dst = lin_src), which named_parameters and this layer hold once, registered as
// an alias (Module::registerAlias): namedStateEntries() lists both keys, so a PyG state_dict maps one to one.
// Self-loops keep the edge count static: the graph's own self-loop edges get no weight, and each node attends
// to itself through one extra term (edge features of the loop from fill_value). The attention runs fused
// (gatAttention: heads numbers per edge, no [E, heads * out] messages).
// PyG's bipartite form: in_channels (source, target) gives separate "lin_src.weight" [heads * out, source] and
// "lin_dst.weight" [heads * out, target]; forward(xSrc, xDst, edgeIndex) attends from source rows to target rows
// (an int in_channels applies the one lin_src to both sides, as PyG's). It takes add_self_loops=False, as PyG's
// to_hetero and HeteroConv demand for a relation between two types.
//
//   GATConvOptions o;
//   o.heads = 8;
//   GATConv conv(1433, 8, gen, o);
//   Variable h = conv.forward(x, edgeIndex);                  // [N, 64]
//   Variable h = conv.forward(xSparse, edgeIndex);            // sparse features (SparseMatrix [N, 1433])
//   o.inDstChannels = 32; o.addSelfLoops = false;           // in_channels (1433, 32)
//   GATConv rel(1433, 8, gen, o);
//   Variable hDst = rel.forward(xSrc, xDst, edgeIndex);       // [S, 1433], [T, 32] -> [T, 64]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/nn/conv/SelfLoopFill.h"
#include "gnn/ops/GraphAttention.h"
#include "gnn/system/Random.h"

namespace gnn {

/// PyG's keyword arguments of GATConv (in_channels an int or a (source, target) pair; PyG's lazy -1 is not
/// offered).
struct GATConvOptions {
  /// The target width of a (source, target) in_channels: a separate lin_dst; 0 for an int in_channels (lin_dst is
  /// lin_src, PyG's sharing).
  int64_t inDstChannels = 0;
  int64_t heads = 1;
  bool concat = true;
  double negativeSlope = 0.2;
  double dropout = 0.0;
  bool addSelfLoops = true;
  /// Width of the edge features (PyG's edge_dim), 0 for None.
  int64_t edgeDim = 0;
  SelfLoopFill fillValue;
  bool bias = true;
  DType dtype = DType::F32;
};

class GATConv : public MessagePassing {
 public:
  GATConv(int64_t inChannels, int64_t outChannels, Generator& gen, GATConvOptions options = {});
  /// From PyG's keyword arguments (in_channels, out_channels, heads, concat, negative_slope, dropout,
  /// add_self_loops, edge_dim, fill_value, bias): std::invalid_argument for any other or an unsupported value.
  static std::unique_ptr<GATConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edge_index int64 [2, E], edge_attr [E, edge_dim] (or [E] for edge_dim 1) optional: read only
  /// with edge_dim, as PyG's. -> [N, heads * out] (concat) or [N, out].
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable());
  /// PyG's bipartite form (x_src, x_dst): xSrc [S, in] through lin_src, xDst [T, in_dst] through lin_dst (lin_src
  /// with an int in_channels), edgeIndex's row 0 into the sources and row 1 into the targets -> [T, heads * out]
  /// (or [T, out]). std::invalid_argument with add_self_loops (PyG's check_add_self_loops refuses it).
  Variable forward(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex,
                   const Variable& edgeAttr = Variable());
  /// Same with constant sparse input features (bag of words): the projection runs as a sparse product, the
  /// rest as for dense input (the same map up to rounding).
  Variable forward(const SparseMatrix& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable());
  /// Glorot weights and attention vectors, zero bias (PyG's reset_parameters).
  void resetParameters(Generator& gen);
  std::unique_ptr<Module> clone() const override;

  const GATConvOptions& options() const { return opt_; }

 private:
  /// Everything after the projection h = x Theta^T [N, heads * out].
  Variable attend(const Variable& h, const Tensor& edgeIndex, const Variable& edgeAttr);
  /// The edges' logit terms a_edge . (W_e e) [E, heads] (undefined without edge_dim or edge_attr), and the added
  /// self-loops' [numNodes, heads] into *loop when addSelfLoops.
  Variable edgeTerms(const Variable& edgeAttr, const Tensor& edgeIndex, int64_t numNodes, Variable* loop);
  GraphAttentionOptions attentionOptions() const;

  int64_t in_, out_;
  GATConvOptions opt_;
  Variable* attSrc_;
  Variable* attDst_;
  Variable* attEdge_ = nullptr;
  Variable* bias_ = nullptr;
  Linear linSrc_;
  std::unique_ptr<Linear> linDst_;  // with a (source, target) in_channels only
  std::unique_ptr<Linear> linEdge_;
};

}  // namespace gnn
