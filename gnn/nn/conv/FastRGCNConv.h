// FastRGCNConv: PyG 2.3.1's FastRGCNConv (torch_geometric/nn/conv/rgcn_conv.py), RGCNConv's layer computed per
// edge instead of per relation: each edge j -> i of type r carries x_j Theta_r, summed at i (aggr "add") or
// divided first by i's count of incoming edges of type r (aggr "mean", the default: PyG's aggregate), so with
// "add" and "mean" it gives RGCNConv's outputs from the same state_dict. The same arguments and parameters as
// RGCNConv ("weight", "comp", "root", "bias"); aggr "max" is refused (PyG asserts add, sum or mean).
//
// Here x Theta_r is made once per node and relation ([N, R out]) and each edge reads its row through one sparse
// product: PyG's per-edge [E, in, out] weight copies and products are not needed.
//
//   auto conv = FastRGCNConv::fromPyG({{"in_channels", 16}, {"out_channels", 32}, {"num_relations", 8}}, gen);
//   Variable h = conv->forward(x, edgeIndex, edgeType);                  // [N, 16] -> [N, 32]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/conv/RGCNConv.h"

namespace gnn {

class FastRGCNConv : public RGCNConv {
 public:
  /// RGCNConv's arguments; aggr "add" (or "sum") or "mean".
  FastRGCNConv(int64_t inChannels, int64_t outChannels, int64_t numRelations, Generator& gen, int64_t numBases = 0,
               int64_t numBlocks = 0, const nlohmann::json& aggr = "mean", bool rootWeight = true, bool bias = true,
               DType dtype = DType::F32);
  /// From PyG's keyword arguments (RGCNConv's).
  static std::unique_ptr<FastRGCNConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex int64 [2, E], edgeType int64 [E] -> [N, out].
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Tensor& edgeType = Tensor()) override;
  std::unique_ptr<Module> clone() const override;

 private:
  /// x Theta_r for every node j and relation r as rows j R + r: [N R, out].
  Variable transformedRows(const Variable& x) const;
};

}  // namespace gnn
