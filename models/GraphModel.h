// GraphModel: a graph-level model over Batches (GIN, GCN): node embeddings from message passing, pooled per
// graph by `ptr`, then a linear head. Rows of padding graphs are zero in the output, and real graphs' outputs
// do not depend on padding (tests/models/PaddingInvariance_test.cpp).
//
//   GIN model(opts, gen);
//   Variable pred = model.forward(batch);                  // [numGraphs, tasks]
//   Variable loss = l1Loss(pred, batch.y, batch.yMask);    // padding graphs have yMask 0
#pragma once
#include "gnn/GlobalPooling.h"
#include "gnn/Module.h"
#include "loaders/Batch.h"

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
  /// Graph-level outputs [numGraphs, tasks]; zero rows for padding graphs.
  virtual Variable forward(const Batch& batch) = 0;
  virtual const char* name() const = 0;
};

}  // namespace gnn
