#include "models/GraphModel.h"

#include "gnn/Ops.h"

namespace gnn {

// Members are built in declaration order (head, dropout stream, input encoder), then the subclass's layers.
GraphModel::GraphModel(const char* what, GraphModelOptions options, Generator& gen)
    : opt_(options), head_(options.hidden, options.tasks, gen, true, options.dtype), dropoutGen_(gen.next()) {
  GNN_CHECK_ARG(opt_.layers >= 1 && opt_.hidden >= 1 && opt_.tasks >= 1, what,
                ": layers, hidden and tasks must be >= 1");
  if (opt_.inFeatures > 0) {
    input_ = std::make_unique<Linear>(opt_.inFeatures, opt_.hidden, gen, true, opt_.dtype);
    registerModule("input", *input_);
  } else {
    atoms_ = std::make_unique<AtomEncoder>(opt_.hidden, gen, opt_.dtype);
    registerModule("atom_encoder", *atoms_);
  }
}

Variable GraphModel::embedInput(const Batch& b) {
  return atoms_ ? atoms_->forward(b.x) : input_->forward(Variable(b.x.to(opt_.dtype)));
}

Variable GraphModel::forward(const Batch& b) {
  Variable g = globalPool(opt_.pool, nodeEmbeddings(b), b.ptr, b.graphsMask);
  Variable out = head_.forward(g);
  // The head's bias would make padding rows non-zero again.
  return b.graphsMask.defined() ? mul(out, Variable(maskColumn(b.graphsMask, out.dtype()))) : out;
}

}  // namespace gnn
