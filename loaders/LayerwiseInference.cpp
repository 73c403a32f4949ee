#include "loaders/LayerwiseInference.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "gnn/autograd/Variable.h"
#include "gnn/ops/Ops.h"
#include "loaders/BatchFields.h"

namespace gnn {

namespace {

// The norm's name as PyG's resolver compares it: lower case, no underscores.
std::string squeezed(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Rows `rows` of an [N, W] float tensor into out (which has rows.size() rows).
void gatherInto(const Tensor& from, const std::vector<int64_t>& rows, Tensor& out) {
  const int64_t W = from.dim(1);
  const size_t bytes = static_cast<size_t>(W) * dtypeSize(from.dtype());
  const char* src = static_cast<const char*>(from.raw());
  char* dst = static_cast<char*>(out.raw());
  for (size_t r = 0; r < rows.size(); ++r)
    std::memcpy(dst + r * bytes, src + static_cast<size_t>(rows[r]) * bytes, bytes);
}

}  // namespace

std::string layerwiseInferenceRefusal(const BasicGNN& model) {
  return layerwiseInferenceRefusal(model.className(), model.options());
}

std::string layerwiseInferenceRefusal(const std::string& className, const BasicGNNOptions& options) {
  if (className == "GCN")
    return "GCN's normalisation reads every neighbour's degree, which a batch's subgraph does not hold";
  const nlohmann::json& norm = options.norm;
  if (!norm.is_null()) {
    const std::string n = norm.is_string() ? squeezed(norm.get<std::string>()) : std::string("?");
    if (n != "batch" && n != "batchnorm")
      return "norm " + norm.dump() + " takes statistics over the whole graph (only batch norm, row-wise in "
             "evaluation, runs a batch at a time)";
  }
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
      if (model.bipartiteLayers()) {  // GraphSAGE: the sources read where they are, the targets' rows alone
        const int64_t e = std::min(N, b + batchSize);
        std::vector<int64_t> src, dst;
        sampler.incomingEdges(b, e, src, dst);
        const int64_t m = static_cast<int64_t>(src.size());
        Tensor ei = Tensor::empty({2, m}, DType::I64);
        std::copy(src.begin(), src.end(), ei.data<int64_t>());
        std::copy(dst.begin(), dst.end(), ei.data<int64_t>() + m);
        const Variable all(h);
        const Tensor out = model.layer(layer, all, sliceRows(all, b, e), ei).value();
        if (!next.defined()) next = Tensor::empty({N, out.dim(1)}, out.dtype());
        const size_t bytes = static_cast<size_t>(out.dim(1)) * dtypeSize(out.dtype());
        std::memcpy(static_cast<char*>(next.raw()) + static_cast<size_t>(b) * bytes, out.raw(),
                    static_cast<size_t>(e - b) * bytes);
        continue;
      }
      std::vector<int64_t> targets;
      for (int64_t v = b; v < std::min(N, b + batchSize); ++v) targets.push_back(v);
      // The targets, then their in-neighbours; every incoming edge of every target.
      const SampledSubgraph sub = sampler.sample(targets, {-1}, 0, 0);
      const int64_t n = static_cast<int64_t>(sub.nodes.size()), m = static_cast<int64_t>(sub.src.size());
      Tensor rows = Tensor::empty({n, h.dim(1)}, h.dtype());
      gatherInto(h, sub.nodes, rows);
      Tensor ei = Tensor::empty({2, m}, DType::I64);
      std::copy(sub.src.begin(), sub.src.end(), ei.data<int64_t>());
      std::copy(sub.dst.begin(), sub.dst.end(), ei.data<int64_t>() + m);
      // The targets' rows only (GraphSAGE computes no others).
      const Tensor out = model.layer(layer, Variable(rows), ei, sub.numSeeds).value();
      if (!next.defined()) next = Tensor::empty({N, out.dim(1)}, out.dtype());
      const size_t bytes = static_cast<size_t>(out.dim(1)) * dtypeSize(out.dtype());
      std::memcpy(static_cast<char*>(next.raw()) + static_cast<size_t>(b) * bytes, out.raw(),
                  static_cast<size_t>(sub.numSeeds) * bytes);
    }
    h = std::move(next);
    if (model.headReadsAllLayers() || layer + 1 == model.numLayers()) outputs.push_back(Variable(h));
  }
  Tensor result = model.head(outputs).value();
  model.train(wasTraining);
  return result;
}

}  // namespace gnn
