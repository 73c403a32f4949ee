// MessagePassing: the base of graph layers, as in PyTorch Geometric. propagate() gathers source (x_j) and,
// when asked, destination (x_i) features per edge, calls message(), aggregates the messages at their
// destination node with aggregate() (deterministic scatter, no atomics) and finishes with update().
// A layer with a fused kernel for message + aggregation overrides messageAndAggregate() (PyG's
// message_and_aggregate); propagate() then calls it instead of gather -> message -> aggregate, so the layer
// keeps the contract (and update()) and skips the [E, F] intermediates. GCNConv (SpMM with the normalised
// adjacency) and OgbMolGINConv (reluMessageSum) do.
//
//   class MyConv : public MessagePassing {
//     Variable message(const Variable& xj, const Variable&, const Variable& e) override { return relu(add(xj, e)); }
//   };
//   Variable out = conv.propagate(edgeIndex, x, edgeAttr);      // edge_index [2, E]: row 0 source, row 1 target
#pragma once
#include <memory>
#include <string>

#include "gnn/nn/Module.h"
#include "gnn/nn/aggr/Aggregation.h"
#include "gnn/ops/Ops.h"

namespace gnn {

class MessagePassing : public Module {
 public:
  /// aggr: PyG's name of the aggregation ("sum" or "add", "mean", "max"; gnn/nn/aggr).
  explicit MessagePassing(const std::string& aggr = "sum", bool needsTargetFeatures = false);
  /// Any aggregation module, registered as the child "aggr_module" (PyG's name; the basic ones hold no
  /// parameters, so a layer's state_dict keys do not change).
  explicit MessagePassing(std::unique_ptr<Aggregation> aggr, bool needsTargetFeatures = false);

  /// Runs message -> aggregate (or the fused messageAndAggregate) -> update over edgeIndex (int64 [2, E]).
  /// numNodes defaults to x's rows.
  Variable propagate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr = Variable(),
                     int64_t numNodes = -1);
  const Aggregation& aggregation() const { return *aggr_; }

 protected:
  /// Fused message + aggregation: the aggregated messages [numNodes, F], as aggregate(message(...)) would give
  /// them. The default returns an undefined Variable, which makes propagate() run the unfused path; a layer
  /// may also do so for inputs its kernel does not cover.
  virtual Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                                       int64_t numNodes);
  /// Message along each edge; default: the source features x_j. xi is undefined unless the layer asked for it.
  virtual Variable message(const Variable& xj, const Variable& xi, const Variable& edgeAttr);
  /// Reduces messages [E, F] at their destinations dst [E] into [numNodes, F]; default: the aggregation module.
  virtual Variable aggregate(const Variable& messages, const Tensor& dst, int64_t numNodes);
  /// Final node update; default: the aggregate itself.
  virtual Variable update(const Variable& aggregated, const Variable& x);

  /// Whether the aggregation is the plain sum (a fused sum kernel applies).
  bool sumAggregation() const;

 private:
  std::unique_ptr<Aggregation> aggr_;
  bool needsXi_;
};

/// Row `row` (0 = source, 1 = destination) of an edge_index [2, E] as an int64 [E] tensor (shares storage).
Tensor edgeRow(const Tensor& edgeIndex, int row);

}  // namespace gnn
