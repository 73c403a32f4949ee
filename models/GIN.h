// GIN: OGB's graph-level GIN baseline for molecules (ogb/examples/graphproppred/mol/gnn.py, GNN_node with
// JK = last): AtomEncoder, `layers` GINConv layers with BondEncoder edge embeddings, each followed by a norm,
// ReLU (except after the last) and dropout; then global pooling and a linear head. The norm is LayerNorm
// instead of OGB's BatchNorm, whose batch statistics would let padding rows change real graphs' outputs.
// Blocks: "input", "layers/l" (conv, norm, ReLU, dropout), "head" (models/GraphModel.h).
#pragma once
#include <memory>
#include <vector>

#include "gnn/LayerNorm.h"
#include "gnn/Linear.h"
#include "models/AtomEncoder.h"
#include "models/GINConv.h"
#include "models/GraphModel.h"

namespace gnn {

class GIN : public GraphModel {
 public:
  GIN(GraphModelOptions options, Generator& gen);
  const char* name() const override { return "gin"; }
  std::unique_ptr<Module> clone() const override;

 private:
  std::vector<std::unique_ptr<GINConv>> convs_;
  std::vector<std::unique_ptr<LayerNorm>> norms_;
};

}  // namespace gnn
