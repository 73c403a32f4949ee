#include "models/GpsPlusPlus.h"

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "models/PaddingGraphRows.h"

namespace gnn {

GpsPlusPlus::GpsPlusPlus(GpsOptions options, Generator& gen)
    : opt_((options.validate(), options)),
      atoms_(opt_.nodeDim, gen, opt_.dtype),
      bonds_(opt_.edgeDim, gen, opt_.dtype),
      spatial_(opt_.heads, gen, opt_.dtype),
      decoder_(opt_.nodeDim, opt_.expansion * opt_.globalDim, opt_.tasks, gen, opt_.dtype) {
  registerModule("atom_encoder", atoms_);
  registerModule("bond_encoder", bonds_);
  registerModule("spatial", spatial_);
  globalInit_ = &registerParameter("global_init", init::normal({1, opt_.globalDim}, 0.02, gen, opt_.dtype));
  for (int64_t l = 0; l < opt_.layers; ++l) {
    layers_.push_back(std::make_unique<GpsLayer>(opt_, l, gen));
    registerModule("layers." + std::to_string(l), *layers_.back());
  }
  registerModule("decoder", decoder_);

  addBlock("input", [this](BlockState s, const Batch& b) {
    GNN_CHECK_ARG(b.spatialPos.defined() && b.maxNodesPerGraph >= 1 && b.spatialPos.rank() == 2 &&
                      b.spatialPos.dim(0) == b.numGraphs * b.maxNodesPerGraph &&
                      b.spatialPos.dim(1) == b.maxNodesPerGraph,
                  "GPS++: the batch has no shortest-path distances [numGraphs·M, M] (spatialPos): build the dataset "
                  "with Graphormer's encodings (build_dataset --graphormer-max-dist 5)");
    GNN_CHECK_ARG(b.x.dtype() == DType::I64 && b.edgeAttr.defined() && b.edgeAttr.dtype() == DType::I64,
                  "GPS++: needs OGB's categorical atom and bond features (int64 x [N, 9] and edgeAttr [E, 3])");
    s.set("h", atoms_.forward(b.x));
    s.set("e", bonds_.forward(b.edgeAttr));
    s.set("g", gatherRows(*globalInit_, Tensor({b.numGraphs}, DType::I64)));  // the learned start, every graph
    s.set("bias", permute(spatial_.forward(b.spatialPos), {0, 3, 1, 2}));    // [G, heads, M, M]
    s.set("mask", Variable(keyMask(b)));
    return s;
  });
  for (int64_t l = 0; l < opt_.layers; ++l)
    addBlock("layers/" + std::to_string(l), [this, l](BlockState s, const Batch& b) {
      const GpsLayer::State out = layers_[l]->forward({s.get("h"), s.get("e"), s.get("g")}, b, s.get("bias"),
                                                      s.get("mask").value(), isTraining());
      s.set("h", out.nodes);
      s.set("e", out.edges);
      s.set("g", out.globals);
      return s;
    });
  addBlock("head", [this](BlockState s, const Batch& b) {
    // Padding graphs' sums are zeroed before the decoder as well, so graphEmbeddings() is exactly what it reads.
    const Variable pooled = zeroPaddingGraphRows(segmentSum(s.get("h"), b.ptr), b);
    return outputState(zeroPaddingGraphRows(decoder_.forward(pooled), b));
  });
}

Variable GpsPlusPlus::graphEmbeddings(const Batch& b) {
  const Variable h = runBlocks(BlockState(), b, 0, blockIndex("head")).get("h");
  return zeroPaddingGraphRows(segmentSum(h, b.ptr), b);
}

std::unique_ptr<Module> GpsPlusPlus::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<GpsPlusPlus>(opt_, unused));
}

Tensor GpsPlusPlus::keyMask(const Batch& b) {
  const int64_t m = b.maxNodesPerGraph;
  Tensor mask({b.numGraphs, m}, DType::U8);
  uint8_t* mp = mask.data<uint8_t>();
  const int64_t* ptr = b.ptr.data<int64_t>();
  for (int64_t g = 0; g < b.numGraphs; ++g) {
    const bool real = !b.graphsMask.defined() || b.graphsMask.data<uint8_t>()[g];
    const int64_t n = real ? std::min(ptr[g + 1] - ptr[g], m) : 0;
    for (int64_t j = 0; j < m; ++j) mp[g * m + j] = j < n;
  }
  return mask;
}

}  // namespace gnn
