// OgbMolGIN (`--model gin`): OGB's graph-level GIN baseline for molecules (ogb/examples/graphproppred/mol/gnn.py, GNN_node with
// JK = last): AtomEncoder, `layers` OgbMolGINConv layers with BondEncoder edge embeddings, each followed by a norm,
// ReLU (except after the last) and dropout; then global pooling and a linear head. The norm is LayerNorm by
// default; options().norm = Batch gives OGB's BatchNorm with statistics over the real nodes only, so padding
// rows do not change real graphs' outputs. options().virtualNode adds OGB's virtual node
// (GNN_node_Virtualnode; models/VirtualNode.h), carried between layers in the block state as "vn".
// Blocks: "input", "layers/l" (conv, norm, ReLU, dropout), "head" (models/GraphModel.h).
#pragma once
#include <memory>
#include <vector>

#include "gnn/nn/Linear.h"
#include "models/AtomEncoder.h"
#include "models/GraphModel.h"
#include "models/NormLayer.h"
#include "models/OgbMolGINConv.h"
#include "models/VirtualNode.h"

namespace gnn {

class OgbMolGIN : public GraphModel {
 public:
  OgbMolGIN(GraphModelOptions options, Generator& gen);
  const char* name() const override { return "gin"; }
  std::unique_ptr<Module> clone() const override;

 private:
  std::vector<std::unique_ptr<OgbMolGINConv>> convs_;
  std::vector<std::unique_ptr<NormLayer>> norms_;
  std::unique_ptr<VirtualNode> virtualNode_;
};

}  // namespace gnn
