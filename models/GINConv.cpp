#include "models/GINConv.h"

namespace gnn {

GINConv::GINConv(int64_t dim, Generator& gen, bool edgeFeatures, DType dtype)
    : MessagePassing(Aggregation::Sum),
      lin1_(dim, 2 * dim, gen, true, dtype),
      lin2_(2 * dim, dim, gen, true, dtype),
      norm_(2 * dim, 1e-5, dtype) {
  if (edgeFeatures) {
    bond_ = std::make_unique<BondEncoder>(dim, gen, dtype);
    registerModule("bond_encoder", *bond_);
  }
  registerModule("mlp.0", lin1_);
  registerModule("mlp.1", norm_);
  registerModule("mlp.3", lin2_);
}

Variable GINConv::message(const Variable& xj, const Variable&, const Variable& edgeAttr) {
  return edgeAttr.defined() ? relu(add(xj, edgeAttr)) : xj;
}

Variable GINConv::forward(const Variable& h, const Tensor& edgeIndex, const Tensor& edgeAttr) {
  // With edge features, h + aggregated messages run as one fused op (same numbers as add(h, propagate())).
  Variable z = bond_ ? reluMessageSum(h, bond_->forward(edgeAttr), edgeIndex, h.dim(0), 1.0)
                     : add(h, propagate(edgeIndex, h));
  return lin2_.forward(norm_.forwardRelu(lin1_.forward(z)));
}

}  // namespace gnn
