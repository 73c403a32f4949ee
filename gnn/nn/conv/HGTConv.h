// HGTConv: the Heterogeneous Graph Transformer operator of Hu et al. (WWW 2020, "Heterogeneous Graph Transformer")
// as PyG 2.3.1's HGTConv (torch_geometric/nn/conv/hgt_conv.py), over a dictionary of node types' features and one
// of relations' edges. With H heads of D = out / H channels, per node type t K_t, Q_t, V_t = Linear_t(x_t)
// (k_lin, q_lin, v_lin), and per relation r = (s, rel, d), edge j -> i (j of type s, i of type d) and head h:
//   alpha_ij = softmax over i's edges of r of (Q_i . K_j A_r) p_r / sqrt(D),   m_i,r = sum_j alpha_ij V_j M_r
// (A_r = a_rel, M_r = m_rel [H, D, D], p_r = p_rel [H]; a target without edges of r gets 0 from it). A type's
// relations are grouped: "sum" (default), "mean", "min" or "max" per element over the relations given, "cat"
// only where one arrives (PyG's a_lin then fails on R x out columns); then out_t = a_lin_t(gelu(grouped)) (the
// exact erf form) and, when out == in_t, sigmoid(skip_t) out_t + (1 - sigmoid(skip_t)) x_t. A node type no given
// relation reaches has no output (PyG: None; here absent from the result). The relations are visited in the
// metadata's order, whatever the order they are given in, so the sums' bits are fixed.
// State_dict: "k_lin.<t>", "q_lin.<t>", "v_lin.<t>", "a_lin.<t>" (.weight [out, in_t], .bias), "skip.<t>" [1],
// "a_rel.<s>__<rel>__<d>", "m_rel.<...>" [H, D, D], "p_rel.<...>" [H]; PyG's initialisation (torch's Linear,
// ones, glorot). in_channels is one width for every node type of the metadata or a width per type; -1 (lazy) is
// refused.
// How it runs: A_r p_r and M_r are folded into the key and value Linears' weights per relation (W' = blockdiag(A_r
// p_r)^T W_k, an [out, out] by [out, in] product), so a relation keeps only its sources' keys and values
// ([N_s, out] each), not also each type's K and V and their per-head products; each relation's attention and sum
// is one op over its edges (dotAttentionMessageSum, TransformerConv's, with sources of another type), which keeps
// the [E, H] attention and no [E, out] messages; sigmoid(skip_t) is folded into a_lin_t's weight and bias, so
// a_lin_t's output is not kept for skip_t's gradient. The numbers are PyG's up to rounding.
//
//   auto conv = HGTConv::fromPyG({{"in_channels", {{"paper", 16}, {"author", 8}}}, {"out_channels", 32},
//                                 {"metadata", {{"paper", "author"}, {{"author", "writes", "paper"},
//                                                                    {"paper", "rev_writes", "author"}}}},
//                                 {"heads", 2}}, gen);
//   std::map<std::string, Variable> h = conv->forward({{"paper", xPaper}, {"author", xAuthor}},
//                                                     {{{"author", "writes", "paper"}, writes},
//                                                      {{"paper", "rev_writes", "author"}, writtenBy}});
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gnn/nn/EdgeType.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class HGTConv : public MessagePassing {
 public:
  /// inChannels: each node type and its width, in the order its Linears are registered; edgeTypes: the
  /// metadata's relations, in order (each of two of those node types); group: "sum", "mean", "min", "max", "cat".
  HGTConv(std::vector<std::pair<std::string, int64_t>> inChannels, int64_t outChannels, std::vector<EdgeType> edgeTypes,
          Generator& gen, int64_t heads = 1, std::string group = "sum", DType dtype = DType::F32);
  /// From PyG's keyword arguments: in_channels (an int, or a dict node type -> int), out_channels, metadata
  /// ([node types, [[src, rel, dst], ...]], HeteroData.metadata() as JSON), heads, group.
  static std::unique_ptr<HGTConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// xDict: node type -> features [N_t, in_t]; edgeIndexDict: relations of the metadata, each once, with its
  /// edge_index int64 [2, E] (row 0 indexes the source type's nodes, row 1 the destination's). Every type a given
  /// relation names must be in xDict. -> node type -> [N_t, out] for the types some given relation reaches.
  std::map<std::string, Variable> forward(const std::map<std::string, Variable>& xDict,
                                          const std::vector<std::pair<EdgeType, Tensor>>& edgeIndexDict);
  const std::vector<std::pair<std::string, int64_t>>& inChannels() const { return in_; }
  const std::vector<EdgeType>& edgeTypes() const { return relations_; }
  int64_t outChannels() const { return out_; }
  int64_t heads() const { return heads_; }
  std::unique_ptr<Module> clone() const override;

 private:
  /// A node type's four Linears and its skip weight.
  struct TypeParams {
    int64_t in = 0;
    std::unique_ptr<Linear> k, q, v, a;
    Variable* skip = nullptr;
  };
  /// A relation's parameters.
  struct RelationParams {
    Variable *aRel = nullptr, *mRel = nullptr, *pRel = nullptr;
  };
  /// PyG's ParameterDict (skip, a_rel, m_rel, p_rel): a child holding parameters by key, so that the state_dict
  /// lists them after the Linears, as PyG's (a module's own parameters come before its children's).
  class ParameterDict : public Module {
   public:
    Variable& add(const std::string& key, Tensor value) { return registerParameter(key, std::move(value)); }
    std::unique_ptr<Module> clone() const override;
  };

  /// The edge_index given for each metadata relation (null: not given), checked against xDict.
  std::vector<const Tensor*> givenRelations(const std::map<std::string, Variable>& xDict,
                                            const std::vector<std::pair<EdgeType, Tensor>>& edgeIndexDict) const;
  /// lin applied to x with a relation's [out, out] map folded in: x (W^T map) + b map.
  static Variable foldedLinear(Linear& lin, const Variable& map, const Variable& x);
  /// blockdiag over heads of rel[h] (times scale[h] when given) -> [out, out].
  Variable headBlocks(const Variable& rel, const Variable* scale) const;
  /// The relations' messages into one type, grouped by group_.
  Variable grouped(const std::string& type, const std::vector<Variable>& messages) const;

  std::vector<std::pair<std::string, int64_t>> in_;
  int64_t out_, heads_;
  std::vector<EdgeType> relations_;
  std::string group_;
  DType dtype_;
  std::map<std::string, TypeParams> types_;
  std::vector<RelationParams> relParams_;
  ParameterDict skip_, aRel_, mRel_, pRel_;
};

}  // namespace gnn
