// SchNet: the continuous-filter convolutional network of Schuett et al., "SchNet: A continuous-filter
// convolutional neural network for modeling quantum interactions" (NeurIPS 2017), with PyTorch Geometric's
// defaults (torch_geometric.nn.models.SchNet): hidden 128, filters 128, 6 interactions, 50 Gaussians, cutoff
// 10 A, at most 32 neighbours, sum readout.
//
// Atoms are embedded by atomic number (z = OGB atom feature 0 + 1, or the batch's z); the edges are the
// batch's edgeIndex, which must be the radius graph (data/RadiusGraph.h: RadiusGraphDataset builds it once
// per dataset), or, with SchNetOptions::radiusGraphOnDevice, the radius graph the input block builds per batch
// (knnGraph); pos [N, 3] are the coordinates in Angstrom. Distances, their Gaussian expansion and cosine
// cutoff are computed once per batch, per pair of atoms (edgePairs: both directions share one filter row).
// Each atom's output is h_atom * scale + shift + atomref[z] (target standardisation, and per-element
// references fitted on the training split: constants, not parameters), summed (or averaged) per graph.
// Padding atoms and edges (self-loops on padding atoms) never reach a real graph; padding graphs' rows are 0.
// Blocks: "input", "interactions/0" .. "interactions/5", "head". Forces: start runBlocks from a state whose
// "pos" is a Variable that requires a gradient; -d(energy)/d(pos) is then its gradient.
//
//   SchNetOptions o;                                        // PyG's defaults
//   SchNet model(o, gen);
//   Variable energy = model.forward(batch);                 // [numGraphs, tasks]
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gnn/nn/Embedding.h"
#include "gnn/nn/GaussianSmearing.h"
#include "gnn/nn/Linear.h"
#include "models/BlockModel.h"
#include "models/SchNetInteraction.h"

namespace gnn {

struct SchNetOptions {
  int64_t hidden = 128;
  int64_t filters = 128;
  int64_t interactions = 6;
  int64_t gaussians = 50;
  double cutoff = 10.0;
  /// Neighbours per atom in the radius graph (RadiusGraphDataset's; recorded here so a model and its data
  /// agree).
  int64_t maxNeighbors = 32;
  /// "sum" (PyG's default "add") or "mean".
  std::string readout = "sum";
  int64_t tasks = 1;
  /// Per-atom output h * scale[t] + shift[t] (empty: 1 and 0), and per-element references atomref[z * tasks +
  /// t] for z < kElements (empty: none).
  std::vector<double> scale, shift, atomref;
  DType dtype = DType::F32;
  /// The cutoff applied to the filters inside filterMessageSum (its filterScale: the same bits, without a
  /// scaled [pairs, filters] copy of the filters and its pass over memory). Off: a separate mul, as PyTorch
  /// Geometric's CFConv computes it, which the simulated IPU keeps (app::useStaticShapes): its plans count the
  /// ops a compiled graph runs.
  bool fusedCutoff = true;
  /// The batch's edges checked and grouped once (messagePlan) for the six interactions' message sums, instead
  /// of three times in each: the same bits. Off, as fusedCutoff, for the simulated IPU, whose memory plans count
  /// each op's own index copies.
  bool sharedMessagePlan = true;
  /// The input block builds the radius graph itself from the batch's pos, batch and nodesMask (knnGraph: the
  /// maxNeighbors nearest within the cutoff, as published IPU runs of SchNet build it on the device per
  /// micro-batch, N*k edges padded to a fixed size) and ignores the batch's edges. Off: the batch's edges are
  /// the radius graph (RadiusGraphDataset). The same neighbours either way; the batch needs a padding atom.
  bool radiusGraphOnDevice = false;

  /// Rows of the atom-type embedding (PyG's Embedding(100, hidden)): atomic numbers 0 .. 99.
  static constexpr int64_t kElements = 100;
  /// Throws std::invalid_argument naming the first option out of range.
  void validate() const;
};

class SchNet : public BlockModel {
 public:
  SchNet(SchNetOptions options, Generator& gen);
  const char* name() const { return "schnet"; }
  const SchNetOptions& options() const { return opt_; }
  /// SchNetOptions::fusedCutoff after construction (results unchanged to the bit).
  void setFusedCutoff(bool on) { opt_.fusedCutoff = on; }
  /// SchNetOptions::sharedMessagePlan after construction (results unchanged to the bit).
  void setSharedMessagePlan(bool on) { opt_.sharedMessagePlan = on; }
  std::unique_ptr<Module> clone() const override;

  /// Atomic numbers of the batch's atoms: its z, else OGB's atom feature 0 + 1; checked against kElements.
  static Tensor atomicNumbers(const Batch& batch);

 private:
  SchNetOptions opt_;
  GaussianSmearing rbf_;
  Embedding embedding_;
  std::vector<std::unique_ptr<SchNetInteraction>> interactions_;
  Linear lin1_, lin2_;
  Tensor scale_, shift_, atomref_;  // constants of the output (undefined: none)
};

}  // namespace gnn
