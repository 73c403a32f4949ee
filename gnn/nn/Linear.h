// Linear: y = x W^T + b with W [out, in] (PyTorch's layout and default initialisation,
// U(-1/sqrt(in), 1/sqrt(in)) for weight and bias).
#pragma once
#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"
#include "gnn/tensor/SparseMatrix.h"

namespace gnn {

class Linear : public Module {
 public:
  Linear(int64_t inFeatures, int64_t outFeatures, Generator& gen, bool bias = true, DType dtype = DType::F32);
  Variable forward(const Variable& x) const;
  /// The same map with constant sparse input rows (bag-of-words features): a sparse-dense product with the
  /// weight's transpose [in, out] (a copy far smaller than the product's nnz x out).
  Variable forward(const SparseMatrix& x) const;
  std::unique_ptr<Module> clone() const override;
  void resetParameters(Generator& gen);
  /// Glorot-uniform weight and zero bias (PyG's default for message-passing layers).
  void resetGlorot(Generator& gen);
  Variable& weight() { return *weight_; }
  Variable* bias() { return bias_; }
  int64_t inFeatures() const { return in_; }
  int64_t outFeatures() const { return out_; }

 private:
  int64_t in_, out_;
  Variable* weight_;
  Variable* bias_ = nullptr;
};

}  // namespace gnn
