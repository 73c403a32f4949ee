// MoleculeEmbeddings: each molecule's learned representation, the molecule-level vector a model's head reads
// (Chemprop's fingerprint at its "mpnn" level), computed in the order and fixed-size batches predictions are
// (app/MoleculePredictions.h), and the .npz `predict --embeddings` writes. What each model gives, [hidden] wide:
//
//   gin, gcn     the node embeddings after the last layer, pooled by --pool          (the linear head's input)
//   dmpnn        the atom states aggregated by --aggregation                          (the FFN's input)
//   slim, base   the graph token's row after the final LayerNorm                      (the linear head's input)
//   schnet       its head works per atom (lin1, lin2, then the sum), so no molecule-level vector enters it: the
//                atom states after the last interaction, pooled by --readout (sum | mean)
//
// A molecule's vector does not depend on the batch it sits in or on its padding (the models compute per row,
// per graph; tests/examples/Embeddings_test.cpp checks the bits). A gin, gcn or dmpnn model trained with
// molecule descriptors (Batch::graphFeatures) reads them after that vector: they are its last columns here too.
//
//   app::MoleculeEmbeddings e = app::embedMolecules(*model, dataset, positions, fixed);
//   app::writeEmbeddingsNpz("emb.npz", npzDataset, e);   // embeddings, line, id, smiles, smiles_ptr
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "data/NpzDataset.h"
#include "loaders/Batch.h"
#include "loaders/FixedSizeOptions.h"
#include "models/BlockModel.h"

namespace gnn::app {

/// The molecule-level vectors of `batch` [numGraphs, width] (as listed above); padding graphs' rows are 0.
/// Throws std::invalid_argument for a model that is not one of the molecule models.
Variable moleculeEmbeddings(BlockModel& model, const Batch& batch);
/// Their width: the model's hidden width (gin, gcn, dmpnn: plus the descriptors' it reads).
int64_t moleculeEmbeddingWidth(const BlockModel& model);

struct MoleculeEmbeddings {
  std::vector<int64_t> positions;  // dataset positions embedded, in order
  std::vector<int64_t> skipped;    // positions too large for the batch shape
  Tensor values;                   // [positions, width] float32
};

/// Embeds `positions` in order (eval mode, no tape), batched as predictMolecules batches them.
MoleculeEmbeddings embedMolecules(BlockModel& model, const std::shared_ptr<const Dataset>& dataset,
                                  const std::vector<int64_t>& positions, const FixedSizeOptions& fixed);

/// The NumPy .npz of `e`, one row per molecule embedded, in e.positions' order (the predictions CSV's rows):
///   embeddings  float32 [n, width]
///   line        int64 [n]      the input line (or record) each came from: the CSV's `line`
///   id          int64 [n]      its 0-based index among the input's molecules: the CSV's `id`
///   smiles      uint8 [bytes]  the SMILES, concatenated UTF-8: molecule i is smiles[smiles_ptr[i]:smiles_ptr[i+1]]
///   smiles_ptr  int64 [n + 1]
/// Molecules absent from e (rejected by RDKit, too large) have no row. Written to a temporary file and renamed.
void writeEmbeddingsNpz(const std::string& path, const NpzDataset& dataset, const MoleculeEmbeddings& e);

}  // namespace gnn::app
