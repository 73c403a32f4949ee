#include "models/BasicGNNBlocks.h"

#include <string>
#include <vector>

#include "gnn/autograd/Block.h"

namespace gnn {

namespace {
// The graphs and real rows of a batch, as the norms see them (a whole-graph call has neither: one graph).
NormBatch normBatchOf(const Batch& b) {
  NormBatch nb;
  if (b.batch.defined() && b.numGraphs > 1) {
    nb.batch = b.batch;
    nb.numGraphs = b.numGraphs;
  }
  if (b.nodesMask.defined() && b.numRealNodes < b.numNodes) nb.nodeMask = b.nodesMask;
  return nb;
}

// The layer outputs jumping knowledge reads travel between blocks (and pipeline stages) as "xs/<i>".
std::string layerOutputName(int64_t i) { return "xs/" + std::to_string(i); }

// Layer i's output h as the next blocks read it: "h", and "xs/<i>" when the head reads every layer's.
void setLayerOutput(BlockState& s, const BasicGNN& m, int64_t i, const Variable& h) {
  s.set("h", h);
  if (m.headReadsAllLayers() && i + 1 < m.numLayers()) s.set(layerOutputName(i), h);
}
}  // namespace

BasicGNNBlocks::BasicGNNBlocks(std::unique_ptr<BasicGNN> model) : model_(std::move(model)) {
  registerModule("", *model_);
  addBlock("input", [this](BlockState s, const Batch& b) {
    // Features from the state when the caller put them there (forward(Variable, ...)), else the batch's.
    Variable x = s.has("x") ? s.get("x") : Variable(b.x);
    s.set("h", model_->input(x));
    if (model_->readsInitial()) s.set("x0", s.get("h"));  // GCN2Conv's and FAConv's x_0, read by every layer
    return s;
  });
  const int64_t layers = model_->numLayers();
  for (int64_t i = 0; i < layers; ++i) {
    addBlock("layers/" + std::to_string(i), [this, i](BlockState s, const Batch& b) {
      Variable e = s.has("edge_attr") ? s.get("edge_attr") : Variable();
      Variable x0 = s.has("x0") ? s.get("x0") : Variable();
      setLayerOutput(s, *model_, i, model_->layer(i, s.get("h"), b.edgeIndex, e, normBatchOf(b), x0));
      return s;
    });
  }
  addBlock("head", [this, layers](BlockState s, const Batch&) {
    std::vector<Variable> xs;
    if (model_->headReadsAllLayers())
      for (int64_t i = 0; i + 1 < layers; ++i) xs.push_back(s.get(layerOutputName(i)));
    xs.push_back(s.get("h"));
    return outputState(model_->head(xs));
  });
}

Variable BasicGNNBlocks::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr) {
  BlockState s;
  s.set("x", x);
  if (edgeAttr.defined()) s.set("edge_attr", edgeAttr);
  Batch b;
  b.edgeIndex = edgeIndex;
  return runBlocks(std::move(s), b, 0, numBlocks()).get("out");
}

Variable BasicGNNBlocks::forward(const SparseMatrix& x, const Tensor& edgeIndex, const Variable& edgeAttr) {
  GNN_CHECK_ARG(model_->takesSparseInput(), model_->className(), " takes dense input features only (PNAConv and "
                "EdgeConv have no sparse-input forward): give it a dense feature matrix");
  // Sparse features are not a Variable and cannot travel in a BlockState: the "input" block (dropout on the
  // non-zeros) and the first layer's run here, each under its block's name, and the rest through runBlocks.
  SparseMatrix h;
  {
    BlockScope scope(blocks()[0].name);
    h = model_->input(x);
  }
  BlockState s;
  if (edgeAttr.defined()) s.set("edge_attr", edgeAttr);
  {
    BlockScope scope(blocks()[1].name);
    setLayerOutput(s, *model_, 0, model_->layer(0, h, edgeIndex, edgeAttr, NormBatch{}));
  }
  Batch b;
  b.edgeIndex = edgeIndex;
  return runBlocks(std::move(s), b, 2, numBlocks()).get("out");
}

std::unique_ptr<Module> BasicGNNBlocks::clone() const {
  // The wrapped model's clone brings its class and options; copying the state again brings the training flags.
  return cloneInto(std::make_unique<BasicGNNBlocks>(cloneModule(*model_)));
}

}  // namespace gnn
