// MessageNorm: message normalisation of Li et al. (2020, "DeeperGCN") as PyG 2.3.1's MessageNorm,
//   m' = normalize(m) * ||x|| * s     (row-wise L2 norms; F.normalize's eps 1e-12),
// s a learnt scale with learn_scale, else fixed at 1 (PyG's state_dict holds "scale" [1] either way). GENConv's
// msg_norm.
//
//   MessageNorm norm(/*learnScale=*/true);
//   Variable out = norm.forward(x, aggregated);
#pragma once
#include "gnn/nn/Module.h"

namespace gnn {

class MessageNorm : public Module {
 public:
  explicit MessageNorm(bool learnScale = false, DType dtype = DType::F32);
  /// x, msg [N, F] -> [N, F] (p = 2 only: PyG's forward argument p is not offered).
  Variable forward(const Variable& x, const Variable& msg) const;
  std::unique_ptr<Module> clone() const override;

 private:
  bool learn_;
  DType dtype_;
  Variable* scale_;
};

}  // namespace gnn
