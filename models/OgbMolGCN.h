// OgbMolGCN (`--model gcn`): a graph-level GCN for molecules or any graph set: input encoder (AtomEncoder for OGB's categorical atom
// features, else Linear), `layers` GCNConv layers (Kipf & Welling, ICLR 2017) with ReLU and dropout between
// them, global pooling and a linear head. GCNConv's normalisation uses only a node's own in-edges, and padding
// edges are self-loops on padding nodes, so real nodes' normalisation does not change with padding.
// options().norm = Batch adds OGB's BatchNorm after each layer (statistics over the real nodes only; the default
// has no norm); options().virtualNode adds OGB's virtual node (models/VirtualNode.h). Unlike OGB's GCNConv, the
// layers do not read bond features.
// Blocks: "input", "layers/l" (conv, ReLU except after the last, dropout), "head" (models/GraphModel.h).
#pragma once
#include <memory>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/GCNConv.h"
#include "models/AtomEncoder.h"
#include "models/GraphModel.h"
#include "models/NormLayer.h"
#include "models/VirtualNode.h"

namespace gnn {

class OgbMolGCN : public GraphModel {
 public:
  OgbMolGCN(GraphModelOptions options, Generator& gen);
  const char* name() const override { return "gcn"; }
  std::unique_ptr<Module> clone() const override;

 private:
  std::vector<std::unique_ptr<GCNConv>> convs_;
  std::vector<std::unique_ptr<NormLayer>> norms_;
  std::unique_ptr<VirtualNode> virtualNode_;
};

}  // namespace gnn
