// Embedding: a lookup table [numEmbeddings, dim], initialised N(0, 1) like torch.nn.Embedding, or
// Xavier-uniform as OGB's AtomEncoder does (xavierInit = true).
#pragma once
#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

class Embedding : public Module {
 public:
  Embedding(int64_t numEmbeddings, int64_t dim, Generator& gen, bool xavierInit = false, DType dtype = DType::F32);
  /// Rows for int64 indices [N] -> [N, dim].
  Variable forward(const Tensor& index) const;
  std::unique_ptr<Module> clone() const override;
  Variable& weight() { return *weight_; }
  int64_t numEmbeddings() const { return num_; }
  int64_t dim() const { return dim_; }

 private:
  int64_t num_, dim_;
  Variable* weight_;
};

}  // namespace gnn
