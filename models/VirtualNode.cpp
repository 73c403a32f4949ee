#include "models/VirtualNode.h"

#include <string>

#include "gnn/ops/Ops.h"
#include "models/KeyedDropoutScope.h"

namespace gnn {

VirtualNode::VirtualNode(int64_t layers, int64_t hidden, NormKind norm, Generator& gen, DType dtype)
    : layers_(layers), hidden_(hidden), norm_(norm), dtype_(dtype) {
  GNN_CHECK_ARG(layers >= 1 && hidden >= 1, "VirtualNode: layers and hidden must be >= 1, got ", layers, " and ",
                hidden);
  // OGB: torch.nn.Embedding(1, emb_dim) with its weight set to 0.
  embedding_ = &registerParameter("virtualnode_embedding.weight", Tensor({1, hidden}, dtype));
  for (int64_t l = 0; l + 1 < layers; ++l) {
    const std::string at = "mlp_virtualnode_list." + std::to_string(l) + ".";
    lin1_.push_back(std::make_unique<Linear>(hidden, 2 * hidden, gen, true, dtype));
    norm1_.push_back(std::make_unique<NormLayer>(norm, 2 * hidden, dtype));
    lin2_.push_back(std::make_unique<Linear>(2 * hidden, hidden, gen, true, dtype));
    norm2_.push_back(std::make_unique<NormLayer>(norm, hidden, dtype));
    registerModule(at + "0", *lin1_.back());
    registerModule(at + "1", norm1_.back()->module());
    registerModule(at + "3", *lin2_.back());
    registerModule(at + "4", norm2_.back()->module());
  }
}

std::unique_ptr<Module> VirtualNode::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<VirtualNode>(layers_, hidden_, norm_, unused, dtype_));
}

Variable VirtualNode::initial(const Batch& b) const {
  return gatherRows(*embedding_, Tensor({b.numGraphs}, DType::I64));  // row 0 for every graph
}

Variable VirtualNode::addTo(const Variable& h, const Variable& vn, const Batch& b) {
  return add(h, gatherRows(vn, b.batch));
}

Variable VirtualNode::update(int64_t l, const Variable& hIn, const Variable& vn, const Batch& b, double dropoutP) {
  GNN_CHECK_ARG(l >= 0 && l + 1 < layers_, "VirtualNode::update: layer ", l, " has no update (", layers_,
                " layers: 0 .. ", layers_ - 2, ")");
  const size_t k = static_cast<size_t>(l);
  Variable v = add(segmentSum(hIn, b.ptr), vn);
  v = norm1_[k]->forward(lin1_[k]->forward(v), b.graphsMask, true);
  v = norm2_[k]->forward(lin2_[k]->forward(v), b.graphsMask, true);
  return layerDropout(v, dropoutP, isTraining(), RowLevel::Graph);
}

}  // namespace gnn
