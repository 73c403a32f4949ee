// EdgelessDataset: a molecular dataset's graphs without their edges (bonds and bond features dropped), for a
// model that builds its neighbour graph itself from the atoms' positions per batch (SchNet with
// SchNetOptions::radiusGraphOnDevice, as published IPU runs of SchNet build it on the device): no host
// neighbour search, and batches need no room for edges beyond their padding graphs' self-loops.
//
//   auto atoms = std::make_shared<EdgelessDataset>(dataset);   // atoms.get(i).edgeIndex: int64 [2, 0]
#pragma once
#include <memory>

#include "data/Dataset.h"

namespace gnn {

class EdgelessDataset : public Dataset {
 public:
  explicit EdgelessDataset(std::shared_ptr<const Dataset> base);
  size_t size() const override { return base_->size(); }
  Graph get(size_t i) const override;
  int64_t numNodes(size_t i) const override { return base_->numNodes(i); }
  int64_t numEdges(size_t) const override { return 0; }

 private:
  std::shared_ptr<const Dataset> base_;
};

}  // namespace gnn
