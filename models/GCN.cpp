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
  }
  registerHead();
}

Variable GCN::nodeEmbeddings(const Batch& b) {
  Variable h = embedInput(b);
  for (int64_t l = 0; l < opt_.layers; ++l) {
    h = convs_[l]->forward(h, b.edgeIndex);
    if (l + 1 < opt_.layers) h = relu(h);
    h = dropout(h, opt_.dropout, dropoutGen_, isTraining());
  }
  return h;
}

}  // namespace gnn
