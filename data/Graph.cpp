#include "data/Graph.h"

namespace gnn {

void Graph::validate(const std::string& what) const {
  GNN_CHECK_ARG(numNodes >= 0, what, ": negative node count");
  if (x.defined())
    GNN_CHECK_ARG(x.rank() >= 1 && x.dim(0) == numNodes, what, ": x has shape ", shapeString(x.shape()),
                  " but the graph has ", numNodes, " nodes");
  if (edgeIndex.defined()) {
    GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64, what,
                  ": edge_index must be int64 [2, E], got ", dtypeName(edgeIndex.dtype()), " ",
                  shapeString(edgeIndex.shape()));
    const int64_t* e = edgeIndex.data<int64_t>();
    for (int64_t i = 0; i < edgeIndex.numel(); ++i)
      GNN_CHECK_ARG(e[i] >= 0 && e[i] < numNodes, what, ": edge ", i % numEdges(), " points to node ", e[i],
                    " but the graph has ", numNodes, " nodes");
  }
  if (edgeAttr.defined())
    GNN_CHECK_ARG(edgeAttr.rank() >= 1 && edgeAttr.dim(0) == numEdges(), what, ": edge_attr has shape ",
                  shapeString(edgeAttr.shape()), " but the graph has ", numEdges(), " edges");
  if (pos.defined())
    GNN_CHECK_ARG(pos.rank() == 2 && pos.dim(0) == numNodes && pos.dim(1) == 3, what, ": pos has shape ",
                  shapeString(pos.shape()), ", expected [", numNodes, ", 3]");
  if (nodeFeatures.defined())
    GNN_CHECK_ARG(nodeFeatures.rank() == 2 && nodeFeatures.dim(0) == numNodes, what, ": node_features has shape ",
                  shapeString(nodeFeatures.shape()), ", expected [", numNodes, ", F]");
  if (yMask.defined() && y.defined())
    GNN_CHECK_ARG(yMask.shape() == y.shape(), what, ": y_mask shape ", shapeString(yMask.shape()),
                  " differs from y shape ", shapeString(y.shape()));
}

}  // namespace gnn
