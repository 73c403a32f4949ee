#include "LayerTable.h"

#include <stdexcept>

#include "gnn/nn/conv/GCNConv.h"

namespace gnn::testing {

namespace {

using json = nlohmann::json;

/// The keyword arguments a layer takes, with PyG's defaults for the ones not given; an unknown one throws, so
/// a reference made with an option the layer lacks fails loudly instead of being checked against defaults.
json withDefaults(const json& args, const json& defaults) {
  json out = defaults;
  for (const auto& [k, v] : args.items()) {
    if (!defaults.contains(k)) throw std::invalid_argument("layer table: unknown argument '" + k + "'");
    out[k] = v;
  }
  return out;
}

std::unique_ptr<Module> makeGCNConv(const json& args, DType dtype, Generator& gen) {
  const json a = withDefaults(args, {{"in_channels", 0}, {"out_channels", 0}, {"improved", false},
                                     {"cached", false}, {"add_self_loops", true}, {"normalize", true},
                                     {"bias", true}});
  if (a["improved"].get<bool>()) throw std::invalid_argument("GCNConv: improved=True is not supported");
  GCNConvOptions o;
  o.dtype = dtype;
  o.cached = a["cached"];
  o.addSelfLoops = a["add_self_loops"];
  o.normalize = a["normalize"];
  o.bias = a["bias"];
  return std::make_unique<GCNConv>(a["in_channels"].get<int64_t>(), a["out_channels"].get<int64_t>(), gen, o);
}

}  // namespace

const std::vector<LayerCase>& layerCases() {
  static const std::vector<LayerCase> cases = {
      {"GCNConv", {{"in_channels", 4}, {"out_channels", 3}},
       {"gcn_conv", "gcn_conv_no_self_loops", "gcn_conv_no_normalize_no_bias"}, makeGCNConv, forwardOf<GCNConv>()},
  };
  return cases;
}

}  // namespace gnn::testing
