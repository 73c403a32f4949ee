// SoftmaxAggregation: the softmax-weighted sum of Li et al. (2020, "DeeperGCN") as PyG 2.3.1's
// SoftmaxAggregation,
//   out_i = sum_{e -> i} softmax_i(t x_e) * x_e     (per channel, over the messages reaching i),
// t a fixed temperature, or learnt (learn: PyG's Parameter "t" of `channels` values, 1 or the width) ; semi_grad
// stops the gradient through the softmax weights (fixed t only). The messages are grouped by destination once
// per call and the softmax and the sum run per group (segment ops: the same bits for any thread count).
//
//   SoftmaxAggregation aggr(1.0, /*learn=*/true, false, /*channels=*/64);
//   Variable h = aggr.forward(messages, dst, numNodes);
#pragma once
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class SoftmaxAggregation : public Aggregation {
 public:
  SoftmaxAggregation(double t = 1.0, bool learn = false, bool semiGrad = false, int64_t channels = 1,
                     DType dtype = DType::F32);
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "softmax"; }
  /// The temperature as a [1] or [channels] Variable (the learnt parameter, or the fixed t as a constant).
  Variable temperature() const;
  bool semiGrad() const { return semiGrad_; }
  nlohmann::json spec() const override;
  std::unique_ptr<Module> clone() const override;

 private:
  double t_;
  bool learn_, semiGrad_;
  int64_t channels_;
  DType dtype_;
  Variable* tParam_ = nullptr;
};

}  // namespace gnn
