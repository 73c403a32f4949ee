// Graph attention ops: GAT's and GATv2's attention over each node's incoming edges fused with the weighted sum
// of the source rows (PyG 2.3.1's GATConv / GATv2Conv edge_update + softmax + propagate), and the small ops
// around them (per-head dot products, the edge features of added self-loops). The attention keeps `heads`
// numbers per edge, never an N x N matrix; each target's row is computed alone in edge order over a CSR sorted
// by target, and the source-side gradients over one sorted by source: no atomics, the same bits for any
// thread count and any padding. The two groupings are cached per edge_index, so a training loop sorts once.
//
//   Variable a = headDot(h, attSrc), b = headDot(h, attDst);           // [N, heads]
//   Variable out = gatAttention(h, a, b, edgeIndex);                     // [N, heads * C]
#pragma once
#include <string>

#include "gnn/autograd/Variable.h"

namespace gnn {

struct GraphAttentionOptions {
  /// LeakyReLU's slope for negative logits (PyG's negative_slope).
  double negativeSlope = 0.2;
  /// PyG's add_self_loops with a static edge count: the graph's own self-loop edges get no weight (as if
  /// removed) and each node attends to itself through one extra term (its own logit, its own row).
  bool selfLoops = true;
  /// Dropout on the normalised attention, in training only: the edges' [E, heads] mask and the self terms'
  /// [N, heads] mask from two streams of the current ExecutionContext (as dropout()), so the same key gives the
  /// same bits, and the real edges' and nodes' draws do not move when padding appends edges and nodes.
  double dropout = 0.0;
  bool training = false;
  /// The output's heads averaged ([N, C] instead of [N, heads * C]): PyG's concat=False, as meanAxis over the
  /// heads of the [N, heads, C] view would give it (the same bits), without that tensor.
  bool meanHeads = false;
};

/// GAT's attention (Velickovic et al. 2018; PyG's GATConv): per target i, head h, incoming edge e = j -> i,
///   alpha_e = softmax over i's terms of leakyRelu(aSrc[j, h] + aDst[i, h] + aEdge[e, h]),
///   out[i, h*C .. h*C + C) = sum_e alpha_e h[j, h*C ..) (+ alpha_self h[i, h*C ..) with selfLoops, whose
///   logit reads aSrc[i], aDst[i] and aLoop[i]),
/// h [N, heads * C], aSrc and aDst [N, heads], aEdge [E, heads] and aLoop [N, heads] optional (0 when
/// undefined), edgeIndex int64 [2, E] (row 0 source, row 1 target) -> [N, heads * C] ([N, C] with meanHeads).
/// A node with no term gets zeros. Saves the attention (one row per term: kept edges and self terms) and the
/// inputs' values; the edges' groupings by target and by source are built once per edge_index (cached by its
/// storage, view and version).
/// bias (optional, [out width]) is added to every output row inside the op (PyG's GATConv bias; the bits of
/// add(out, bias) without its pass and tape entry).
Variable gatAttention(const Variable& h, const Variable& aSrc, const Variable& aDst, const Tensor& edgeIndex,
                      const Variable& aEdge = Variable(), const Variable& aLoop = Variable(),
                      const GraphAttentionOptions& options = {}, const Variable& bias = Variable());

/// GATv2's attention (Brody et al. 2022; PyG's GATv2Conv): per target i, head h and edge e = j -> i,
///   alpha_e = softmax over i's terms of sum_c att[h, c] leakyRelu(xr[i, hc] + xl[j, hc] + edgeTerm[e, hc]),
///   out[i, h*C ..) = sum_e alpha_e xl[j, h*C ..) (+ the self term of xl[i], xr[i], loopTerm[i]),
/// xl and xr [N, heads * C] (may be one Variable), att [heads, C] (or [1, heads, C]), edgeTerm [E, heads * C]
/// and loopTerm [N, heads * C] optional -> [N, heads * C] ([N, C] with meanHeads).
Variable gatv2Attention(const Variable& xl, const Variable& xr, const Variable& att, const Tensor& edgeIndex,
                        const Variable& edgeTerm = Variable(), const Variable& loopTerm = Variable(),
                        const GraphAttentionOptions& options = {});

/// Per-head dot products out[n, h] = sum_c x[n, h*C + c] att[h, c] for x [N, heads * C] and att [heads, C] (or
/// [1, heads, C], PyG's att_src) -> [N, heads]: PyG's (x.view(-1, H, C) * att).sum(-1) without the [N, H, C]
/// product.
Variable headDot(const Variable& x, const Variable& att);

/// The edge features PyG's add_self_loops gives the loop it adds at each node, by fill_value's reduction over
/// the node's incoming edges that are not self-loops (those are removed first): "mean" (0 for none), "add" (or
/// "sum"), "max", "min" (0 for none) of edgeAttr [E, D] -> [numNodes, D]. The gradient flows to the edges
/// reduced (max, min: to the first edge holding the extreme).
Variable selfLoopAttr(const Variable& edgeAttr, const Tensor& edgeIndex, int64_t numNodes, const std::string& reduce);

}  // namespace gnn
