#include "models/GraphormerLayer.h"

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {

void graphormerInit(Linear& layer, Generator& gen) {
  Variable& w = layer.weight();
  w.value() = init::normal(w.shape(), 0.02, gen, w.dtype());
  if (Variable* b = layer.bias()) b->value() = Tensor::zeros(b->shape(), b->dtype());
}

GraphormerLayer::GraphormerLayer(int64_t hidden, int64_t heads, int64_t ffn, double dropout,
                                 double attentionDropout, double activationDropout, Generator& gen,
                                 DType dtype)
    : hidden_(hidden),
      heads_(heads),
      ffn_(ffn),
      dropout_(dropout),
      attentionDropout_(attentionDropout),
      activationDropout_(activationDropout),
      dtype_(dtype),
      attnNorm_(hidden, 1e-5, dtype),
      attn_(hidden, heads, gen, attentionDropout, dtype),
      ffnNorm_(hidden, 1e-5, dtype),
      fc1_(hidden, ffn, gen, true, dtype),
      fc2_(ffn, hidden, gen, true, dtype) {
  GNN_CHECK_ARG(dropout >= 0 && dropout < 1 && activationDropout >= 0 && activationDropout < 1,
                "GraphormerLayer: dropouts must be in [0, 1)");
  for (Linear* l : {&attn_.inProj(), &attn_.outProj(), &fc1_, &fc2_}) graphormerInit(*l, gen);
  registerModule("self_attn_layer_norm", attnNorm_);
  registerModule("self_attn", attn_);
  registerModule("final_layer_norm", ffnNorm_);
  registerModule("fc1", fc1_);
  registerModule("fc2", fc2_);
}

Variable GraphormerLayer::forward(const Variable& h, int64_t graphs, const Variable& bias,
                                  const Tensor& keyMask) const {
  return afterAttention(h, attn_.forward(attnNorm_.forward(h), graphs, bias, keyMask));
}

Variable GraphormerLayer::forwardPacked(const Variable& h, const Tensor& rowPtr, int64_t maxRows,
                                        const Variable& bias) const {
  return afterAttention(h, attn_.forwardPacked(attnNorm_.forward(h), rowPtr, maxRows, bias));
}

Variable GraphormerLayer::afterAttention(const Variable& h, const Variable& a) const {
  const bool training = isTraining();
  Variable h1 = add(h, dropout(a, dropout_, training));
  Variable f = gelu(fc1_.forward(ffnNorm_.forward(h1)));
  f = fc2_.forward(dropout(f, activationDropout_, training));
  return add(h1, dropout(f, dropout_, training));
}

std::unique_ptr<Module> GraphormerLayer::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GraphormerLayer>(hidden_, heads_, ffn_, dropout_, attentionDropout_,
                                                     activationDropout_, unused, dtype_));
}

}  // namespace gnn
