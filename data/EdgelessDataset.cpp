#include "data/EdgelessDataset.h"

#include "gnn/system/Check.h"

namespace gnn {

EdgelessDataset::EdgelessDataset(std::shared_ptr<const Dataset> base) : base_(std::move(base)) {
  GNN_CHECK_ARG(base_ != nullptr, "EdgelessDataset: no dataset");
}

Graph EdgelessDataset::get(size_t i) const {
  Graph g = base_->get(i);
  g.edgeIndex = Tensor({2, 0}, DType::I64);
  g.edgeAttr = Tensor();
  return g;
}

}  // namespace gnn
