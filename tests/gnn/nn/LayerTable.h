// The layer table: every message-passing layer of gnn/nn/conv as one case, driven the same way by
// LayerTable_test.cpp's checks (PyG 2.3.1's outputs and gradients from the same state_dict, finite-difference
// gradients, padding invariance under fixed-size batches, the same bits on 1 and 2 threads, FLOPs and bytes
// declared for the device's plans). A new layer joins with one entry in LayerTable.cpp.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "gnn/nn/Module.h"
#include "gnn/system/Random.h"

namespace gnn::testing {

struct LayerCase {
  /// PyG's class name ("GCNConv"): the test's name.
  std::string name;
  /// Constructor arguments under PyG's keyword names ({"in_channels": 4, "out_channels": 3}) for the checks
  /// that are not against a reference file; a reference file brings its own.
  nlohmann::json args;
  /// tests/reference/pyg/<file>.json made by tests/reference/pyg_layers.py, each a configuration of the layer.
  std::vector<std::string> pygReferences;
  /// Builds the layer from PyG's keyword arguments (those the layer does not know are an error).
  std::function<std::unique_ptr<Module>(const nlohmann::json& args, DType dtype, Generator& gen)> make;
  /// Node rows out of node features x [N, in_channels], edge_index [2, E] and, for a layer with edgeDim > 0,
  /// edge features edge_attr [E, edgeDim] (else undefined).
  std::function<Variable(Module& layer, const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr)>
      forward;
  /// Width of the edge features the layer reads (its args' edge_dim), 0 for none.
  int64_t edgeDim = 0;
  /// Parameters the forward does not read under `args` (PyG registers them whatever the configuration, as
  /// RGATConv's mod parameters): no gradient to check against differences; each must indeed get none.
  std::vector<std::string> unreadParameters = {};
};

/// gtest prints a case by its layer's name.
inline void PrintTo(const LayerCase& c, std::ostream* os) { *os << c.name; }

/// Every layer's case, in the order they run.
const std::vector<LayerCase>& layerCases();

/// make for a layer class with static fromPyG(const nlohmann::json& args, Generator&, DType).
template <class L>
std::function<std::unique_ptr<Module>(const nlohmann::json&, DType, Generator&)> fromPyGOf() {
  return [](const nlohmann::json& args, DType dtype, Generator& gen) -> std::unique_ptr<Module> {
    return L::fromPyG(args, gen, dtype);
  };
}

using LayerForward = std::function<Variable(Module&, const Variable&, const Tensor&, const Variable&)>;

/// forward for a layer class with forward(const Variable& x, const Tensor& edgeIndex).
template <class L>
LayerForward forwardOf() {
  return [](Module& m, const Variable& x, const Tensor& ei, const Variable&) {
    return static_cast<L&>(m).forward(x, ei);
  };
}

/// forward for a layer class with forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr).
template <class L>
LayerForward forwardWithEdgesOf() {
  return [](Module& m, const Variable& x, const Tensor& ei, const Variable& e) {
    return static_cast<L&>(m).forward(x, ei, e);
  };
}

}  // namespace gnn::testing
