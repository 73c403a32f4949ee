// DiffGroupNorm: differentiable group normalisation of Zhou et al. (NeurIPS 2020) as PyG 2.3.1's DiffGroupNorm,
//   s = softmax(x W^T)  (each row's soft assignment to G groups),
//   x' = x + lamda sum_g BatchNorm(s_g x)_g,
// the batch norm over the [N, G F] matrix of the G weighted copies (its statistics over the real rows, as
// PyGBatchNorm's). State_dict: "lin.weight" [G, F], "norm.weight", "norm.bias", "norm.running_mean",
// "norm.running_var", "norm.num_batches_tracked" (torch's BatchNorm1d over G F channels).
//
//   DiffGroupNorm norm(64, 10, gen);
//   Variable h = norm.forward(x, {b.batch, b.numGraphs, b.nodesMask});
#pragma once
#include <memory>

#include "gnn/nn/Linear.h"
#include "gnn/nn/norm/Normalization.h"
#include "gnn/nn/norm/PyGBatchNorm.h"

namespace gnn {

class DiffGroupNorm : public Normalization {
 public:
  DiffGroupNorm(int64_t channels, int64_t groups, Generator& gen, double lamda = 0.01,
                PyGBatchNormOptions bn = {});
  /// From PyG's keyword arguments (in_channels, groups, lamda, eps, momentum, affine, track_running_stats).
  static std::unique_ptr<DiffGroupNorm> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);
  Variable forward(const Variable& x, const NormBatch& b) override;
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t channels_, groups_;
  double lamda_;
  PyGBatchNormOptions bnOptions_;
  std::unique_ptr<Linear> lin_;
  // The batch norm over G F channels; its torch BatchNorm1d is registered as "norm" (PyG's keys).
  std::unique_ptr<PyGBatchNorm> bn_;
};

}  // namespace gnn
