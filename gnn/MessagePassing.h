// MessagePassing: the base of graph layers, as in PyTorch Geometric. propagate() gathers source (x_j) and,
// when asked, destination (x_i) features per edge, calls message(), aggregates the messages at their
// destination node with aggregate() (deterministic scatter, no atomics) and finishes with update().
//
//   class MyConv : public MessagePassing {
//     Variable message(const Variable& xj, const Variable&, const Variable& e) override { return relu(add(xj, e)); }
//   };
//   Variable out = conv.propagate(edgeIndex, x, edgeAttr);      // edge_index [2, E]: row 0 source, row 1 target
#pragma once
#include "gnn/Module.h"
#include "gnn/Ops.h"

namespace gnn {

enum class Aggregation { Sum, Mean, Max };

class MessagePassing : public Module {
 public:
  explicit MessagePassing(Aggregation aggr = Aggregation::Sum, bool needsTargetFeatures = false)
      : aggr_(aggr), needsXi_(needsTargetFeatures) {}

  /// Runs message -> aggregate -> update over edgeIndex (int64 [2, E]). numNodes defaults to x's rows.
  Variable propagate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr = Variable(),
                     int64_t numNodes = -1);

 protected:
  /// Message along each edge; default: the source features x_j. xi is undefined unless the layer asked for it.
  virtual Variable message(const Variable& xj, const Variable& xi, const Variable& edgeAttr);
  /// Reduces messages [E, F] at their destinations dst [E] into [numNodes, F].
  virtual Variable aggregate(const Variable& messages, const Tensor& dst, int64_t numNodes);
  /// Final node update; default: the aggregate itself.
  virtual Variable update(const Variable& aggregated, const Variable& x);

  Aggregation aggr_;
  bool needsXi_;
};

/// Row `row` (0 = source, 1 = destination) of an edge_index [2, E] as an int64 [E] tensor (shares storage).
Tensor edgeRow(const Tensor& edgeIndex, int row);

}  // namespace gnn
