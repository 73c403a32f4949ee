// GpsLayer: one "MPNN+MHSA+FFN" layer of GPS++ (Masters et al. 2022; graphcore/examples gnn/ogb_lsc_pcqm4mv2,
// model/hybrid/layers.py GPSLayer, as its PCQM4Mv2 configurations run it). The message passing and the attention
// read the same input nodes x side by side, their outputs are summed, then a feed-forward network follows:
//   m = LN(InteractionNetwork(x, e, g).nodes)                     (edges and globals come out updated too)
//   a = LN(x + graphDropout(MHSA(x, bias, within each graph)))
//   y = LN((m + a) + graphDropout(FFN(m + a)))                    FFN: Linear(D, F), GELU, Linear(F, D)
// The attention runs over each graph's atoms alone: x goes to one block of side M per graph (toDenseBatch; padding
// slots and padding graphs masked out of the keys) and back to node rows. graphDropout is GPS++'s stochastic depth:
// a graph's whole update dropped with probability p (its rows 0, the others scaled by 1 / (1 - p)).
//
//   GpsLayer layer(options, l, gen);
//   GpsLayer::State s = layer.forward({h, e, g}, batch, bias, keyMask, training);
#pragma once
#include "gnn/nn/Linear.h"
#include "gnn/nn/MultiheadSelfAttention.h"
#include "gnn/nn/norm/LayerNorm.h"
#include "models/GpsOptions.h"
#include "models/InteractionNetwork.h"

namespace gnn {

class GpsLayer : public Module {
 public:
  struct State {
    Variable nodes, edges, globals;
  };
  /// Layer `index` of options.layers: its stochastic depth is options.graphDropout x index / (layers - 1), as
  /// GPS++'s layer_depth_frac; the last layer does not update the globals (GPS++'s decoder reads nodes only).
  GpsLayer(const GpsOptions& options, int64_t index, Generator& gen);
  /// bias [G, heads, M, M] (may be undefined), keyMask uint8 [G, M] (1 = a real atom), M = batch.maxNodesPerGraph.
  State forward(const State& in, const Batch& batch, const Variable& bias, const Tensor& keyMask, bool training) const;
  std::unique_ptr<Module> clone() const override;

 private:
  Variable graphDropout(const Variable& x, const Batch& batch, bool training) const;
  GpsOptions options_;  // the options the layer was built from (its widths; clone() builds from them)
  int64_t index_;
  double graphDropout_;
  InteractionNetwork mpnn_;
  LayerNorm mpnnNorm_;
  MultiheadSelfAttention attn_;
  LayerNorm attnNorm_;
  Linear ffn1_, ffn2_;
  LayerNorm ffnNorm_;
};

/// Row of each node in the per-graph blocks [G·M, D] of toDenseBatch: node i of graph g -> g·M + i (a padding
/// graph's nodes, which may be more than M, -> a row of its own all-zero block).
Tensor denseRowOfNodes(const Batch& batch, int64_t m);

}  // namespace gnn
