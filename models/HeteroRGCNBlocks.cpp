#include "models/HeteroRGCNBlocks.h"

#include <string>
#include <utility>

#include "gnn/system/Check.h"

namespace gnn {

HeteroRGCNBlocks::HeteroRGCNBlocks(std::unique_ptr<HeteroRGCN> model, TypedBatchLayout layout)
    : model_(std::move(model)), layout_(std::move(layout)) {
  const HeteroRGCNOptions& o = model_->options();
  GNN_CHECK_ARG(layout_.rows.size() == o.nodeTypes.size() && layout_.widths.size() == o.nodeTypes.size(),
                "HeteroRGCNBlocks: a layout of ", layout_.rows.size(), " node types for a model of ",
                o.nodeTypes.size());
  registerModule("", *model_);
  addBlock("input", [this](BlockState s, const Batch& b) {
    s.set("h", model_->input(typedFeatures(b, layout_)));
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

std::unique_ptr<Module> HeteroRGCNBlocks::clone() const {
  // The wrapped model's clone brings its options; copying the state again brings the training flags.
  return cloneInto(std::make_unique<HeteroRGCNBlocks>(cloneModule(*model_), layout_));
}

}  // namespace gnn
