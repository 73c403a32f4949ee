#include "models/GpsLayer.h"

#include <algorithm>

#include "gnn/ops/Ops.h"

namespace gnn {

Tensor denseRowOfNodes(const Batch& b, int64_t m) {
  Tensor out({b.numNodes}, DType::I64);
  const int64_t* ptr = b.ptr.data<int64_t>();
  int64_t* o = out.data<int64_t>();
  for (int64_t g = 0; g < b.numGraphs; ++g)
    for (int64_t i = ptr[g]; i < ptr[g + 1]; ++i) o[i] = g * m + std::min(i - ptr[g], m - 1);
  return out;
}

GpsLayer::GpsLayer(const GpsOptions& o, int64_t index, Generator& gen)
    : options_((o.validate(), o)),
      index_(index),
      graphDropout_(o.layers > 1 ? o.graphDropout * static_cast<double>(index) / static_cast<double>(o.layers - 1) : 0.0),
      mpnn_(o.nodeDim, o.edgeDim, o.globalDim, o.expansion, gen, {o.nodeDropout, o.edgeDropout, o.globalDropout},
            /*updateGlobals=*/index + 1 < o.layers, o.dtype),
      mpnnNorm_(o.nodeDim, 1e-5, o.dtype),
      attn_(o.nodeDim, o.heads, gen, o.attentionDropout, o.dtype),
      attnNorm_(o.nodeDim, 1e-5, o.dtype),
      ffn1_(o.nodeDim, o.ffn, gen, true, o.dtype),
      ffn2_(o.ffn, o.nodeDim, gen, true, o.dtype),
      ffnNorm_(o.nodeDim, 1e-5, o.dtype) {
  GNN_CHECK_ARG(index >= 0 && index < o.layers, "GpsLayer: index ", index, " is not a layer of ", o.layers);
  registerModule("mpnn", mpnn_);
  registerModule("mpnn_norm", mpnnNorm_);
  registerModule("attention", attn_);
  registerModule("attention_norm", attnNorm_);
  registerModule("ffn1", ffn1_);
  registerModule("ffn2", ffn2_);
  registerModule("ffn_norm", ffnNorm_);
}

Variable GpsLayer::graphDropout(const Variable& x, const Batch& b, bool training) const {
  if (!training || graphDropout_ == 0.0) return x;
  Variable keep = dropout(Variable(Tensor::full({b.numGraphs, 1}, 1.0, x.dtype())), graphDropout_, training);
  return mul(x, gatherRows(keep, b.batch));
}

GpsLayer::State GpsLayer::forward(const State& in, const Batch& b, const Variable& bias, const Tensor& keyMask,
                                  bool training) const {
  const int64_t m = b.maxNodesPerGraph;
  GNN_CHECK_ARG(m >= 1 && keyMask.defined() && keyMask.rank() == 2 && keyMask.dim(0) == b.numGraphs &&
                    keyMask.dim(1) == m,
                "GpsLayer: the key mask must be [numGraphs, maxNodesPerGraph] = [", b.numGraphs, ", ", m, "]");
  const InteractionNetwork::Output mp =
      mpnn_.forward(in.nodes, in.edges, in.globals, b, training);
  const Variable local = mpnnNorm_.forward(mp.nodes);
  // Attention within each graph: to one block per graph, attend, and back to node rows.
  const Variable blocks = reshape(toDenseBatch(in.nodes, b.ptr, b.graphsMask, m), {b.numGraphs * m, options_.nodeDim});
  const Variable attended = gatherRows(attn_.forward(blocks, b.numGraphs, bias, keyMask), denseRowOfNodes(b, m));
  const Variable global = attnNorm_.forward(add(in.nodes, graphDropout(attended, b, training)));
  const Variable both = add(local, global);
  const Variable ffn = ffn2_.forward(gelu(ffn1_.forward(both)));
  return {ffnNorm_.forward(add(both, graphDropout(ffn, b, training))), mp.edges, mp.globals};
}

std::unique_ptr<Module> GpsLayer::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GpsLayer>(options_, index_, unused));
}

}  // namespace gnn
