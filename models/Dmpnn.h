// Dmpnn: Chemprop's directed message-passing neural network (D-MPNN; Yang et al. 2019, "Analyzing Learned
// Molecular Representations for Property Prediction", J. Chem. Inf. Model. 59:3370; chemprop/chemprop v2,
// chemprop/nn/message_passing/base.py BondMessagePassing, agg.py, ffn.py), with Chemprop's defaults: hidden 300,
// depth 3, no bias in W_i and W_h, ReLU, dropout 0, mean aggregation, an FFN head of one hidden layer of 300.
// Hidden states live on directed bonds (models/BondMessages.h); for an edge u -> v with atom features x_u and
// bond features e_uv, as Chemprop v2 computes them (H_0 is kept before its activation and re-enters every update):
//
//   h0_uv     = W_i [x_u || e_uv]                                  (no bias)
//   h_uv^1    = ReLU(h0_uv)
//   m_uv^t+1  = sum_{k -> u} h_ku^t - h_vu^t
//   h_uv^t+1  = dropout(ReLU(h0_uv + W_h m_uv^t+1))                 t = 1 .. depth - 1 (W_h shared, no bias)
//   m_v       = sum_{k -> v} h_kv^depth
//   h_v       = dropout(ReLU(W_o [x_v || m_v] + b_o))
//   y         = FFN(aggregate_v h_v)      mean (default) | sum | norm (sum / aggregationNorm)
//               FFN([aggregate_v h_v || x_d])  with graphFeatures > 0: Batch::graphFeatures x_d, Chemprop's X_d
//               (molecule descriptors, app/MoleculeFeatures.h) concatenated after the aggregation
//   FFN       = Linear(hidden + graphFeatures, ffnHidden),
//               [ReLU, dropout, Linear(ffnHidden, ffnHidden)] x (ffnLayers - 1),
//               ReLU, dropout, Linear(ffnHidden, tasks)          (ffnLayers = 0: Linear(hidden, tasks) alone)
//
// With nodeFeatures = F > 0, Batch::nodeFeatures f_v [numNodes, F] (the user's atom descriptors,
// app/AtomFeatures.h) extend every atom's features, x_u becoming [x_u || f_u] in W_i and W_o: Chemprop v2's extra
// atom features V_f, which its featuriser appends to the atom features (v1's --atom_descriptors feature).
//
// The paper writes h0 after its activation inside the update (tau(h0 + W_h m)); both Chemprop v1 and v2 add the
// pre-activation W_i [x_u || e_uv], as here. Features: OGB's 9 atom and 3 bond categories (smiles2graph), read as
// one-hot vectors by W_i and W_o (models/OneHotLinear.h: the same function as nn.Linear on the one-hot vectors,
// stored as tables), not Chemprop's own featurisation (133 atom, 14 bond features, with the atomic mass and ring
// membership of bonds that OGB's lack). Padding atoms and edges (self-loops on padding atoms) reach no real
// atom, so real molecules' outputs do not depend on padding; padding graphs' rows are 0.
// Blocks: "input" (h0), "layers/0" .. "layers/<depth-2>" (the updates), "atoms" (h_v, the state's "h"), "head".
//
//   DmpnnOptions o;                                   // Chemprop's defaults
//   Dmpnn model(o, gen);
//   Variable y = model.forward(batch);                // [numGraphs, tasks]
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gnn/nn/Linear.h"
#include "models/BlockModel.h"
#include "models/OneHotLinear.h"

namespace gnn {

struct DmpnnOptions {
  int64_t hidden = 300;  // Chemprop's --message-hidden-dim
  int64_t depth = 3;     // --depth: depth - 1 updates of the bond states
  int64_t tasks = 1;
  int64_t ffnHidden = 300;  // --ffn-hidden-dim
  int64_t ffnLayers = 1;    // --ffn-num-layers: hidden layers of the FFN (Chemprop v2's meaning)
  double dropout = 0.0;     // --dropout: after each update, the atom readout and before each FFN layer but the first
  std::string aggregation = "mean";  // mean | sum | norm
  double aggregationNorm = 100.0;    // --aggregation-norm: norm = sum / this
  int64_t graphFeatures = 0;         // width of Batch::graphFeatures the FFN reads after the aggregation (0: none)
  int64_t nodeFeatures = 0;          // width of Batch::nodeFeatures f_v W_i and W_o read beside x_v (0: none)
  DType dtype = DType::F32;
  /// Throws std::invalid_argument naming the first option out of range.
  void validate() const;
};

class Dmpnn : public BlockModel {
 public:
  Dmpnn(DmpnnOptions options, Generator& gen);
  const char* name() const { return "dmpnn"; }
  const DmpnnOptions& options() const { return opt_; }
  std::unique_ptr<Module> clone() const override;
  /// Each molecule's vector after the aggregation, the FFN's input [numGraphs, hidden + graphFeatures] (Chemprop's
  /// fingerprint at the "mpnn" level, its X_d included); padding graphs' rows are 0.
  Variable moleculeEmbeddings(const Batch& batch);

 private:
  Variable aggregate(const Variable& atoms, const Batch& batch) const;

  DmpnnOptions opt_;
  OneHotLinear wi_;
  Linear wh_;
  OneHotLinear wo_;
  std::vector<std::unique_ptr<Linear>> ffn_;
};

}  // namespace gnn
