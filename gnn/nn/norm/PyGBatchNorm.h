// PyGBatchNorm: torch_geometric.nn.norm.BatchNorm (PyG 2.3.1), a torch.nn.BatchNorm1d held as child "module", so
// its state_dict keys are PyG's: module.weight, module.bias (affine), module.running_mean, module.running_var and
// module.num_batches_tracked (int64 scalar; track_running_stats). Statistics over the real rows of a fixed-size
// batch with the arithmetic of gnn::BatchNorm (the same ops, maskedBatchNorm and batchNormInference); unlike
// gnn::BatchNorm (the molecule models' layer, whose checkpoints keep its keys and behaviour), a frozen weight
// does not switch to the running statistics, momentum may be null (the cumulative average over
// num_batches_tracked, as torch), and running statistics may be off (batch statistics in evaluation too).
//
//   PyGBatchNorm bn(64);
//   Variable y = bn.forward(x, NormBatch{b.batch, b.numGraphs, b.nodesMask});  // training: real rows' stats
#pragma once
#include <optional>

#include "gnn/nn/norm/Normalization.h"

namespace gnn {

struct PyGBatchNormOptions {
  double eps = 1e-5;
  /// std::nullopt: PyG's momentum=None, the cumulative moving average (factor 1 / num_batches_tracked).
  std::optional<double> momentum = 0.1;
  bool affine = true;
  bool trackRunningStats = true;
  /// A batch of at most one real row is normalised with the running statistics (needs trackRunningStats).
  bool allowSingleElement = false;
  DType dtype = DType::F32;
};

class PyGBatchNorm : public Normalization {
 public:
  explicit PyGBatchNorm(int64_t channels, PyGBatchNormOptions options = {});
  /// From PyG's keyword arguments (in_channels, eps, momentum, affine, track_running_stats,
  /// allow_single_element); std::invalid_argument for any other.
  static std::unique_ptr<PyGBatchNorm> fromPyG(const nlohmann::json& args, DType dtype = DType::F32);
  /// The options of torch's BatchNorm1d keywords in `args` (eps, momentum, affine, track_running_stats; the caller
  /// checked them with its PyGArgs), as DiffGroupNorm's batch norm takes them too.
  static PyGBatchNormOptions optionsFromPyG(const nlohmann::json& args, DType dtype);

  /// Columns normalised over the real rows (b.nodeMask); b.batch is not read (statistics span the batch).
  /// Training with one real row is refused, as torch refuses it, unless allowSingleElement.
  Variable forward(const Variable& x, const NormBatch& b) override;
  std::unique_ptr<Module> clone() const override;

  int64_t numBatchesTracked() const;
  const PyGBatchNormOptions& options() const { return opt_; }

  /// torch.nn.BatchNorm1d's parameters and buffers, under its names (PyG's `module`).
  class BatchNorm1d : public Module {
   public:
    BatchNorm1d(int64_t channels, const PyGBatchNormOptions& o);
    std::unique_ptr<Module> clone() const override;
    Variable* weight = nullptr;
    Variable* bias = nullptr;
    Variable* runningMean = nullptr;
    Variable* runningVar = nullptr;
    Variable* numBatchesTracked = nullptr;  // int64 []

   private:
    int64_t channels_;
    PyGBatchNormOptions opt_;
  };
  /// torch's BatchNorm1d this norm runs (its parameters and buffers); a module that holds it under another name
  /// (DiffGroupNorm's "norm") registers it itself.
  BatchNorm1d& module() { return module_; }

 private:
  void updateRunningStats(const Tensor& batchMean, const Tensor& batchVar, int64_t realRows);

  int64_t channels_;
  PyGBatchNormOptions opt_;
  BatchNorm1d module_;
  Variable ones_, zeros_;  // the affine map of affine=False (no gradient)
};

}  // namespace gnn
