#include "models/GraphModel.h"

#include <algorithm>

#include "gnn/ops/Ops.h"
#include "models/GraphFeatures.h"
#include "models/NodeFeatures.h"
#include "models/PaddingGraphRows.h"

namespace gnn {

GraphModel::GraphModel(const char* what, GraphModelOptions options, Generator& gen)
    : opt_(options), head_(options.hidden + std::max<int64_t>(options.graphFeatures, 0), options.tasks, gen, true,
                           options.dtype) {
  GNN_CHECK_ARG(opt_.layers >= 1 && opt_.hidden >= 1 && opt_.tasks >= 1, what,
                ": layers, hidden and tasks must be >= 1");
  GNN_CHECK_ARG(opt_.graphFeatures >= 0, what, ": graphFeatures must be >= 0, got ", opt_.graphFeatures);
  GNN_CHECK_ARG(opt_.nodeFeatures >= 0, what, ": nodeFeatures must be >= 0, got ", opt_.nodeFeatures);
  // This draw once seeded the model's own dropout stream (dropout now draws from the ExecutionContext); it is
  // still taken so that a seed gives the same initial weights as before.
  gen.next();
  if (opt_.inFeatures > 0) {
    input_ = std::make_unique<Linear>(opt_.inFeatures, opt_.hidden, gen, true, opt_.dtype);
    registerModule("input", *input_);
  } else {
    atoms_ = std::make_unique<AtomEncoder>(opt_.hidden, gen, opt_.dtype);
    registerModule("atom_encoder", *atoms_);
  }
  // Drawn after the encoder: a model without node features keeps every initial weight it had.
  if (opt_.nodeFeatures > 0) {
    nodeFeatures_ = std::make_unique<Linear>(opt_.nodeFeatures, opt_.hidden, gen, true, opt_.dtype);
    registerModule("node_features", *nodeFeatures_);
  }
  addBlock("input", [this](BlockState s, const Batch& b) {
    Variable h = atoms_ ? atoms_->forward(b.x) : input_->forward(Variable(b.x.to(opt_.dtype)));
    if (nodeFeatures_) h = add(h, nodeFeatures_->forward(nodeFeaturesInput(b, opt_.nodeFeatures, opt_.dtype, name())));
    s.set("h", h);
    return s;
  });
}

void GraphModel::registerHead() {
  registerModule("head", head_);
  addBlock("head", [this](BlockState s, const Batch& b) {
    Variable out = head_.forward(readout(s.get("h"), b));
    return outputState(zeroPaddingGraphRows(out, b));
  });
}

Variable GraphModel::nodeEmbeddings(const Batch& b) { return runBlocks(BlockState(), b, 0, numBlocks() - 1).get("h"); }

Variable GraphModel::readout(const Variable& h, const Batch& b) const {
  Variable pooled = globalPool(opt_.pool, h, b.ptr, b.graphsMask);
  if (opt_.graphFeatures == 0) return pooled;
  return concatCols({pooled, graphFeaturesInput(b, opt_.graphFeatures, opt_.dtype, name())});
}

Variable GraphModel::graphEmbeddings(const Batch& b) { return readout(nodeEmbeddings(b), b); }

}  // namespace gnn
