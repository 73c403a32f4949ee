// GraphModel: a graph-level model over Batches (GIN, GCN): node embeddings from message passing, pooled per
// graph by `ptr`, then a linear head. Rows of padding graphs are zero in the output, and real graphs' outputs
// do not depend on padding (tests/models/PaddingInvariance_test.cpp).
//
//   GIN model(opts, gen);
//   Variable pred = model.forward(batch);                  // [numGraphs, tasks]
//   Variable loss = l1Loss(pred, batch.y, batch.yMask);    // padding graphs have yMask 0
#pragma once
#include <memory>

#include "gnn/GlobalPooling.h"
#include "gnn/Linear.h"
#include "gnn/Module.h"
#include "loaders/Batch.h"
#include "models/AtomEncoder.h"

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
  /// Parameter and activation dtype (float64 for gradient checks and exactness tests).
  DType dtype = DType::F32;
};

class GraphModel : public Module {
 public:
  /// Node embeddings after the last layer, [numNodes, hidden].
  virtual Variable nodeEmbeddings(const Batch& batch) = 0;
  /// Graph-level outputs [numGraphs, tasks]: pooled embeddings through the head; zero rows for padding graphs.
  Variable forward(const Batch& batch);
  virtual const char* name() const = 0;
  const GraphModelOptions& options() const { return opt_; }

 protected:
  /// Builds the head and the input encoder (OGB atom encoder, or a linear layer for float features).
  GraphModel(const char* what, GraphModelOptions options, Generator& gen);
  /// Input features -> [numNodes, hidden].
  Variable embedInput(const Batch& batch);
  /// Subclasses call this after registering their layers, so parameters keep the order input, layers, head.
  void registerHead() { registerModule("head", head_); }

  // Declaration order is construction order: the head draws its weights first, as it always has.
  GraphModelOptions opt_;
  Linear head_;
  Generator dropoutGen_;
  std::unique_ptr<AtomEncoder> atoms_;
  std::unique_ptr<Linear> input_;
};

}  // namespace gnn
