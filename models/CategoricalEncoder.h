// CategoricalEncoder: embeds rows of categorical features (int64 [N, C]) as the sum of one embedding per column,
// the scheme of OGB's AtomEncoder/BondEncoder (ogb/graphproppred/mol_encoder.py). The C tables are stored as
// one [sum(dims), D] weight with column offsets, so the forward is one gather and one segment sum instead of
// C lookups and C−1 additions; each block is initialised Xavier-uniform for its own [dims[c], D] shape, as OGB
// initialises its separate tables.
#pragma once
#include <vector>

#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

class CategoricalEncoder : public Module {
 public:
  CategoricalEncoder(std::vector<int64_t> dims, int64_t dim, Generator& gen, DType dtype = DType::F32);
  /// x int64 [N, C] with 0 <= x[:, c] < dims[c] -> [N, D]. An out-of-range value is an error naming it.
  Variable forward(const Tensor& x) const;
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim() const { return dim_; }
  DType dtype() const { return weight_->dtype(); }
  std::unique_ptr<Module> clone() const override;

 private:
  std::vector<int64_t> dims_, offsets_;
  int64_t dim_;
  Variable* weight_;
};

}  // namespace gnn
