#include "loaders/LayerwiseInference.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "gnn/autograd/Variable.h"
#include "gnn/nn/norm/Normalization.h"
#include "gnn/ops/Ops.h"
#include "loaders/BatchFields.h"

namespace gnn {

std::string layerwiseInferenceRefusal(const BasicGNN& model) {
  return layerwiseInferenceRefusal(model.className(), model.options());
}

std::string layerwiseInferenceRefusal(const std::string& className, const BasicGNNOptions& options) {
  if (!isBasicGNNClass(className))
    return "a stack of " + className + " runs over whole graphs (the layer-wise evaluation runs PyG's BasicGNN "
           "classes, whose layers read one hop each)";
  if (className == "GCN")
    return "GCN's normalisation reads every neighbour's degree, which a batch's subgraph does not hold";
  if (!options.norm.is_null() && !isPyGBatchNorm(options.norm))
    return "norm " + options.norm.dump() + " takes statistics over the whole graph (only batch norm, row-wise in "
           "evaluation, runs a batch at a time)";
  if (options.conv.contains("edge_dim") && !options.conv["edge_dim"].is_null())
    return "edge features are not carried into the batches";
  return {};
}

Tensor layerwiseInference(BasicGNN& model, const Tensor& x, const NeighborSampler& sampler, int64_t batchSize) {
  const std::string refusal = layerwiseInferenceRefusal(model);
  GNN_CHECK_ARG(refusal.empty(), "layer-wise inference of ", model.className(), ": ", refusal);
  GNN_CHECK_ARG(batchSize >= 1, "layer-wise inference: batchSize = ", batchSize);
  const int64_t N = sampler.numNodes();
  GNN_CHECK_ARG(x.defined() && x.rank() == 2 && x.dim(0) == N && x.isFloating(), "layer-wise inference: x ",
                shapeString(x.shape()), " for a graph of ", N, " nodes");
  NoGradGuard noGrad;
  const bool wasTraining = model.isTraining();
  model.eval();
  std::vector<Variable> outputs;  // every layer's, when the head reads them all (jk cat / max / lstm)
  Tensor h = model.input(Variable(x)).value();
  for (int64_t layer = 0; layer < model.numLayers(); ++layer) {
    Tensor next;
    for (int64_t b = 0; b < N; b += batchSize) {
      const int64_t e = std::min(N, b + batchSize);
      Tensor out;  // the outputs of targets b .. e-1
      if (model.bipartiteLayers()) {  // GraphSAGE: the sources read where they are, the targets' rows alone
        std::vector<int64_t> src, dst;
        sampler.incomingEdges(b, e, src, dst);
        const Variable all(h);
        out = model.layer(layer, all, sliceRows(all, b, e), edgeIndexOf(src, dst)).value();
      } else {
        std::vector<int64_t> targets;
        for (int64_t v = b; v < e; ++v) targets.push_back(v);
        // The targets, then their in-neighbours; every incoming edge of every target; the targets' rows out.
        const SampledSubgraph sub = sampler.sample(targets, {-1}, 0, 0);
        out = model.layer(layer, Variable(detail::takeRows(h, sub.nodes)), edgeIndexOf(sub.src, sub.dst),
                          sub.numSeeds)
                  .value();
      }
      if (!next.defined()) next = Tensor::empty({N, out.dim(1)}, out.dtype());
      const size_t bytes = static_cast<size_t>(out.dim(1)) * dtypeSize(out.dtype());
      std::memcpy(static_cast<char*>(next.raw()) + static_cast<size_t>(b) * bytes, out.raw(),
                  static_cast<size_t>(e - b) * bytes);
    }
    h = std::move(next);
    if (model.headReadsAllLayers() || layer + 1 == model.numLayers()) outputs.push_back(Variable(h));
  }
  Tensor result = model.head(outputs).value();
  model.train(wasTraining);
  return result;
}

}  // namespace gnn
