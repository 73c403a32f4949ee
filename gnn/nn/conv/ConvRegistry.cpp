#include "gnn/nn/conv/ConvRegistry.h"

#include <functional>
#include <map>

#include "gnn/nn/HeteroLinear.h"
#include "gnn/nn/conv/APPNP.h"
#include "gnn/nn/conv/ChebConv.h"
#include "gnn/nn/conv/ClusterGCNConv.h"
#include "gnn/nn/conv/DynamicEdgeConv.h"
#include "gnn/nn/conv/EGConv.h"
#include "gnn/nn/conv/EdgeConv.h"
#include "gnn/nn/conv/FAConv.h"
#include "gnn/nn/conv/FastRGCNConv.h"
#include "gnn/nn/conv/FiLMConv.h"
#include "gnn/nn/conv/GATConv.h"
#include "gnn/nn/conv/GATv2Conv.h"
#include "gnn/nn/conv/GCN2Conv.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/GENConv.h"
#include "gnn/nn/conv/GINConv.h"
#include "gnn/nn/conv/GINEConv.h"
#include "gnn/nn/conv/GatedGraphConv.h"
#include "gnn/nn/conv/GeneralConv.h"
#include "gnn/nn/conv/GraphConv.h"
#include "gnn/nn/conv/LEConv.h"
#include "gnn/nn/conv/MFConv.h"
#include "gnn/nn/conv/NNConv.h"
#include "gnn/nn/conv/PNAConv.h"
#include "gnn/nn/conv/RGATConv.h"
#include "gnn/nn/conv/RGCNConv.h"
#include "gnn/nn/conv/ResGatedGraphConv.h"
#include "gnn/nn/conv/SAGEConv.h"
#include "gnn/nn/conv/SGConv.h"
#include "gnn/nn/conv/TAGConv.h"
#include "gnn/nn/conv/TransformerConv.h"

namespace gnn {

namespace {
struct Entry {
  std::function<std::unique_ptr<Module>(const nlohmann::json&, Generator&, DType)> make;
  std::function<Variable(Module&, const ConvInputs&)> forward;
  ConvWidths widths = ConvWidths::InOut;
  bool needsEdgeFeatures = false;
};

Entry with(Entry e, ConvWidths w, bool needsEdges = false) {
  e.widths = w;
  e.needsEdgeFeatures = needsEdges;
  return e;
}

template <class L>
std::function<std::unique_ptr<Module>(const nlohmann::json&, Generator&, DType)> makeOf() {
  return [](const nlohmann::json& a, Generator& gen, DType dt) -> std::unique_ptr<Module> {
    return L::fromPyG(a, gen, dt);
  };
}

template <class L>
Entry plain() {
  return {makeOf<L>(), [](Module& m, const ConvInputs& in) { return static_cast<L&>(m).forward(in.x, in.edgeIndex); }};
}

template <class L>
Entry withEdges() {
  return {makeOf<L>(),
          [](Module& m, const ConvInputs& in) { return static_cast<L&>(m).forward(in.x, in.edgeIndex, in.edgeAttr); }};
}

template <class L>
Entry withInitial() {
  return {makeOf<L>(), [](Module& m, const ConvInputs& in) {
            return static_cast<L&>(m).forward(in.x, in.x0.defined() ? in.x0 : in.x, in.edgeIndex);
          }};
}

template <class L>
Entry withEdgeTypes() {
  return {makeOf<L>(), [](Module& m, const ConvInputs& in) {
            return static_cast<L&>(m).forward(in.x, in.edgeIndex, in.edgeType);
          }};
}

const std::map<std::string, Entry>& registry() {
  static const std::map<std::string, Entry> r = {
      {"APPNP", with(plain<APPNP>(), ConvWidths::None)},
      {"ChebConv", plain<ChebConv>()},
      {"ClusterGCNConv", plain<ClusterGCNConv>()},
      {"DynamicEdgeConv",
       with({makeOf<DynamicEdgeConv>(),
             [](Module& m, const ConvInputs& in) { return static_cast<DynamicEdgeConv&>(m).forward(in.x, in.batch); }},
            ConvWidths::PairMlp)},
      {"EGConv", plain<EGConv>()},
      {"EdgeConv", with(plain<EdgeConv>(), ConvWidths::PairMlp)},
      {"FAConv", with(withInitial<FAConv>(), ConvWidths::Channels)},
      {"FastRGCNConv", withEdgeTypes<FastRGCNConv>()},
      {"FiLMConv", withEdgeTypes<FiLMConv>()},
      {"GATConv", withEdges<GATConv>()},
      {"GATv2Conv", withEdges<GATv2Conv>()},
      {"GCN2Conv", with(withInitial<GCN2Conv>(), ConvWidths::Channels)},
      {"GCNConv", plain<GCNConv>()},
      {"GENConv", withEdges<GENConv>()},
      {"GINConv", with(plain<GINConv>(), ConvWidths::Mlp)},
      {"GINEConv", with(withEdges<GINEConv>(), ConvWidths::Mlp, true)},
      {"GatedGraphConv", with(plain<GatedGraphConv>(), ConvWidths::OutOnly)},
      {"GeneralConv", withEdges<GeneralConv>()},
      {"GraphConv", plain<GraphConv>()},
      {"HeteroLinear", {makeOf<HeteroLinear>(), [](Module& m, const ConvInputs& in) {
                          return static_cast<HeteroLinear&>(m).forward(in.x, in.nodeType);
                        }}},
      {"LEConv", plain<LEConv>()},
      {"MFConv", plain<MFConv>()},
      {"NNConv", with(withEdges<NNConv>(), ConvWidths::InOut, true)},
      {"PNAConv", withEdges<PNAConv>()},
      {"RGATConv", {makeOf<RGATConv>(), [](Module& m, const ConvInputs& in) {
                      return static_cast<RGATConv&>(m).forward(in.x, in.edgeIndex, in.edgeType, in.edgeAttr);
                    }}},
      {"RGCNConv", withEdgeTypes<RGCNConv>()},
      {"ResGatedGraphConv", plain<ResGatedGraphConv>()},
      {"SAGEConv", plain<SAGEConv>()},
      {"SGConv", plain<SGConv>()},
      {"TAGConv", plain<TAGConv>()},
      {"TransformerConv", withEdges<TransformerConv>()},
  };
  return r;
}

const Entry& entryOf(const std::string& className) {
  auto it = registry().find(className);
  if (it == registry().end()) {
    std::string known;
    for (const std::string& n : convClassNames()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("convolution '" + className + "' is not one of PyG's layers offered here (" + known +
                                ")");
  }
  return it->second;
}
}  // namespace

std::unique_ptr<Module> convFromPyG(const std::string& className, const nlohmann::json& args, Generator& gen,
                                    DType dtype) {
  return entryOf(className).make(args, gen, dtype);
}

Variable convForward(const std::string& className, Module& conv, const ConvInputs& in) {
  return entryOf(className).forward(conv, in);
}

ConvWidths convWidths(const std::string& className) {
  return entryOf(className).widths;
}

bool convNeedsEdgeFeatures(const std::string& className) {
  return entryOf(className).needsEdgeFeatures;
}

std::vector<std::string> convClassNames() {
  std::vector<std::string> names;
  for (const auto& [n, unused] : registry()) names.push_back(n);
  return names;
}

}  // namespace gnn
