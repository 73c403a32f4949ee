#include "models/GCN.h"

#include "gnn/Ops.h"

namespace gnn {

GCN::GCN(GraphModelOptions options, Generator& gen) : GraphModel("GCN", options, gen) {
  GCNConvOptions co;
  co.cached = false;  // every batch is a different graph
  co.dtype = opt_.dtype;
  for (int64_t l = 0; l < opt_.layers; ++l) {
    convs_.push_back(std::make_unique<GCNConv>(opt_.hidden, opt_.hidden, gen, co));
    registerModule("convs." + std::to_string(l), *convs_.back());
    addBlock("layers/" + std::to_string(l), [this, l](BlockState s, const Batch& b) {
      Variable h = convs_[l]->forward(s.get("h"), b.edgeIndex);
      if (l + 1 < opt_.layers) h = relu(h);
      s.set("h", dropout(h, opt_.dropout, isTraining()));
      return s;
    });
  }
  registerHead();
}

std::unique_ptr<Module> GCN::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GCN>(opt_, unused));
}

}  // namespace gnn
