// NormMlp: GPS++'s two-layer MLP (Masters et al. 2022; graphcore/examples gnn/ogb_lsc_pcqm4mv2, model/gnn/layers.py
// MLP with mlp_norm "layer_hidden" and GELU, the configuration of its PCQM4Mv2 runs):
//   out = Linear(hidden, out)(GELU(LayerNorm(Linear(in, hidden)(x))))
// on rows [M, in] -> [M, out]. GPS++ builds every MLP of its MPNN (edge, node and global updates) and its decoder
// this way, with hidden = latent x expansion ratio (4).
//
//   NormMlp edge(704, 512, 128, gen);
//   Variable e = edge.forward(concatCols({xReceivers, xSenders, edges, globalsOnEdges}));   // [E, 128]
#pragma once
#include "gnn/nn/Linear.h"
#include "gnn/nn/norm/LayerNorm.h"

namespace gnn {

class NormMlp : public Module {
 public:
  NormMlp(int64_t in, int64_t hidden, int64_t out, Generator& gen, DType dtype = DType::F32);
  Variable forward(const Variable& x) const;
  std::unique_ptr<Module> clone() const override;
  int64_t inFeatures() const { return first_.inFeatures(); }
  int64_t outFeatures() const { return second_.outFeatures(); }

 private:
  DType dtype_;
  Linear first_;
  LayerNorm norm_;
  Linear second_;
};

}  // namespace gnn
