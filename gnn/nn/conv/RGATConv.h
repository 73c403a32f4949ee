// RGATConv: the relational graph attention layer of Busbridge et al. (2019, "Relational Graph Attention
// Networks", arXiv:1904.05811) as PyG 2.3.1's RGATConv (torch_geometric/nn/conv/rgat_conv.py). Per edge
// e = j -> i of relation r, with Theta_r [in, heads * out] (bases: sum_b att[r, b] basis[b]; blocks: block-diagonal):
//   g_i = x_i Theta_r, g_j = x_j Theta_r, q_i = g_i Q, k_j = g_j K          (Q, K [heads * out, heads * dim])
//   logit_e = leakyRelu(q_i + k_j (+ (W_e a_e) E))      additive-self-attention (dim must be 1)
//           = q_i * k_j (* (W_e a_e) E)                 multiplicative-self-attention
//   alpha_e = softmax of logit_e over i's incoming edges (across-relation) or i's edges of relation r
//             (within-relation), per column (head, d)
//   x'_i[h, d] = sum_e alpha_e[h, d] g_j[h]  (heads * dim * out; concat=False averages the heads) + bias,
// with PyG's cardinality-preserving `mod`s (the paper's section 2.3): "additive" adds w * g_j to each message,
// "scaled" multiplies it by MLP(|N(i)|) = relu(|N(i)| l1 + b1) l2 + b2 (per channel), "f-additive" adds 1 to every
// positive alpha, "f-scaled" multiplies alpha by |N(i)| (|N(i)|: i's incoming edges of every relation).
// Dropout on alpha in training, and only without mod (PyG's order). State_dict as PyG's: "q", "k" [heads * out,
// heads * dim], "bias" [heads * dim * out] ([dim * out] when not concat), "e" [heads * out, heads * dim] and
// "lin_edge.weight" [heads * out, edge_dim] with edge_dim, "weight" [R, in, heads * out] (bases: "att" [R,
// num_bases] and "basis" [num_bases, in, heads * out]; blocks: "weight" [R, B, in / B, heads * out / B]), "w" [out],
// "l1", "b1", "b2" [1, out], "l2" [out, out] (the mods' parameters, there whatever the mod, as PyG's).
//
//   auto conv = RGATConv::fromPyG({{"in_channels", 16}, {"out_channels", 8}, {"num_relations", 3},
//                                  {"heads", 2}}, gen);
//   Variable h = conv->forward(x, edgeIndex, edgeType);                  // [N, 16] -> [N, 16]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/system/Random.h"

namespace gnn {

/// PyG's keyword arguments of RGATConv beyond in_channels, out_channels and num_relations.
struct RGATConvOptions {
  /// 0 for PyG's None (at most one of them set).
  int64_t numBases = 0, numBlocks = 0;
  /// "" for PyG's None, else "additive", "scaled", "f-additive" or "f-scaled".
  std::string mod;
  std::string attentionMechanism = "across-relation";
  std::string attentionMode = "additive-self-attention";
  int64_t heads = 1, dim = 1;
  bool concat = true;
  double negativeSlope = 0.2;
  double dropout = 0.0;
  /// Width of the edge features (PyG's edge_dim), 0 for None.
  int64_t edgeDim = 0;
  bool bias = true;
  DType dtype = DType::F32;
};

class RGATConv : public MessagePassing {
 public:
  RGATConv(int64_t inChannels, int64_t outChannels, int64_t numRelations, Generator& gen,
           RGATConvOptions options = {});
  /// From PyG's keyword arguments (in_channels as an int, out_channels, num_relations, num_bases, num_blocks, mod,
  /// attention_mechanism, attention_mode, heads, dim, concat, negative_slope, dropout, edge_dim, bias).
  static std::unique_ptr<RGATConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex int64 [2, E] (row 0 source, row 1 target), edgeType int64 [E] (values below
  /// num_relations), edgeAttr [E, edge_dim] (or [E] for edge_dim 1) optional, read only with edge_dim, as PyG's
  /// -> [N, heads * dim * out] (concat) or [N, dim * out].
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Tensor& edgeType,
                   const Variable& edgeAttr = Variable());
  /// PyG's reset_parameters: glorot weights, q, k, e and lin_edge; zero bias, b1, b2; ones w and l1; l2 all
  /// 1 / out (PyG's line for l2 discards its value and leaves the tensor uninitialised: 1 / out is what it means).
  void resetParameters(Generator& gen);
  std::unique_ptr<Module> clone() const override;

  const RGATConvOptions& options() const { return opt_; }

 private:
  /// The edges sorted by (target, relation), stable: sources, targets and types in that order, each edge's
  /// original position, and row pointers over the (target, relation) groups [N R + 1] and the targets [N + 1].
  struct SortedEdges {
    Tensor src, dst, type, order, pairPtr, targetPtr;
  };
  SortedEdges sortedEdges(const Tensor& edgeIndex, const Tensor& edgeType, int64_t numNodes) const;
  /// x Theta_r for every node and relation, [N R, heads * out] (row i R + r).
  Variable relationProducts(const Variable& x) const;
  /// Each edge's attention logits [E, heads * dim] from its target's and source's rows g_i, g_j.
  Variable logits(const Variable& gi, const Variable& gj, const Variable& edgeAttr, const SortedEdges& s) const;
  /// The normalised attention with the mods that change alpha (f-additive) or dropout.
  Variable attention(const Variable& logits, const SortedEdges& s) const;
  /// sum over i's edges of alpha_e g_j (with the "additive" mod's w g_j), then the degree mods, [N, H D out].
  Variable aggregateMessages(const Variable& alpha, const Variable& gj, const SortedEdges& s, int64_t n) const;
  /// The heads concatenated or averaged, plus the bias.
  Variable finish(const Variable& aggregated, int64_t n) const;

  int64_t in_, out_, relations_;
  RGATConvOptions opt_;
  Variable* q_;
  Variable* k_;
  Variable* bias_ = nullptr;
  Variable* e_ = nullptr;
  Variable* weight_ = nullptr;
  Variable* att_ = nullptr;
  Variable* basis_ = nullptr;
  Variable *w_, *l1_, *b1_, *l2_, *b2_;
  std::unique_ptr<Linear> linEdge_;
};

}  // namespace gnn
