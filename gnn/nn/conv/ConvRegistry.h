// ConvRegistry: every convolution of gnn/nn/conv by PyG's class name (and HeteroLinear, a per-type Linear a
// layer list may hold): built from PyG's keyword arguments and called with what its forward takes (node features,
// edges, edge features, the initial features GCN2Conv and FAConv mix in, the batch vector DynamicEdgeConv searches
// within, edge and node types). What runs a layer named in a file (predict's
// layer lists, the layer-step benchmark) goes through here.
//
//   std::unique_ptr<Module> conv = convFromPyG("TransformerConv", {{"in_channels", 16}, {"out_channels", 8}}, gen);
//   ConvInputs in;
//   in.x = x;
//   in.edgeIndex = edgeIndex;
//   Variable h = convForward("TransformerConv", *conv, in);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn {

/// What a convolution's forward may read; each reads what it needs.
struct ConvInputs {
  Variable x;
  Tensor edgeIndex;
  Variable edgeAttr;  ///< [E, edge_dim] for the layers built with edge features (GINEConv, NNConv need them)
  Variable x0;        ///< GCN2Conv's and FAConv's initial features (undefined: x)
  Tensor batch;       ///< DynamicEdgeConv's graph of each node (undefined: one graph)
  Tensor edgeType;    ///< int64 [E]: each edge's relation (RGCNConv, FastRGCNConv, RGATConv, FiLMConv; undefined:
                      ///< type 0, which RGATConv refuses)
  Tensor nodeType;    ///< int64 [N]: each node's type (HeteroLinear's type_vec)
};

/// The layer PyG calls className, from its keyword arguments; std::invalid_argument naming an unknown class
/// (with the known ones) or argument.
std::unique_ptr<Module> convFromPyG(const std::string& className, const nlohmann::json& args, Generator& gen,
                                    DType dtype = DType::F32);
/// Runs a layer convFromPyG built for className on its inputs.
Variable convForward(const std::string& className, Module& conv, const ConvInputs& in);
/// The class names convFromPyG knows, sorted.
std::vector<std::string> convClassNames();

/// How a layer's constructor is given its widths, so a model can stack any of them (BasicGNN over a convolution
/// class): in_channels and out_channels; `channels` alone (the width kept: GCN2Conv, FAConv); out_channels alone,
/// the input at most as wide (GatedGraphConv); none (APPNP propagates); `nn` an MLP from in to out channels
/// (GINConv, GINEConv) or from twice in (EdgeConv, DynamicEdgeConv: [x_i, x_j - x_i]).
enum class ConvWidths { InOut, Channels, OutOnly, None, Mlp, PairMlp };
/// The widths form of a class convFromPyG knows (std::invalid_argument for another).
ConvWidths convWidths(const std::string& className);
/// Whether the class's forward needs edge features (GINEConv, NNConv).
bool convNeedsEdgeFeatures(const std::string& className);

}  // namespace gnn
