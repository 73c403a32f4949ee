#include "models/HeteroHGTBlocks.h"

#include <map>
#include <string>
#include <utility>

#include "gnn/system/Check.h"

namespace gnn {

namespace {

const char kTypePrefix[] = "h/";

// The state as HGT's layers take it: each type's rows by name.
std::map<std::string, Variable> typedRows(const BlockState& s) {
  std::map<std::string, Variable> x;
  for (const auto& [name, v] : s.entries())
    if (name.rfind(kTypePrefix, 0) == 0) x.emplace(name.substr(sizeof(kTypePrefix) - 1), v);
  return x;
}

BlockState stateOf(const std::map<std::string, Variable>& x) {
  BlockState s;
  for (const auto& [type, v] : x) s.set(kTypePrefix + type, v);
  return s;
}

}  // namespace

HeteroHGTBlocks::HeteroHGTBlocks(std::unique_ptr<HeteroHGT> model, TypedBatchLayout layout)
    : model_(std::move(model)), layout_(std::move(layout)) {
  const HeteroHGTOptions& o = model_->options();
  GNN_CHECK_ARG(layout_.rows.size() == o.nodeTypes.size() && layout_.widths.size() == o.nodeTypes.size(),
                "HeteroHGTBlocks: a layout of ", layout_.rows.size(), " node types for a model of ",
                o.nodeTypes.size());
  registerModule("", *model_);
  addBlock("input", [this](BlockState, const Batch& b) { return stateOf(model_->input(typedFeatures(b, layout_))); });
  for (size_t l = 0; l < model_->numLayers(); ++l) {
    addBlock("layers/" + std::to_string(l), [this, l](BlockState s, const Batch& b) {
      // Each relation's edges in its types' own ids, split from the typed graph again (a pass over the edges, as
      // HeteroHGT's callers do on every forward).
      return stateOf(model_->layer(l, typedRows(s), model_->relationEdges(b.edgeIndex, b.edgeAttr)));
    });
  }
  addBlock("output", [this](BlockState s, const Batch&) { return outputState(model_->output(typedRows(s))); });
}

std::unique_ptr<Module> HeteroHGTBlocks::clone() const {
  return cloneInto(std::make_unique<HeteroHGTBlocks>(cloneModule(*model_), layout_));
}

}  // namespace gnn
