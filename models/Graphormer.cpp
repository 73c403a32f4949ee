#include "models/Graphormer.h"

#include <algorithm>

#include "gnn/nn/Init.h"
#include "gnn/nn/pool/GlobalPooling.h"
#include "gnn/ops/Ops.h"
#include "models/PaddingGraphRows.h"

namespace gnn {

GraphormerOptions GraphormerOptions::slim() {
  return GraphormerOptions{};
}

GraphormerOptions GraphormerOptions::base() {
  GraphormerOptions o;
  o.hidden = 768;
  o.heads = 32;
  o.ffn = 768;
  return o;
}

GraphormerOptions GraphormerOptions::named(const std::string& name) {
  if (name == "slim") return slim();
  if (name == "base") return base();
  invalidArgument("Graphormer: unknown configuration '", name, "' (slim or base)");
}

void GraphormerOptions::validate() const {
  GNN_CHECK_ARG(layers >= 1 && hidden >= 1 && heads >= 1 && ffn >= 1 && tasks >= 1,
                "Graphormer: layers, hidden, heads, ffn and tasks must be >= 1");
  GNN_CHECK_ARG(hidden % heads == 0, "Graphormer: hidden (", hidden, ") must be a multiple of heads (", heads,
                ")");
  GNN_CHECK_ARG(maxNodes >= 0 && multiHopMaxDist >= 1,
                "Graphormer: maxNodes must be >= 0 and multiHopMaxDist >= 1");
  for (double p : {dropout, attentionDropout, activationDropout})
    GNN_CHECK_ARG(p >= 0 && p < 1, "Graphormer: dropouts must be in [0, 1), got ", p);
}

Graphormer::Graphormer(GraphormerOptions options, Generator& gen)
    : opt_((options.validate(), options)),
      centrality_(opt_.hidden, gen, opt_.dtype),
      spatial_(opt_.heads, gen, opt_.dtype),
      edges_(opt_.heads, opt_.multiHopMaxDist, gen, opt_.dtype),
      finalNorm_(opt_.hidden, 1e-5, opt_.dtype),
      head_(opt_.hidden, opt_.tasks, gen, true, opt_.dtype) {
  // Embedding(1, hidden) and Embedding(1, heads) in Graphormer: N(0, 0.02).
  graphToken_ = &registerParameter("graph_token", init::normal({1, opt_.hidden}, 0.02, gen, opt_.dtype));
  virtualDistance_ = &registerParameter("graph_token_virtual_distance",
                                        init::normal({1, opt_.heads}, 0.02, gen, opt_.dtype));
  registerModule("centrality", centrality_);
  registerModule("spatial", spatial_);
  registerModule("edges", edges_);
  for (int64_t l = 0; l < opt_.layers; ++l) {
    layers_.push_back(std::make_unique<GraphormerLayer>(opt_.hidden, opt_.heads, opt_.ffn, opt_.dropout,
                                                        opt_.attentionDropout, opt_.activationDropout, gen,
                                                        opt_.dtype));
    registerModule("layers." + std::to_string(l), *layers_.back());
  }
  registerModule("final_layer_norm", finalNorm_);
  graphormerInit(head_, gen);
  registerModule("head", head_);

  addBlock("input", [this](BlockState s, const Batch& b) {
    const int64_t m = checkBatch(b);
    Variable atoms = centrality_.forward(b.x, b.inDegree, b.nodesMask);
    Variable h = toDenseBatch(atoms, b.ptr, b.graphsMask, m, *graphToken_);  // [G, T, hidden], token first
    h = reshape(h, {b.numGraphs * (m + 1), opt_.hidden});
    const Tensor mask = keyMask(b, m);
    if (opt_.packedRows) {
      // Each graph's token and atoms, graph after graph: the rows the key mask keeps, and nothing else.
      const Tensor rows = packedRowPtr(mask);
      s.set("rows", Variable(rows));
      h = gatherRows(h, keptRows(mask, rows));
    } else {
      s.set("mask", Variable(mask));
    }
    s.set("h", dropout(h, opt_.dropout, isTraining()));
    Variable pairs = add(spatial_.forward(b.spatialPos), edges_.forward(b.edgeInput, b.spatialPos));
    s.set("bias", graphAttentionBias(pairs, *virtualDistance_));  // [G, heads, T, T]
    return s;
  });
  for (int64_t l = 0; l < opt_.layers; ++l)
    addBlock("layers/" + std::to_string(l), [this, l](BlockState s, const Batch& b) {
      const Variable& bias = s.get("bias");
      if (opt_.packedRows)
        s.set("h", layers_[l]->forwardPacked(s.get("h"), s.get("rows").value(), bias.dim(2), bias));
      else
        s.set("h", layers_[l]->forward(s.get("h"), b.numGraphs, bias, s.get("mask").value()));
      return s;
    });
  addBlock("head", [this](BlockState s, const Batch& b) {
    return outputState(zeroPaddingGraphRows(head_.forward(readout(s, b)), b));
  });
}

Variable Graphormer::readout(const BlockState& s, const Batch& b) const {
  const Variable& h = s.get("h");
  Tensor tokens({b.numGraphs}, DType::I64);
  if (opt_.packedRows) {
    std::copy_n(s.get("rows").value().data<int64_t>(), b.numGraphs, tokens.data<int64_t>());
  } else {
    const int64_t t = h.dim(0) / b.numGraphs;
    for (int64_t g = 0; g < b.numGraphs; ++g) tokens.data<int64_t>()[g] = g * t;
  }
  // The final LayerNorm is per row, so it runs on the token rows only.
  return finalNorm_.forward(gatherRows(h, tokens));
}

Variable Graphormer::graphEmbeddings(const Batch& b) {
  return zeroPaddingGraphRows(readout(runBlocks(BlockState(), b, 0, blockIndex("head")), b), b);
}

Tensor Graphormer::packedRowPtr(const Tensor& keyMask) {
  const int64_t g = keyMask.dim(0), t = keyMask.dim(1);
  Tensor ptr({g + 1}, DType::I64);
  int64_t* p = ptr.data<int64_t>();
  const uint8_t* m = keyMask.data<uint8_t>();
  p[0] = 0;
  // A key counts when its byte is non-zero, as keptRows reads it.
  for (int64_t k = 0; k < g; ++k)
    p[k + 1] = p[k] + std::count_if(m + k * t, m + (k + 1) * t, [](uint8_t v) { return v != 0; });
  return ptr;
}

Tensor Graphormer::keptRows(const Tensor& keyMask, const Tensor& rowPtr) {
  const int64_t g = keyMask.dim(0), t = keyMask.dim(1);
  Tensor index({rowPtr.data<int64_t>()[g]}, DType::I64);
  int64_t* out = index.data<int64_t>();
  const uint8_t* m = keyMask.data<uint8_t>();
  for (int64_t r = 0; r < g * t; ++r)
    if (m[r]) *out++ = r;
  return index;
}

std::unique_ptr<Module> Graphormer::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<Graphormer>(opt_, unused));
}

