// BondEncoder: OGB's bond embedding, the sum of one table per bond feature of smiles2graph with sizes
// [5, 6, 2] (bond type, stereo, conjugated; ogb.utils.features.get_bond_feature_dims).
#pragma once
#include "models/CategoricalEncoder.h"

namespace gnn {

class BondEncoder : public CategoricalEncoder {
 public:
  static std::vector<int64_t> featureDims() { return {5, 6, 2}; }
  BondEncoder(int64_t dim, Generator& gen, DType dtype = DType::F32)
      : CategoricalEncoder(featureDims(), dim, gen, dtype) {}
  std::unique_ptr<Module> clone() const override {
    Generator unused;  // the fresh instance's initial values are overwritten by the copy
    return cloneInto(std::make_unique<BondEncoder>(dim(), unused, dtype()));
  }
};

}  // namespace gnn
