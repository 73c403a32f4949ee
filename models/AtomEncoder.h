// AtomEncoder: OGB's atom embedding, the sum of one table per atom feature of smiles2graph with sizes
// [119, 5, 12, 12, 10, 6, 6, 2, 2] (ogb.utils.features.get_atom_feature_dims, as listed in DESIGN.md).
#pragma once
#include "models/CategoricalEncoder.h"

namespace gnn {

class AtomEncoder : public CategoricalEncoder {
 public:
  static std::vector<int64_t> featureDims() { return {119, 5, 12, 12, 10, 6, 6, 2, 2}; }
  AtomEncoder(int64_t dim, Generator& gen, DType dtype = DType::F32)
      : CategoricalEncoder(featureDims(), dim, gen, dtype) {}
  std::unique_ptr<Module> clone() const override {
    Generator unused;  // the fresh instance's initial values are overwritten by the copy
    return cloneInto(std::make_unique<AtomEncoder>(dim(), unused, dtype()));
  }
};

}  // namespace gnn
