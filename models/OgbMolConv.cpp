#include "models/OgbMolConv.h"

#include <algorithm>

#include "gnn/nn/conv/GENConv.h"
#include "gnn/nn/conv/GINEConv.h"
#include "gnn/nn/conv/NNConv.h"
#include "gnn/nn/conv/PNAConv.h"
#include "gnn/nn/conv/TransformerConv.h"
#include "gnn/ops/Ops.h"
#include "models/KeyedDropoutScope.h"

namespace gnn {

namespace {
// The norm inside a conv's MLP under PyG's name.
const char* pygNormName(NormKind k) { return k == NormKind::Batch ? "batch_norm" : "layer_norm"; }

// nnconv's bond embedding, the input of its edge network (PyG's QM9 NNConv example reads 5 bond features).
constexpr int64_t kNNConvBondWidth = 16;

const char* className(const std::string& kind) {
  if (kind == "gine") return "GINE";
  if (kind == "gen") return "GEN";
  if (kind == "nnconv") return "NNConv";
  if (kind == "pna") return "PNA";
  return "TransformerConv";
}
}  // namespace

const std::vector<std::string>& OgbMolConv::kinds() {
  static const std::vector<std::string> k = {"gine", "transformer", "gen", "nnconv", "pna"};
  return k;
}

OgbMolConv::OgbMolConv(const std::string& kind, GraphModelOptions options, Generator& gen)
    : GraphModel(className(kind), options, gen), kind_(kind) {
  if (std::find(kinds().begin(), kinds().end(), kind_) == kinds().end())
    throw std::invalid_argument("OgbMolConv: unknown kind '" + kind_ + "' (gine, transformer, gen, nnconv, pna)");
  GNN_CHECK_ARG(kind_ != "pna" || !opt_.degreeHistogram.empty(),
                "pna: the training molecules' in-degree histogram (GraphModelOptions::degreeHistogram) is required");
  const int64_t H = opt_.hidden;
  GNN_CHECK_ARG(kind_ != "transformer" || H % 4 == 0, "transformer: --hidden ", H, " must divide by its 4 heads");
  for (int64_t l = 0; l < opt_.layers; ++l) {
    nlohmann::json args;
    if (kind_ == "gine") {
      // OGB's GIN MLP: Linear(H, 2H), norm, ReLU, Linear(2H, H); eps trained as OGB's.
      args = {{"nn", {{"class", "MLP"}, {"args", {{"channel_list", {H, 2 * H, H}}, {"norm", pygNormName(opt_.norm)}}}}},
              {"train_eps", true}};
      convs_.push_back(GINEConv::fromPyG(args, gen, opt_.dtype));
    } else if (kind_ == "transformer") {
      args = {{"in_channels", H}, {"out_channels", H / 4}, {"heads", 4}, {"edge_dim", H}};
      convs_.push_back(TransformerConv::fromPyG(args, gen, opt_.dtype));
    } else if (kind_ == "nnconv") {
      // PyG's QM9 NNConv example: Linear(edge features, 128), ReLU, Linear(128, H * H), mean aggregation.
      args = {{"in_channels", H},
              {"out_channels", H},
              {"aggr", "mean"},
              {"nn", {{"class", "MLP"}, {"args", {{"channel_list", {kNNConvBondWidth, 128, H * H}}, {"norm", nullptr}}}}}};
      convs_.push_back(NNConv::fromPyG(args, gen, opt_.dtype));
    } else if (kind_ == "pna") {
      // Corso et al. 2020 as PyG's examples/pna.py: four aggregators, three degree scalers, the bond embedding as
      // edge_dim input, one pre- and one post-layer.
      args = {{"in_channels", H},
              {"out_channels", H},
              {"aggregators", {"mean", "min", "max", "std"}},
              {"scalers", {"identity", "amplification", "attenuation"}},
              {"deg", opt_.degreeHistogram},
              {"edge_dim", H}};
      convs_.push_back(PNAConv::fromPyG(args, gen, opt_.dtype));
    } else {
      args = {{"in_channels", H}, {"out_channels", H}, {"learn_t", true}, {"num_layers", 2},
              {"norm", opt_.norm == NormKind::Batch ? "batch" : "layer"}};
      convs_.push_back(GENConv::fromPyG(args, gen, opt_.dtype));
    }
    registerModule("convs." + std::to_string(l), *convs_.back());
    bonds_.push_back(std::make_unique<BondEncoder>(kind_ == "nnconv" ? kNNConvBondWidth : H, gen, opt_.dtype));
    registerModule("bond_encoders." + std::to_string(l), *bonds_.back());
    norms_.push_back(std::make_unique<NormLayer>(opt_.norm, H, opt_.dtype));
    registerModule("norms." + std::to_string(l), norms_.back()->module());
    addBlock("layers/" + std::to_string(l), [this, l](BlockState s, const Batch& b) {
      Variable in = s.get("h"), vn;
      if (virtualNode_) {  // OGB's order: add the virtual nodes, convolve, then update them from `in`
        vn = l == 0 ? virtualNode_->initial(b) : s.get("vn");
        in = VirtualNode::addTo(in, vn, b);
      }
      const bool last = l + 1 == opt_.layers;
      Variable h = norms_[static_cast<size_t>(l)]->forward(convolve(l, in, b), b.nodesMask, !last);
      h = layerDropout(h, opt_.dropout, isTraining(), RowLevel::Node);
      s.set("h", opt_.residual ? add(in, h) : h);
      if (virtualNode_ && !last) s.set("vn", virtualNode_->update(l, in, vn, b, opt_.dropout));
      return s;
    });
  }
  if (opt_.virtualNode) {
    virtualNode_ = std::make_unique<VirtualNode>(opt_.layers, opt_.hidden, opt_.norm, gen, opt_.dtype);
    registerModule("virtual_node", *virtualNode_);
  }
  registerHead();
}

Variable OgbMolConv::convolve(int64_t l, const Variable& h, const Batch& b) {
  const Variable e = bonds_[static_cast<size_t>(l)]->forward(b.edgeAttr);
  Module& conv = *convs_[static_cast<size_t>(l)];
  const NormBatch nb{b.batch, b.numGraphs, b.nodesMask};
  if (kind_ == "gine") return static_cast<GINEConv&>(conv).forward(h, b.edgeIndex, e, nb);
  if (kind_ == "transformer") return static_cast<TransformerConv&>(conv).forward(h, b.edgeIndex, e);
  if (kind_ == "nnconv") return static_cast<NNConv&>(conv).forward(h, b.edgeIndex, e);
  if (kind_ == "pna") return static_cast<PNAConv&>(conv).forward(h, b.edgeIndex, e);
  return static_cast<GENConv&>(conv).forward(h, b.edgeIndex, e, nb);
}

std::unique_ptr<Module> OgbMolConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<OgbMolConv>(kind_, opt_, unused));
}

}  // namespace gnn
