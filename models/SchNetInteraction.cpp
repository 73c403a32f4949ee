#include "models/SchNetInteraction.h"

#include "gnn/ops/Ops.h"

namespace gnn {

SchNetInteraction::SchNetInteraction(int64_t hidden, int64_t gaussians, int64_t filters, Generator& gen, DType dtype)
    : hidden_(hidden),
      gaussians_(gaussians),
      filters_(filters),
      dtype_(dtype),
      conv_(hidden, hidden, filters, gaussians, gen, dtype),
      lin_(hidden, hidden, gen, true, dtype) {
  lin_.resetGlorot(gen);
  registerModule("conv", conv_);
  registerModule("lin", lin_);
}

std::unique_ptr<Module> SchNetInteraction::clone() const {
  Generator unused;
  return cloneInto(std::make_unique<SchNetInteraction>(hidden_, gaussians_, filters_, unused, dtype_));
}

Variable SchNetInteraction::forward(const Variable& h, const Tensor& edgeIndex, const Variable& rbf,
                                    const Variable& cut, const Tensor& pairOf, bool fusedCutoff,
                                    const Tensor& plan) const {
  return lin_.forward(shiftedSoftplus(conv_.forward(h, edgeIndex, rbf, cut, pairOf, fusedCutoff, plan)));
}

}  // namespace gnn
