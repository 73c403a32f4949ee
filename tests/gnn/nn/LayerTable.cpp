#include "LayerTable.h"

#include "gnn/nn/conv/GCNConv.h"

namespace gnn::testing {

const std::vector<LayerCase>& layerCases() {
  static const std::vector<LayerCase> cases = {
      {"GCNConv", {{"in_channels", 4}, {"out_channels", 3}},
       {"gcn_conv", "gcn_conv_no_self_loops", "gcn_conv_no_normalize_no_bias"},
       fromPyGOf<GCNConv>(), forwardOf<GCNConv>()},
  };
  return cases;
}

}  // namespace gnn::testing
