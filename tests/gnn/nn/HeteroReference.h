// HeteroReference: reading the files tests/reference/pyg_hetero_models.py writes (PyG 2.3.1's HeteroConv and
// to_hetero models: dictionaries of tensors per node type, edge_index_dict in order, state_dicts as JSON) and
// comparing with them. The HeteroConv and to_hetero tests share these.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "gnn/io/StateDict.h"
#include "gnn/nn/Module.h"
#include "gnn/nn/conv/HeteroConv.h"
#include "gnn/ops/Ops.h"
#include "nn/PyGReference.h"

namespace gnn::testing {

/// tests/reference/pyg_hetero/<name>.json.
inline nlohmann::json readHeteroReference(const std::string& name) {
  return readReference(name, "pyg_hetero", "tests/reference/pyg_hetero_models.py");
}

/// {"shape": [...], "values": [...]} as a tensor.
inline Tensor tensorOf(const nlohmann::json& t, DType dtype) {
  return Tensor::fromVector(t["values"].get<std::vector<double>>(), t["shape"].get<Shape>()).to(dtype);
}

/// The reference's x_dict (leaf Variables that take gradients when asked).
inline std::map<std::string, Variable> xDictOf(const nlohmann::json& ref, DType dtype, bool requiresGrad = false) {
  std::map<std::string, Variable> x;
  for (const auto& [type, t] : ref["x"].items()) x.emplace(type, Variable(tensorOf(t, dtype), requiresGrad));
  return x;
}

/// The reference's edge_index_dict, in its order.
inline EdgeIndexDict edgeIndexDictOf(const nlohmann::json& ref) {
  EdgeIndexDict edges;
  for (const auto& [type, ei] : ref["edge_index"].get<std::vector<std::pair<std::vector<std::string>,
                                                                       std::vector<std::vector<int64_t>>>>>()) {
    std::vector<int64_t> flat(ei[0]);
    flat.insert(flat.end(), ei[1].begin(), ei[1].end());
    edges.emplace_back(EdgeType{type[0], type[1], type[2]},
                       Tensor::fromVector(flat, {2, static_cast<int64_t>(ei[0].size())}));
  }
  return edges;
}

/// The reference's state_dict as a StateDict in PyG's key order (num_batches_tracked as int64, the rest float64).
inline StateDict stateDictOf(const nlohmann::json& ref) {
  StateDict sd;
  for (const auto& [key, t] : ref["state_dict"].items()) {
    const bool counter = key.size() >= 19 && key.compare(key.size() - 19, 19, "num_batches_tracked") == 0;
    Tensor v = tensorOf(t, DType::F64);
    sd.entries.emplace_back(key, counter ? v.to(DType::I64) : v);
  }
  return sd;
}

/// PyG's state_dict keys in PyG's order (the JSON keeps the file's order only as a list: read it from the text).
inline std::vector<std::string> stateDictKeysInOrder(const std::string& name) {
  const std::string path = std::string(GNN_SOURCE_DIR) + "/tests/reference/pyg_hetero/" + name + ".json";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> keys;
  const size_t at = text.find("\"state_dict\":{");
  // The state_dict's values are {"shape": ..., "values": [...]}: its keys are the strings at depth one.
  int depth = 0;
  for (size_t i = at + 13; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      if (--depth == 0) break;
    }
    if (c == '"' && depth == 1) {
      const size_t end = text.find('"', i + 1);
      keys.push_back(text.substr(i + 1, end - i - 1));
      i = end;
    }
  }
  return keys;
}

/// max |a - b| / max(1, max |b|), in double.
inline double heteroRelativeError(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double diff = 0, scale = 1;
  for (int64_t i = 0; i < std::min(a.numel(), b.numel()); ++i) {
    diff = std::max(diff, std::abs(a.at(i) - b.at(i)));
    scale = std::max(scale, std::abs(b.at(i)));
  }
  return diff / scale;
}

}  // namespace gnn::testing
