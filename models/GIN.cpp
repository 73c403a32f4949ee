#include "models/GIN.h"

#include "gnn/Ops.h"

namespace gnn {

GIN::GIN(GraphModelOptions options, Generator& gen)
    : opt_(options), head_(options.hidden, options.tasks, gen, true, options.dtype), dropoutGen_(gen.next()) {
  GNN_CHECK_ARG(opt_.layers >= 1 && opt_.hidden >= 1 && opt_.tasks >= 1, "GIN: layers, hidden and tasks must be >= 1");
  if (opt_.inFeatures > 0) {
    input_ = std::make_unique<Linear>(opt_.inFeatures, opt_.hidden, gen, true, opt_.dtype);
    registerModule("input", *input_);
  } else {
    atoms_ = std::make_unique<AtomEncoder>(opt_.hidden, gen, opt_.dtype);
    registerModule("atom_encoder", *atoms_);
  }
  for (int64_t l = 0; l < opt_.layers; ++l) {
    convs_.push_back(std::make_unique<GINConv>(opt_.hidden, gen, opt_.edgeFeatures, opt_.dtype));
    norms_.push_back(std::make_unique<LayerNorm>(opt_.hidden, 1e-5, opt_.dtype));
    registerModule("convs." + std::to_string(l), *convs_.back());
    registerModule("norms." + std::to_string(l), *norms_.back());
  }
  registerModule("head", head_);
}

Variable GIN::nodeEmbeddings(const Batch& b) {
  Variable h = atoms_ ? atoms_->forward(b.x) : input_->forward(Variable(b.x.to(opt_.dtype)));
  for (int64_t l = 0; l < opt_.layers; ++l) {
    h = norms_[l]->forward(convs_[l]->forward(h, b.edgeIndex, b.edgeAttr));
    if (l + 1 < opt_.layers) h = relu(h);
    h = dropout(h, opt_.dropout, dropoutGen_, isTraining());
  }
  return h;
}

Variable GIN::forward(const Batch& b) {
  Variable g = globalPool(opt_.pool, nodeEmbeddings(b), b.ptr, b.graphsMask);
  Variable out = head_.forward(g);
  // The head's bias would make padding rows non-zero again.
  return b.graphsMask.defined() ? mul(out, Variable(maskColumn(b.graphsMask, out.dtype()))) : out;
}

}  // namespace gnn
