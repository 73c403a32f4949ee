#include "models/OgbMolGCN.h"

#include "gnn/ops/Ops.h"
#include "models/KeyedDropoutScope.h"

namespace gnn {

OgbMolGCN::OgbMolGCN(GraphModelOptions options, Generator& gen) : GraphModel("GCN", options, gen) {
  GCNConvOptions co;
  co.cached = false;  // every batch is a different graph
  co.dtype = opt_.dtype;
  for (int64_t l = 0; l < opt_.layers; ++l) {
    convs_.push_back(std::make_unique<GCNConv>(opt_.hidden, opt_.hidden, gen, co));
    registerModule("convs." + std::to_string(l), *convs_.back());
    if (opt_.norm == NormKind::Batch) {
      norms_.push_back(std::make_unique<NormLayer>(opt_.norm, opt_.hidden, opt_.dtype));
      registerModule("norms." + std::to_string(l), norms_.back()->module());
    }
    addBlock("layers/" + std::to_string(l), [this, l](BlockState s, const Batch& b) {
      Variable in = s.get("h"), vn;
      if (virtualNode_) {  // OGB's order: add the virtual nodes, convolve, then update them from `in`
        vn = l == 0 ? virtualNode_->initial(b) : s.get("vn");
        in = VirtualNode::addTo(in, vn, b);
      }
      Variable h = convs_[l]->forward(in, b.edgeIndex);
      const bool last = l + 1 == opt_.layers;
      if (!norms_.empty())
        h = norms_[static_cast<size_t>(l)]->forward(h, b.nodesMask, !last);
      else if (!last)
        h = relu(h);
      s.set("h", layerDropout(h, opt_.dropout, isTraining(), RowLevel::Node));
      if (virtualNode_ && !last) s.set("vn", virtualNode_->update(l, in, vn, b, opt_.dropout));
      return s;
    });
  }
  // Drawn after the layers: a model without a virtual node keeps every initial weight it had.
  if (opt_.virtualNode) {
    virtualNode_ = std::make_unique<VirtualNode>(opt_.layers, opt_.hidden, opt_.norm, gen, opt_.dtype);
    registerModule("virtual_node", *virtualNode_);
  }
  registerHead();
}

std::unique_ptr<Module> OgbMolGCN::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<OgbMolGCN>(opt_, unused));
}

}  // namespace gnn
