// RGCNConv: the relational graph convolution of Schlichtkrull et al. (ESWC 2018, "Modeling Relational Data with
// Graph Convolutional Networks") as PyG 2.3.1's RGCNConv (torch_geometric/nn/conv/rgcn_conv.py),
//   x'_i = x_i Theta_root + sum_r aggr_{j -> i, type r} x_j Theta_r + b,
// aggr "mean" by default (each relation's mean over the node's incoming edges of that type; a node without such
// edges gets 0 from it), "add", "max" or any aggregation PyG's `aggr` names. Theta_r is `weight[r]`
// [in, out]; with num_bases, Theta_r = sum_b comp[r, b] weight[b] (`weight` [num_bases, in, out], `comp`
// [num_relations, num_bases]); with num_blocks, Theta_r is block-diagonal (`weight` [num_relations, num_blocks,
// in / num_blocks, out / num_blocks]). State_dict: "weight", "comp" (bases), "root" [in, out] (root_weight),
// "bias" [out]. Forward takes each edge's type (int64 [E], values < num_relations; with one relation it may be
// left out: every edge is of type 0, where PyG asserts it is given). Node features must be given: PyG's
// featureless form (x None, Theta_r rows as node embeddings) is refused.
//
//   auto conv = RGCNConv::fromPyG({{"in_channels", 16}, {"out_channels", 32}, {"num_relations", 8},
//                                  {"num_bases", 4}}, gen);
//   Variable h = conv->forward(x, edgeIndex, edgeType);                  // [N, 16] -> [N, 32]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class RGCNConv : public MessagePassing {
 public:
  /// numBases / numBlocks: 0 for PyG's None (at most one of them set).
  RGCNConv(int64_t inChannels, int64_t outChannels, int64_t numRelations, Generator& gen, int64_t numBases = 0,
           int64_t numBlocks = 0, const nlohmann::json& aggr = "mean", bool rootWeight = true, bool bias = true,
           DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels as an int, out_channels, num_relations, num_bases, num_blocks,
  /// aggr, root_weight, is_sorted, bias).
  static std::unique_ptr<RGCNConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex int64 [2, E] (row 0 source, row 1 target), edgeType int64 [E] -> [N, out].
  virtual Variable forward(const Variable& x, const Tensor& edgeIndex, const Tensor& edgeType = Tensor());
  /// PyG's bipartite form x = (x_src, x_dst): xSrc [N, in], xDst [M, in], edgeIndex's row 0 indexing xSrc and
  /// row 1 xDst -> [M, out], the root weight applied to xDst (a classifier's last layer over one node type's rows).
  Variable forward(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex, const Tensor& edgeType);
  std::unique_ptr<Module> clone() const override;

 protected:
  /// The constructor's arguments as fromPyG reads them for `className` (FastRGCNConv takes the same).
  struct Options {
    int64_t in = 0, out = 0, relations = 0, bases = 0, blocks = 0;
    nlohmann::json aggr = "mean";
    bool rootWeight = true, bias = true;
  };
  static Options optionsFromPyG(const nlohmann::json& args, const char* className);

  /// Each edge's relation, checked (int64 [E], every value in [0, num_relations)); zeros with one relation and
  /// none given. Also checks x's width and that every edge ends at one of x's rows.
  /// numTargets: the rows edges may end at (-1: x's).
  Tensor checkedInputs(const char* layer, const Variable& x, const Tensor& edgeIndex, const Tensor& edgeType,
                       int64_t numTargets = -1) const;
  /// Theta_r for every relation, [num_relations, in, out] (the bases combined); not for num_blocks.
  Variable relationWeights() const;
  /// x Theta_root + b added to the relations' sum (each when the layer has it).
  Variable addRootAndBias(const Variable& out, const Variable& x) const;

  int64_t in_, out_, relations_, bases_, blocks_;
  bool rootWeight_, bias_;
  DType dtype_;
  Variable* weight_;
  Variable* comp_ = nullptr;
  Variable* root_ = nullptr;
  Variable* biasParam_ = nullptr;

 private:
  /// One relation's edges: the targets that have one (ascending), each edge's row among them and source.
  struct RelationEdges {
    std::vector<int64_t> target, row, source;
  };
  std::vector<RelationEdges> relationEdges(const Tensor& edgeIndex, const Tensor& type, int64_t numTargets) const;
  /// h [rows, in] of relation r times Theta_r; `weights` the relations' weights stacked [R in, out] (blocks:
  /// [R B in/B, out/B], block-major within a relation).
  Variable relationProduct(const Variable& h, int64_t r, const Variable& weights) const;
  /// sum_r aggr_{j -> i, type r} x_j Theta_r for the numTargets targets, [numTargets, out].
  Variable relationSum(const Variable& x, int64_t numTargets, const Tensor& edgeIndex, const Tensor& type);
  /// The layer's output from checked inputs (xDst = xSrc when not bipartite).
  Variable convolve(const Variable& xSrc, const Variable& xDst, const Tensor& edgeIndex, const Tensor& type);
  /// The whole output, root and bias too, as one product over the relations' aggregates and the targets' rows
  /// side by side (in < out, no blocks).
  Variable stackedRelationSum(const Variable& x, const Variable& xDst, const Tensor& edgeIndex, const Tensor& type);
};

}  // namespace gnn
