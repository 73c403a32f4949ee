// GraphModel: a graph-level model over Batches (GIN, GCN) made of blocks: "input" (the node encoder, plus
// Linear(F, hidden) of Batch::nodeFeatures when options().nodeFeatures = F > 0),
// "layers/0" .. "layers/L-1" (message passing), "head" (global pooling by `ptr`, a linear head, zero rows for
// padding graphs). Real graphs' outputs do not depend on padding (tests/models/PaddingInvariance_test.cpp).
// Dropout draws its masks from the current ExecutionContext's random key (set it every step); inside a
// KeyedDropoutScope (MC dropout) they are keyed per molecule instead (models/KeyedDropoutScope.h).
//
//   GIN model(opts, gen);
//   ExecutionContext::current().setRandomKey({seed, step, 0});   // step: the optimizer's step count
//   Variable pred = model.forward(batch);                  // [numGraphs, tasks]
//   Variable loss = l1Loss(pred, batch.y, batch.yMask);    // padding graphs have yMask 0
#pragma once
#include <memory>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/pool/GlobalPooling.h"
#include "loaders/Batch.h"
#include "models/AtomEncoder.h"
#include "models/BlockModel.h"
#include "models/NormLayer.h"

namespace gnn {

struct GraphModelOptions {
  int64_t layers = 5;
  int64_t hidden = 300;
  int64_t tasks = 1;
  double dropout = 0.0;
  PoolKind pool = PoolKind::Mean;
  /// 0: x holds OGB's 9 categorical atom features (AtomEncoder); > 0: float features of this width (Linear).
  int64_t inFeatures = 0;
  /// Use int64 bond features [E, 3] (BondEncoder) in GIN's messages.
  bool edgeFeatures = true;
  /// > 0: Batch::graphFeatures [numGraphs, graphFeatures] is concatenated to the pooled vector before the head
  /// (molecules: descriptors, as Chemprop's X_d); the head reads hidden + graphFeatures values.
  int64_t graphFeatures = 0;
  /// > 0: Batch::nodeFeatures [numNodes, nodeFeatures] (molecules: the user's atom descriptors) pass through
  /// Linear(nodeFeatures, hidden), added to the input encoder's output (registered as "node_features").
  int64_t nodeFeatures = 0;
  /// Parameter and activation dtype (float64 for gradient checks and exactness tests).
  DType dtype = DType::F32;
  /// GIN's norms (in its MLP and after each layer): LayerNorm, or BatchNorm over the real nodes as OGB's.
  /// GCN: Layer keeps it without a norm, as it has always been; Batch adds BatchNorm after each layer as OGB's.
  NormKind norm = NormKind::Layer;
  /// OGB's virtual node (models/VirtualNode.h), for GIN and GCN.
  bool virtualNode = false;
  /// Each layer's input added to its output after the dropout (OGB's and PNA's `residual`), for OgbMolConv.
  bool residual = false;
  /// PNA's in-degree histogram of the training graphs (PyG's `deg`: entry d counts the nodes with d incoming edges).
  std::vector<int64_t> degreeHistogram;
};

class GraphModel : public BlockModel {
 public:
  /// Node embeddings after the last layer, [numNodes, hidden]: every block but the head, the state's "h".
  Variable nodeEmbeddings(const Batch& batch);
  /// The graph-level vector the head reads, [numGraphs, hidden + options().graphFeatures]: the node embeddings
  /// pooled (options().pool), then Batch::graphFeatures when the model reads them;
  /// padding graphs' rows are 0. forward() is the head applied to exactly these values.
  Variable graphEmbeddings(const Batch& batch);
  virtual const char* name() const = 0;
  const GraphModelOptions& options() const { return opt_; }

 protected:
  /// Builds the head and the input encoder (OGB atom encoder, or a linear layer for float features) and adds
  /// the "input" block; the subclass adds its layer blocks, then calls registerHead().
  GraphModel(const char* what, GraphModelOptions options, Generator& gen);
  /// Registers the head after the subclass's layers (parameters keep the order input, layers, head) and adds
  /// the "head" block.
  void registerHead();
  /// The pooling the head block and graphEmbeddings() share.
  Variable readout(const Variable& h, const Batch& b) const;

  // Declaration order is construction order: the head draws its weights first, as it always has.
  GraphModelOptions opt_;
  Linear head_;
  std::unique_ptr<AtomEncoder> atoms_;
  std::unique_ptr<Linear> input_;
  std::unique_ptr<Linear> nodeFeatures_;
};

}  // namespace gnn
