#include "app/MoleculeEmbeddings.h"

#include <cstring>

#include "data/NpzWriter.h"
#include "gnn/ops/Ops.h"
#include "loaders/FixedSizeDataLoader.h"
#include "models/Dmpnn.h"
#include "models/GpsPlusPlus.h"
#include "models/GraphModel.h"
#include "models/Graphormer.h"
#include "models/PaddingGraphRows.h"
#include "models/SchNet.h"

namespace gnn::app {

Variable moleculeEmbeddings(BlockModel& model, const Batch& batch) {
  if (auto* m = dynamic_cast<GraphModel*>(&model)) return m->graphEmbeddings(batch);
  if (auto* m = dynamic_cast<Dmpnn*>(&model)) return m->moleculeEmbeddings(batch);
  if (auto* m = dynamic_cast<Graphormer*>(&model)) return m->graphEmbeddings(batch);
  if (auto* m = dynamic_cast<GpsPlusPlus*>(&model)) return m->graphEmbeddings(batch);
  if (auto* m = dynamic_cast<SchNet*>(&model)) {
    // The atom states the head reads, pooled as the head pools the atoms' outputs.
    Variable h = m->runBlocks(BlockState(), batch, 0, m->blockIndex("head")).get("h");
    Variable pooled = m->options().readout == "mean" ? segmentMean(h, batch.ptr) : segmentSum(h, batch.ptr);
    return zeroPaddingGraphRows(pooled, batch);
  }
  invalidArgument("moleculeEmbeddings: not a molecule model (gin, gcn, dmpnn, Graphormer, GPS++ or SchNet)");
}

int64_t moleculeEmbeddingWidth(const BlockModel& model) {
  if (auto* m = dynamic_cast<const GraphModel*>(&model)) return m->options().hidden + m->options().graphFeatures;
  if (auto* m = dynamic_cast<const Dmpnn*>(&model)) return m->options().hidden + m->options().graphFeatures;
  if (auto* m = dynamic_cast<const Graphormer*>(&model)) return m->options().hidden;
  if (auto* m = dynamic_cast<const GpsPlusPlus*>(&model)) return m->options().nodeDim;
  if (auto* m = dynamic_cast<const SchNet*>(&model)) return m->options().hidden;
  invalidArgument("moleculeEmbeddingWidth: not a molecule model (gin, gcn, dmpnn, Graphormer, GPS++ or SchNet)");
}

MoleculeEmbeddings embedMolecules(BlockModel& model, const std::shared_ptr<const Dataset>& dataset,
                                  const std::vector<int64_t>& positions, const FixedSizeOptions& fixed) {
  MoleculeEmbeddings e;
  std::vector<size_t> kept;
  for (int64_t i : positions) {
    if (fixed.fitsGraph(dataset->numNodes(static_cast<size_t>(i)), dataset->numEdges(static_cast<size_t>(i)))) {
      kept.push_back(static_cast<size_t>(i));
      e.positions.push_back(i);
    } else {
      e.skipped.push_back(i);
    }
  }
  const auto n = static_cast<int64_t>(kept.size()), width = moleculeEmbeddingWidth(model);
  e.values = Tensor::zeros({n, width});
  if (n == 0) return e;
  // Batched as predictMolecules batches: in order, so the same molecules give the same batches.
  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::StreamPack;
  lo.shuffle = false;
  lo.prefetch = 1;
  FixedSizeDataLoader loader(std::make_shared<Subset>(dataset, kept), fixed, lo);
  NoGradGuard noGrad;
  const bool wasTraining = model.isTraining();
  model.eval();
  loader.startEpoch(0);
  float* out = e.values.data<float>();
  for (Batch b; loader.next(b);) {
    Tensor v = moleculeEmbeddings(model, b).value();
    if (v.dtype() != DType::F32) v = v.to(DType::F32);
    GNN_ASSERT(v.rank() == 2 && v.dim(0) == b.numGraphs && v.dim(1) == width, "moleculeEmbeddings: shape ",
               shapeString(v.shape()), " for ", b.numGraphs, " graphs of width ", width);
    for (int64_t g = 0; g < b.numRealGraphs; ++g)
      std::memcpy(out + b.graphIndex[static_cast<size_t>(g)] * width, v.data<float>() + g * width,
                  static_cast<size_t>(width) * sizeof(float));
  }
  model.train(wasTraining);
  return e;
}

void writeEmbeddingsNpz(const std::string& path, const NpzDataset& dataset, const MoleculeEmbeddings& e) {
  const auto n = static_cast<int64_t>(e.positions.size());
  const int64_t width = e.values.defined() && e.values.rank() == 2 ? e.values.dim(1) : 0;
  GNN_CHECK_ARG(e.values.defined() && e.values.dtype() == DType::F32 && e.values.dim(0) == n,
                "writeEmbeddingsNpz: values must be float32 [", n, ", width]");
  NpzWriter w(path);
  const int emb = w.addArray("embeddings", "<f4", 4, {width});
  const int line = w.addArray("line", "<i8", 8);
  const int id = w.addArray("id", "<i8", 8);
  const int smiles = w.addArray("smiles", "|u1", 1);
  const int smilesPtr = w.addArray("smiles_ptr", "<i8", 8);
  w.setRows(emb, n);  // also when width is 0 (no bytes to count the rows from)
  if (n > 0) w.append(emb, e.values.data<float>(), static_cast<size_t>(n * width) * sizeof(float));
  int64_t end = 0;
  w.append(smilesPtr, &end, 8);
  for (int64_t k : e.positions) {
    const auto i = static_cast<size_t>(k);
    const int64_t l = dataset.sourceLine(i), s = dataset.sourceIndex(i);
    w.append(line, &l, 8);
    w.append(id, &s, 8);
    const std::string text = dataset.smiles(i);
    if (!text.empty()) w.append(smiles, text.data(), text.size());
    end += static_cast<int64_t>(text.size());
    w.append(smilesPtr, &end, 8);
  }
  w.setRows(line, n);
  w.setRows(id, n);
  w.setRows(smiles, end);
  w.finish();
}

}  // namespace gnn::app
