// OgbMolGINConv: the graph isomorphism layer with edge features used by OGB's molecule baselines, named apart
// from PyG's GINConv / GINEConv (which have no bond encoder and a linear edge map; gnn/nn/conv)
// (Xu et al., ICLR 2019; Hu et al., "Strategies for Pre-training GNNs", ICLR 2020; ogb/examples/graphproppred/
// mol/conv.py):  h' = MLP(h + sum_{j -> i} ReLU(h_j + e_ji)),  MLP = Linear(D, 2D), norm, ReLU, Linear(2D, D).
// Differences from OGB's code, for fixed-size batches: eps is fixed at 0 (PyG's GINConv default), and the norm
// inside the MLP is LayerNorm by default; NormKind::Batch gives OGB's BatchNorm, its statistics taken over the
// real nodes only (the batch's nodesMask), so padding rows never change real rows' outputs.
// In MessagePassing's terms: message ReLU(h_j + e_ji) (h_j without edge features), sum aggregation, update
// h + aggregate; with edge features messageAndAggregate() runs all three as one fused reluMessageSum pass.
#pragma once
#include <memory>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"
#include "models/BondEncoder.h"
#include "models/NormLayer.h"

namespace gnn {

class OgbMolGINConv : public MessagePassing {
 public:
  /// edgeFeatures: embed int64 bond features [E, 3] with a BondEncoder; false: plain GIN (messages h_j).
  /// norm: the MLP's norm (LayerNorm, or BatchNorm over the real nodes).
  OgbMolGINConv(int64_t dim, Generator& gen, bool edgeFeatures = true, DType dtype = DType::F32,
          NormKind norm = NormKind::Layer);
  /// h [N, D], edge_index [2, E], edge_attr int64 [E, 3] (ignored without edge features); nodesMask uint8 [N]
  /// marks the real nodes for BatchNorm's statistics (undefined: every node).
  Variable forward(const Variable& h, const Tensor& edgeIndex, const Tensor& edgeAttr,
                   const Tensor& nodesMask = Tensor());
  std::unique_ptr<Module> clone() const override;
  /// false: messages go through gather -> message -> scatter instead of the fused op (same numbers; for tests
  /// and per-op profiles). On by default.
  void setFused(bool on) { fused_ = on; }

 protected:
  Variable message(const Variable& xj, const Variable& xi, const Variable& edgeAttr) override;
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;
  /// GIN's root term: (1 + eps) h + aggregate with eps = 0.
  Variable update(const Variable& aggregated, const Variable& x) override;

 private:
  int64_t dim_;
  DType dtype_;
  NormKind normKind_;
  bool fused_ = true;
  // Set by messageAndAggregate when its fused kernel already added update's root term h (one pass instead
  // of an extra [N, D] add), so update() passes the aggregate through. Valid for the propagate() call that
  // set it; a module runs on one thread at a time (replicas use clones).
  bool rootAdded_ = false;
  std::unique_ptr<BondEncoder> bond_;
  Linear lin1_, lin2_;
  NormLayer norm_;
};

}  // namespace gnn
