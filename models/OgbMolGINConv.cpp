#include "models/OgbMolGINConv.h"

namespace gnn {

OgbMolGINConv::OgbMolGINConv(int64_t dim, Generator& gen, bool edgeFeatures, DType dtype, NormKind norm)
    : MessagePassing("sum"),
      dim_(dim),
      dtype_(dtype),
      normKind_(norm),
      lin1_(dim, 2 * dim, gen, true, dtype),
      lin2_(2 * dim, dim, gen, true, dtype),
      norm_(norm, 2 * dim, dtype) {
  if (edgeFeatures) {
    bond_ = std::make_unique<BondEncoder>(dim, gen, dtype);
    registerModule("bond_encoder", *bond_);
  }
  registerModule("mlp.0", lin1_);
  registerModule("mlp.1", norm_.module());
  registerModule("mlp.3", lin2_);
}

std::unique_ptr<Module> OgbMolGINConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  auto fresh = std::make_unique<OgbMolGINConv>(dim_, unused, bond_ != nullptr, dtype_, normKind_);
  fresh->fused_ = fused_;
  return cloneInto(std::move(fresh));
}

Variable OgbMolGINConv::message(const Variable& xj, const Variable&, const Variable& edgeAttr) {
  return edgeAttr.defined() ? relu(add(xj, edgeAttr)) : xj;
}

Variable OgbMolGINConv::messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                                      int64_t numNodes) {
  // Without edge features the messages are x_j themselves: the unfused gather + scatter is already minimal.
  rootAdded_ = false;
  if (!fused_ || !edgeAttr.defined()) return {};
  // The kernel also adds GIN's root term (1 + eps) h with eps = 0, after the sum, with the rounding of
  // add(aggregate, h): update's work done in the same pass.
  rootAdded_ = numNodes == x.dim(0);
  return reluMessageSum(x, edgeAttr, edgeIndex, numNodes, rootAdded_ ? 1.0 : 0.0);
}

Variable OgbMolGINConv::update(const Variable& aggregated, const Variable& x) {
  if (rootAdded_) {
    rootAdded_ = false;
    return aggregated;
  }
  return add(aggregated, x);
}

Variable OgbMolGINConv::forward(const Variable& h, const Tensor& edgeIndex, const Tensor& edgeAttr,
                          const Tensor& nodesMask) {
  Variable z = propagate(edgeIndex, h, bond_ ? bond_->forward(edgeAttr) : Variable());
  return lin2_.forward(norm_.forward(lin1_.forward(z), nodesMask, true));
}

}  // namespace gnn
