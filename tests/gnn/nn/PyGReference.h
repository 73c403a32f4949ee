// PyGReference: reading the reference files tests/reference/pyg_*.py write (PyG 2.3.1's outputs and gradients as
// JSON) and comparing with them: the layer table, the aggregation table and the other checks against PyG share
// these.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/nn/Module.h"

namespace gnn::testing {

/// tests/reference/<folder>/<name>.json, made by `script`.
inline nlohmann::json readReference(const std::string& name, const std::string& folder = "pyg",
                                    const std::string& script = "tests/reference/pyg_*.py") {
  const std::string path = std::string(GNN_SOURCE_DIR) + "/tests/reference/" + folder + "/" + name + ".json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + " (made by " + script + ")");
  return nlohmann::json::parse(in);
}

/// A JSON list of rows as an [rows, cols] tensor.
inline Tensor matrixOf(const nlohmann::json& rows, DType dtype) {
  std::vector<double> v;
  for (const auto& r : rows)
    for (double x : r) v.push_back(x);
  const int64_t n = static_cast<int64_t>(rows.size());
  return Tensor::fromVector(v, {n, n ? static_cast<int64_t>(v.size()) / n : 0}).to(dtype);
}

/// Flat JSON values as a tensor of the given shape.
inline Tensor flatOf(const nlohmann::json& values, const Shape& shape, DType dtype) {
  return Tensor::fromVector(values.get<std::vector<double>>(), shape).to(dtype);
}

/// max |a - b| / max(1, max |b|), in double.
inline double relativeError(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double diff = 0, scale = 1;
  for (int64_t i = 0; i < std::min(a.numel(), b.numel()); ++i) {
    diff = std::max(diff, std::abs(a.at(i) - b.at(i)));
    scale = std::max(scale, std::abs(b.at(i)));
  }
  return diff / scale;
}

/// Loads PyG's state_dict into the layer: every parameter must be there under its name with its shape, and
/// every entry of the state_dict must be a parameter of the layer; an alias (a key naming another key's tensor,
/// as PyG's lin_dst = lin_src) is that parameter, held once, as in PyG's named_parameters.
inline void loadStateDict(Module& layer, const nlohmann::json& stateDict, DType dtype,
                          const nlohmann::json& aliases = nlohmann::json::object()) {
  auto named = layer.namedParameters();
  EXPECT_EQ(named.size() + aliases.size(), stateDict.size())
      << "PyG's state_dict: " << stateDict.size() << " entries";
  for (auto& [alias, target] : aliases.items()) EXPECT_EQ(stateDict[alias], stateDict[target.get<std::string>()]);
  for (auto& [name, p] : named) {
    ASSERT_TRUE(stateDict.contains(name)) << "no '" << name << "' in PyG's state_dict";
    const Shape shape = stateDict[name]["shape"].get<Shape>();
    ASSERT_EQ(p.shape(), shape) << name;
    Variable v = p;
    v.value() = flatOf(stateDict[name]["values"], shape, dtype);
  }
}

}  // namespace gnn::testing
