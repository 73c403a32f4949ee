#include "models/NodeGCN.h"

#include <vector>

#include "gnn/autograd/Block.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {

namespace {
// Both layers cache their graph's matrix and share the cache: one build per graph and forward, not one per
// layer. NodeGCNOptions::cached decides whether it outlives the forward.
GCNConvOptions convOptions() {
  GCNConvOptions o;
  o.cached = true;
  return o;
}

// The batch a full-graph call runs its blocks on: only the edges are read from it.
Batch graphOf(const Tensor& edgeIndex) {
  Batch b;
  b.edgeIndex = edgeIndex;
  return b;
}
}  // namespace

NodeGCN::NodeGCN(int64_t inChannels, int64_t hidden, int64_t numClasses, Generator& gen, NodeGCNOptions options)
    : in_(inChannels),
      hidden_(hidden),
      classes_(numClasses),
      opt_(options),
      conv1_(inChannels, hidden, gen, convOptions()),
      conv2_(hidden, numClasses, gen, convOptions()) {
  registerModule("conv1", conv1_);
  registerModule("conv2", conv2_);
  conv2_.shareAdjacencyWith(conv1_);
  // The input comes from the state's "x" when a caller put it there (forward(Variable, ...)), else from the
  // batch's dense features.
  addBlock("layers/0", [this](BlockState s, const Batch& b) {
    Variable x = s.has("x") ? s.get("x") : Variable(b.x);
    s.set("h", relu(conv1_.forward(dropout(x, opt_.dropout, isTraining()), b.edgeIndex)));
    return s;
  });
  addBlock("layers/1", [this](BlockState s, const Batch& b) {
    Variable h = s.get("h");
    Variable out = conv2_.forward(dropout(h, opt_.dropout, isTraining()), b.edgeIndex);
    // The last layer on this graph: an uncached model lets the matrix go with the forward's tape.
    if (!opt_.cached) conv2_.forgetAdjacency(b.edgeIndex, h.dim(0));
    return outputState(out);
  });
}

std::unique_ptr<Module> NodeGCN::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<NodeGCN>(in_, hidden_, classes_, unused, opt_));
}

Variable NodeGCN::forward(const SparseMatrix& x, const Tensor& edgeIndex) {
  // Sparse features are not a Variable and cannot travel in a BlockState: the first block's sparse form runs
  // here, under the block's name, and the rest through runBlocks.
  BlockState s;
  {
    BlockScope scope(blocks()[0].name);
    const bool drop = isTraining() && opt_.dropout > 0;
    s.set("h", relu(conv1_.forward(drop ? dropoutValues(x, opt_.dropout) : x, edgeIndex)));
  }
  return runBlocks(std::move(s), graphOf(edgeIndex), 1, numBlocks()).get("out");
}

Variable NodeGCN::forward(const Variable& x, const Tensor& edgeIndex) {
  BlockState s;
  s.set("x", x);
  return runBlocks(std::move(s), graphOf(edgeIndex), 0, numBlocks()).get("out");
}

void NodeGCN::prepare(const Batch& batch) { conv1_.prepareAdjacency(batch.edgeIndex, batch.x.dim(0)); }

}  // namespace gnn
