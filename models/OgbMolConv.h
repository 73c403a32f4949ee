// OgbMolConv (`--model gine | transformer | gen | nnconv | pna`): OGB's graph-level molecule model (GNN_node: AtomEncoder, layers,
// global pooling, a linear head) with one of PyG's edge-aware convolutions in each layer, each layer reading its
// own BondEncoder embedding of the bonds ([E, hidden], as OGB's convs hold theirs):
//   gine         GINEConv with OGB's GIN MLP (hidden -> 2 hidden -> hidden, the norm inside), eps trained
//                (Hu et al. 2020's pre-training GNN; OGB's GIN with bond features)
//   transformer  TransformerConv, 4 heads of hidden / 4 concatenated, the bond embedding as edge_dim input
//                (Shi et al. 2021)
//   gen          GENConv with a learnt softmax temperature and its 2-layer MLP (DeeperGCN, Li et al. 2020; OGB's
//                molecule setup)
//   nnconv       NNConv (Gilmer et al. 2017's edge network) as PyG's QM9 example: a 16-wide bond embedding through
//                Linear(16, 128), ReLU, Linear(128, hidden^2) gives each bond its [hidden, hidden] matrix; mean
//   pna          PNAConv (Corso et al. 2020): mean, min, max and std aggregators, identity, amplification and
//                attenuation scalers from the training molecules' in-degree histogram (options().degreeHistogram)
// then the norm (OGB's BatchNorm over the real atoms, or LayerNorm), ReLU (not after the last layer) and dropout;
// options().virtualNode adds OGB's virtual node as for GIN, options().residual the layer's input to its output
// (OGB's and PNA's `residual`). Blocks: "input", "layers/l", "head".
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "models/BondEncoder.h"
#include "models/GraphModel.h"
#include "models/NormLayer.h"
#include "models/VirtualNode.h"

namespace gnn {

class OgbMolConv : public GraphModel {
 public:
  /// kind: "gine", "transformer", "gen", "nnconv" or "pna" (std::invalid_argument otherwise).
  OgbMolConv(const std::string& kind, GraphModelOptions options, Generator& gen);
  const char* name() const override { return kind_.c_str(); }
  std::unique_ptr<Module> clone() const override;
  /// The kinds this model builds.
  static const std::vector<std::string>& kinds();

 private:
  Variable convolve(int64_t layer, const Variable& h, const Batch& b);

  std::string kind_;
  std::vector<std::unique_ptr<Module>> convs_;
  std::vector<std::unique_ptr<BondEncoder>> bonds_;
  std::vector<std::unique_ptr<NormLayer>> norms_;
  std::unique_ptr<VirtualNode> virtualNode_;
};

}  // namespace gnn