int64_t Graphormer::checkBatch(const Batch& b) const {
  GNN_CHECK_ARG(
      b.spatialPos.defined() && b.inDegree.defined() && b.edgeInput.defined(),
      "Graphormer: the batch has no Graphormer encodings (spatialPos, inDegree, edgeInput): build the "
      "dataset with them (build_dataset --graphormer-max-dist ",
      opt_.multiHopMaxDist, ")");
  const int64_t m = b.maxNodesPerGraph;
  GNN_CHECK_ARG(opt_.maxNodes == 0 || m == opt_.maxNodes,
                "Graphormer: the batch's node-pair blocks have side ", m, " but the model's maxNodes is ",
                opt_.maxNodes,
                " (set FixedSizeOptions::maxNodesPerGraph = maxNodes, or maxNodes = 0 to follow the batch)");
  GNN_CHECK_ARG(m >= 1 && b.spatialPos.rank() == 2 && b.spatialPos.dim(0) == b.numGraphs * m &&
                    b.spatialPos.dim(1) == m,
                "Graphormer: spatialPos ", shapeString(b.spatialPos.shape()), " is not [numGraphs·M, M] = [",
                b.numGraphs * m, ", ", m, "]");
  GNN_CHECK_ARG(b.edgeInput.rank() == 4 && b.edgeInput.dim(2) >= opt_.multiHopMaxDist,
                "Graphormer: edgeInput ", shapeString(b.edgeInput.shape()),
                " holds fewer hops than multiHopMaxDist = ", opt_.multiHopMaxDist,
                " (build the dataset with --graphormer-max-dist ", opt_.multiHopMaxDist, ")");
  return m;
}

Tensor Graphormer::keyMask(const Batch& b, int64_t m) {
  Tensor mask({b.numGraphs, m + 1}, DType::U8);
  uint8_t* mp = mask.data<uint8_t>();
  const int64_t* ptr = b.ptr.data<int64_t>();
  for (int64_t g = 0; g < b.numGraphs; ++g) {
    const bool real = !b.graphsMask.defined() || b.graphsMask.data<uint8_t>()[g];
    const int64_t n = real ? std::min(ptr[g + 1] - ptr[g], m) : 0;
    for (int64_t j = 0; j <= m; ++j) mp[g * (m + 1) + j] = j <= n;
  }
  return mask;
}

}  // namespace gnn
