// GCN: a graph-level GCN for molecules or any graph set: input encoder (AtomEncoder for OGB's categorical atom
// features, else Linear), `layers` GCNConv layers (Kipf & Welling, ICLR 2017) with ReLU and dropout between
// them, global pooling and a linear head. GCNConv's normalisation uses only a node's own in-edges, and padding
// edges are self-loops on padding nodes, so real nodes' normalisation does not change with padding.
#pragma once
#include <memory>
#include <vector>

#include "gnn/GCNConv.h"
#include "gnn/Linear.h"
#include "models/AtomEncoder.h"
#include "models/GraphModel.h"

namespace gnn {

class GCN : public GraphModel {
 public:
  GCN(GraphModelOptions options, Generator& gen);
  Variable nodeEmbeddings(const Batch& batch) override;
  const char* name() const override { return "gcn"; }

 private:
  std::vector<std::unique_ptr<GCNConv>> convs_;
};

}  // namespace gnn
