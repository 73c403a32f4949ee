// InteractionNetwork: the message-passing module of a GPS++ layer (Masters et al., "GPS++: An Optimised Hybrid
// MPNN/Transformer for Molecular Property Prediction", 2022; graphcore/examples gnn/ogb_lsc_pcqm4mv2,
// model/gnn/layers.py InteractionNetworkLayer, with its PCQM4Mv2 settings: gather from both ends, scatter to both,
// direct neighbour aggregation, concatenation, globals on nodes and edges, sum aggregation). With node rows x
// [N, Dn], directed edges e [E, De] (s -> r) and per-graph globals g [G, Dg]:
//   e' = edgeMlp([x_r | x_s | e | g])                                               [E, De]
//   n' = nodeMlp([sum_{s->i} [e' | x_s] | sum_{i->r} [e' | x_r] | x_i | g])         [N, Dn]
//   g' = globalMlp([g | sum over the graph's nodes of n' | and of its edges' e'])    [G, Dg]
//   out: x + dropout(n'), e + dropout(e'), g + dropout(g')
// Dropouts drop whole rows (GPS++'s noise_shape [.., rows, 1]) and only in training. Every MLP is a NormMlp of
// hidden width 4 x its output (GPS++'s expansion ratio). Padding graphs' nodes and edges (the pad edges are
// self-loops on pad nodes) reach no real graph's row, so real graphs' outputs do not depend on the padding.
//
//   InteractionNetwork mpnn(256, 128, 64, 4, gen);
//   auto out = mpnn.forward(nodes, edges, globals, batch, /*training=*/true);   // out.nodes, out.edges, out.globals
#pragma once
#include <memory>

#include "loaders/Batch.h"
#include "models/NormMlp.h"

namespace gnn {

struct InteractionNetworkDropout {
  double node = 0.0, edge = 0.0, global = 0.0;
};

class InteractionNetwork : public Module {
 public:
  struct Output {
    Variable nodes, edges, globals;
  };
  /// updateGlobals false (GPS++'s last layer, whose decoder reads only nodes): no global MLP; globals pass through.
  InteractionNetwork(int64_t nodeDim, int64_t edgeDim, int64_t globalDim, int64_t expansion, Generator& gen,
                     InteractionNetworkDropout dropout = {}, bool updateGlobals = true, DType dtype = DType::F32);
  /// nodes [N, Dn], edges [E, De], globals [G, Dg] of `batch`'s N nodes, E edges and G graphs.
  Output forward(const Variable& nodes, const Variable& edges, const Variable& globals, const Batch& batch,
                 bool training) const;
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t nodeDim_, edgeDim_, globalDim_, expansion_;
  InteractionNetworkDropout dropout_;
  DType dtype_;
  NormMlp edgeMlp_, nodeMlp_;
  std::unique_ptr<NormMlp> globalMlp_;
};

/// x with each row dropped (all its values 0) with probability p and the rest scaled by 1 / (1 - p); x itself
/// when !training or p == 0. GPS++'s dropouts with noise shape [..., rows, 1].
Variable rowDropout(const Variable& x, double p, bool training);

}  // namespace gnn
