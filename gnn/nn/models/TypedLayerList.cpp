#include "gnn/nn/models/TypedLayerList.h"

#include <map>

#include "gnn/ops/Ops.h"

namespace gnn {

nlohmann::json TypedLayerList::layersOnly(const nlohmann::json& spec) {
  if (!spec.is_object()) throw std::invalid_argument("to_homogeneous: expected an object with \"layers\"");
  nlohmann::json rest = spec;
  rest.erase("input");
  return rest;
}

TypedLayerList::TypedLayerList(const nlohmann::json& spec, Generator& gen, DType dtype)
    : LayerList(layersOnly(spec), gen, dtype), fullSpec_(spec), dtype_(dtype) {
  if (!spec.contains("input")) return;
  const nlohmann::json& in = spec["input"];
  if (!in.is_object() || in.value("class", std::string()) != "HeteroDictLinear")
    throw std::invalid_argument("to_homogeneous: \"input\" must be {\"class\": \"HeteroDictLinear\", \"args\": "
                                "{...}} (a Linear per node type)");
  for (const auto& [key, unused] : in.items())
    if (key != "class" && key != "args")
      throw std::invalid_argument("to_homogeneous: unknown key 'input." + key + "' (class, args)");
  try {
    input_ = HeteroDictLinear::fromPyG(in.value("args", nlohmann::json::object()), gen, dtype);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("to_homogeneous input: ") + e.what());
  }
  registerModule("input", *input_);
}

std::unique_ptr<Module> TypedLayerList::clone() const {
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<TypedLayerList>(fullSpec_, unused, dtype_));
}

Variable TypedLayerList::forward(const std::vector<std::pair<std::string, Variable>>& x, const Tensor& edgeIndex,
                                 const Tensor& edgeType, const Tensor& nodeType) {
  GNN_CHECK_ARG(!x.empty(), "TypedLayerList: no node type");
  std::vector<Variable> rows;
  if (input_) {
    std::map<std::string, Variable> byType(x.begin(), x.end());
    std::map<std::string, Variable> projected = input_->forward(byType);
    for (const auto& [type, unused] : x) rows.push_back(projected.at(type));
  } else {
    for (const auto& [type, v] : x) {
      GNN_CHECK_ARG(v.dim(1) == x.front().second.dim(1), "TypedLayerList: node type '", type, "' has ", v.dim(1),
                    " features, '", x.front().first, "' ", x.front().second.dim(1), ": types of different widths ",
                    "need an \"input\" (a HeteroDictLinear) to meet in one");
      rows.push_back(v);
    }
  }
  ConvInputs in;
  in.x = concatRows(rows);
  in.edgeIndex = edgeIndex;
  in.edgeType = edgeType;
  in.nodeType = nodeType;
  return LayerList::forward(in);
}

}  // namespace gnn
