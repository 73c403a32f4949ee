// PCQM-style molecules (tests/models/GraphormerMolecules.h) in small fixed-size batches, and a small GIN, for the
// device tests that run a model through replicas, stages or processes, with a masked L1 loss.
#pragma once
#include <memory>
#include <vector>

#include "../models/GraphormerMolecules.h"
#include "device/Device.h"
#include "gnn/ops/Ops.h"
#include "loaders/FixedSizeCollator.h"
#include "models/OgbMolGIN.h"

namespace gnn::test {

inline const std::vector<Graph>& smallMolecules() {
  static const std::vector<Graph> g = pcqmStyle(64, 30);
  return g;
}

/// Molecules [first, first + count) in one batch of count + 1 graph slots (the last a padding graph).
inline Batch smallBatch(size_t first, size_t count) {
  const std::vector<Graph> gs(smallMolecules().begin() + static_cast<long>(first),
                              smallMolecules().begin() + static_cast<long>(first + count));
  FixedSizeOptions o;
  o.numGraphs = static_cast<int64_t>(count) + 1;
  o.numNodes = 30 * static_cast<int64_t>(count) + 8;
  o.numEdges = 2 * o.numNodes;
  o.maxNodesPerGraph = 30;
  return FixedSizeCollator(o).collate(gs);
}

/// OGB's GIN, 3 layers of width 16, the same weights every call.
inline std::unique_ptr<BlockModel> smallGin(double dropout = 0.0) {
  Generator gen(11);
  GraphModelOptions o;
  o.layers = 3;
  o.hidden = 16;
  o.dropout = dropout;
  return std::make_unique<OgbMolGIN>(o, gen);
}

/// The mean absolute error over a batch's labelled targets.
inline LossFn maskedL1() {
  return {[](const Variable& out, const Batch& b) { return l1Loss(out, b.y, b.yMask); }, {}};
}

}  // namespace gnn::test
