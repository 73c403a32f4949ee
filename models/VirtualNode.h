// VirtualNode: OGB's virtual node for graph-level GNNs (ogb/examples/graphproppred/mol/conv.py,
// GNN_node_Virtualnode; Gilmer et al. 2017): one extra state per graph, starting from a learned embedding
// initialised to 0, added to every node of its graph before each layer, and after each layer but the last
// replaced by dropout(MLP(sum of the graph's node states entering the layer + the virtual node)), with
// MLP = Linear(D, 2D), norm, ReLU, Linear(2D, D), norm, ReLU. The norms are those of the model (LayerNorm, or
// BatchNorm over the real graphs: the batch's graphsMask), so padding graphs' virtual nodes, which sum only
// padding nodes and are added only to them, never touch real graphs. Parameter names as OGB's:
// "virtualnode_embedding.weight", "mlp_virtualnode_list.<l>.{0,1,3,4}.*".
//
//   VirtualNode vn(layers, hidden, NormKind::Batch, gen, DType::F32);
//   Variable v = vn.initial(batch);                          // [numGraphs, hidden]
//   Variable hIn = VirtualNode::addTo(h, v, batch);          // every node gets its graph's virtual node
//   h = conv(hIn, ...);
//   v = vn.update(0, hIn, v, batch, dropout);                // after layer 0 (not after the last)
#pragma once
#include <memory>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/Module.h"
#include "loaders/Batch.h"
#include "models/NormLayer.h"

namespace gnn {

class VirtualNode : public Module {
 public:
  /// `layers`: the model's message-passing layers (layers - 1 update MLPs); hidden: the node state width.
  VirtualNode(int64_t layers, int64_t hidden, NormKind norm, Generator& gen, DType dtype = DType::F32);
  /// Each graph's virtual node before the first layer: the embedding's one row, [numGraphs, hidden].
  Variable initial(const Batch& b) const;
  /// h [numNodes, hidden] plus each node's graph's virtual node (vn [numGraphs, hidden], rows by b.batch).
  static Variable addTo(const Variable& h, const Variable& vn, const Batch& b);
  /// The virtual nodes after layer l < layers - 1: dropout(MLP_l(segment sum of hIn by b.ptr + vn), p), hIn
  /// being the node states that entered layer l (with the virtual nodes added).
  Variable update(int64_t l, const Variable& hIn, const Variable& vn, const Batch& b, double dropoutP);
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t layers_, hidden_;
  NormKind norm_;
  DType dtype_;
  Variable* embedding_;
  std::vector<std::unique_ptr<Linear>> lin1_, lin2_;
  std::vector<std::unique_ptr<NormLayer>> norm1_, norm2_;
};

}  // namespace gnn
