#include "models/InteractionNetwork.h"

#include "gnn/nn/conv/MessagePassing.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Check.h"

namespace gnn {

Variable rowDropout(const Variable& x, double p, bool training) {
  if (!training || p == 0.0) return x;
  Variable keep = dropout(Variable(Tensor::full({x.dim(0), 1}, 1.0, x.dtype())), p, training);
  return mul(x, keep);
}

InteractionNetwork::InteractionNetwork(int64_t nodeDim, int64_t edgeDim, int64_t globalDim, int64_t expansion,
                                       Generator& gen, InteractionNetworkDropout dropout, bool updateGlobals,
                                       DType dtype)
    : nodeDim_(nodeDim),
      edgeDim_(edgeDim),
      globalDim_(globalDim),
      expansion_(expansion),
      dropout_(dropout),
      dtype_(dtype),
      edgeMlp_(2 * nodeDim + edgeDim + globalDim, expansion * edgeDim, edgeDim, gen, dtype),
      nodeMlp_(2 * (edgeDim + nodeDim) + nodeDim + globalDim, expansion * nodeDim, nodeDim, gen, dtype) {
  if (updateGlobals)
    globalMlp_ = std::make_unique<NormMlp>(globalDim + nodeDim + edgeDim, expansion * globalDim, globalDim, gen, dtype);
  GNN_CHECK_ARG(nodeDim >= 1 && edgeDim >= 1 && globalDim >= 1 && expansion >= 1,
                "InteractionNetwork: widths and expansion must be >= 1");
  for (double p : {dropout.node, dropout.edge, dropout.global})
    GNN_CHECK_ARG(p >= 0 && p < 1, "InteractionNetwork: dropouts must be in [0, 1), got ", p);
  registerModule("edge", edgeMlp_);
  registerModule("node", nodeMlp_);
  if (globalMlp_) registerModule("global", *globalMlp_);
}

InteractionNetwork::Output InteractionNetwork::forward(const Variable& nodes, const Variable& edges,
                                                       const Variable& globals, const Batch& b, bool training) const {
  GNN_CHECK_ARG(nodes.shape().size() == 2 && nodes.dim(0) == b.numNodes && nodes.dim(1) == nodeDim_ && edges.shape().size() == 2 &&
                    edges.dim(0) == b.numEdges && edges.dim(1) == edgeDim_ && globals.shape().size() == 2 &&
                    globals.dim(0) == b.numGraphs && globals.dim(1) == globalDim_,
                "InteractionNetwork: nodes ", shapeString(nodes.shape()), ", edges ", shapeString(edges.shape()),
                ", globals ", shapeString(globals.shape()), " do not match the batch's [", b.numNodes, ", ", nodeDim_,
                "], [", b.numEdges, ", ", edgeDim_, "], [", b.numGraphs, ", ", globalDim_, "]");
  const Tensor senders = edgeRow(b.edgeIndex, 0), receivers = edgeRow(b.edgeIndex, 1);
  const Tensor edgeGraph = ptrToSortedIndex(b.edgePtr);
  const Variable xr = gatherRows(nodes, receivers), xs = gatherRows(nodes, senders);
  // Edge step.
  Variable e = edgeMlp_.forward(concatCols({xr, xs, edges, gatherRows(globals, edgeGraph)}));
  e = rowDropout(e, dropout_.edge, training);  // GPS++'s "before_scatter": the nodes read the dropped edges
  // Node step: each node sums its incoming edges with their senders and its outgoing edges with their receivers.
  const Variable toReceivers = scatterSum(concatCols({e, xs}), receivers, b.numNodes);
  const Variable toSenders = scatterSum(concatCols({e, xr}), senders, b.numNodes);
  Variable n = nodeMlp_.forward(concatCols({toReceivers, toSenders, nodes, gatherRows(globals, b.batch)}));
  Output out;
  // Global step, from the updated nodes and edges (before their dropout and residual, as GPS++).
  if (globalMlp_) {
    Variable g = globalMlp_->forward(concatCols({globals, segmentSum(n, b.ptr), segmentSum(e, b.edgePtr)}));
    out.globals = add(globals, rowDropout(g, dropout_.global, training));
  } else {
    out.globals = globals;
  }
  out.nodes = add(nodes, rowDropout(n, dropout_.node, training));
  out.edges = add(edges, e);
  return out;
}

std::unique_ptr<Module> InteractionNetwork::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(
      std::make_unique<InteractionNetwork>(nodeDim_, edgeDim_, globalDim_, expansion_, unused, dropout_,
                                           globalMlp_ != nullptr, dtype_));
}

}  // namespace gnn
