#include "models/OgbMolGIN.h"

#include "gnn/ops/Ops.h"
#include "models/KeyedDropoutScope.h"

namespace gnn {

OgbMolGIN::OgbMolGIN(GraphModelOptions options, Generator& gen) : GraphModel("GIN", options, gen) {
  for (int64_t l = 0; l < opt_.layers; ++l) {
    convs_.push_back(std::make_unique<OgbMolGINConv>(opt_.hidden, gen, opt_.edgeFeatures, opt_.dtype, opt_.norm));
    norms_.push_back(std::make_unique<NormLayer>(opt_.norm, opt_.hidden, opt_.dtype));
    registerModule("convs." + std::to_string(l), *convs_.back());
    registerModule("norms." + std::to_string(l), norms_.back()->module());
    addBlock("layers/" + std::to_string(l), [this, l](BlockState s, const Batch& b) {
      Variable in = s.get("h"), vn;
      if (virtualNode_) {  // OGB's order: add the virtual nodes, convolve, then update them from `in`
        vn = l == 0 ? virtualNode_->initial(b) : s.get("vn");
        in = VirtualNode::addTo(in, vn, b);
      }
      Variable c = convs_[l]->forward(in, b.edgeIndex, b.edgeAttr, b.nodesMask);
      Variable h = norms_[l]->forward(c, b.nodesMask, l + 1 < opt_.layers);
      s.set("h", layerDropout(h, opt_.dropout, isTraining(), RowLevel::Node));
      if (virtualNode_ && l + 1 < opt_.layers) s.set("vn", virtualNode_->update(l, in, vn, b, opt_.dropout));
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

std::unique_ptr<Module> OgbMolGIN::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<OgbMolGIN>(opt_, unused));
}

}  // namespace gnn
