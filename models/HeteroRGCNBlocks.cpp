#include "models/HeteroRGCNBlocks.h"

#include <string>
#include <utility>
#include <vector>

#include "gnn/system/Check.h"

namespace gnn {

HeteroRGCNBlocks::HeteroRGCNBlocks(std::unique_ptr<HeteroRGCN> model, TypedBatchLayout layout)
    : model_(std::move(model)) {
  setLayout(std::move(layout));
  registerModule("", *model_);
  addBlock("input", [this](BlockState s, const Batch& b) {
    const std::vector<Tensor> features = typedFeatures(b, layout_);
    s.set("h", layout_.nodeIds ? model_->input(features, typedNodeIds(b, layout_)) : model_->input(features));
    return s;
  });
  const size_t layers = model_->numLayers();
  for (size_t l = 0; l < layers; ++l) {
    addBlock("layers/" + std::to_string(l), [this, l, layers](BlockState s, const Batch& b) {
      Variable h = model_->layer(l, s.get("h"), layout_.rows, b.edgeIndex, b.edgeAttr, layout_.targetRows);
      if (l + 1 == layers) return outputState(h);
      s.set("h", h);
      return s;
    });
  }
}

void HeteroRGCNBlocks::setLayout(TypedBatchLayout layout) {
  const size_t types = model_->options().nodeTypes.size();
  GNN_CHECK_ARG(layout.rows.size() == types && layout.widths.size() == types, "HeteroRGCNBlocks: a layout of ",
                layout.rows.size(), " node types for a model of ", types);
  layout_ = std::move(layout);
}

std::unique_ptr<Module> HeteroRGCNBlocks::clone() const {
  // The wrapped model's clone brings its options; copying the state again brings the training flags.
  return cloneInto(std::make_unique<HeteroRGCNBlocks>(cloneModule(*model_), layout_));
}

}  // namespace gnn
