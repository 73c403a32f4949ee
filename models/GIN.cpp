#include "models/GIN.h"

#include "gnn/Ops.h"

namespace gnn {

GIN::GIN(GraphModelOptions options, Generator& gen) : GraphModel("GIN", options, gen) {
  for (int64_t l = 0; l < opt_.layers; ++l) {
    convs_.push_back(std::make_unique<GINConv>(opt_.hidden, gen, opt_.edgeFeatures, opt_.dtype));
    norms_.push_back(std::make_unique<LayerNorm>(opt_.hidden, 1e-5, opt_.dtype));
    registerModule("convs." + std::to_string(l), *convs_.back());
    registerModule("norms." + std::to_string(l), *norms_.back());
    addBlock("layers/" + std::to_string(l), [this, l](BlockState s, const Batch& b) {
      Variable c = convs_[l]->forward(s.get("h"), b.edgeIndex, b.edgeAttr);
      Variable h = l + 1 < opt_.layers ? norms_[l]->forwardRelu(c) : norms_[l]->forward(c);
      s.set("h", dropout(h, opt_.dropout, isTraining()));
      return s;
    });
  }
  registerHead();
}

std::unique_ptr<Module> GIN::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GIN>(opt_, unused));
}

}  // namespace gnn
