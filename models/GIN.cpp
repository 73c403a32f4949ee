#include "models/GIN.h"

#include "gnn/Ops.h"

namespace gnn {

GIN::GIN(GraphModelOptions options, Generator& gen) : GraphModel("GIN", options, gen) {
  for (int64_t l = 0; l < opt_.layers; ++l) {
    convs_.push_back(std::make_unique<GINConv>(opt_.hidden, gen, opt_.edgeFeatures, opt_.dtype));
    norms_.push_back(std::make_unique<LayerNorm>(opt_.hidden, 1e-5, opt_.dtype));
    registerModule("convs." + std::to_string(l), *convs_.back());
    registerModule("norms." + std::to_string(l), *norms_.back());
  }
  registerHead();
}

Variable GIN::nodeEmbeddings(const Batch& b) {
  Variable h = embedInput(b);
  for (int64_t l = 0; l < opt_.layers; ++l) {
    Variable c = convs_[l]->forward(h, b.edgeIndex, b.edgeAttr);
    h = l + 1 < opt_.layers ? norms_[l]->forwardRelu(c) : norms_[l]->forward(c);
    h = dropout(h, opt_.dropout, dropoutGen_, isTraining());
  }
  return h;
}

}  // namespace gnn
