// LayerList: PyG layers applied one after the other, an activation between them: the model a `predict
// --pyg-model` spec {"layers": [{"class": "GINEConv", "args": {...}}, ...], "act": "relu"} describes, so any layer
// of gnn/nn/conv runs from a PyG model's weights. The PyG side is a module holding the layers as `layers`, a
// torch.nn.ModuleList, whose forward is x = layer(x, edge_index, ...) with act between them (not after the last):
// the state_dict keys are "layers.<i>.<the layer's keys>". GCN2Conv and FAConv take the model's input as x_0.
//
//   LayerList model(nlohmann::json::parse(specText), gen);
//   ConvInputs in;
//   in.x = x;
//   in.edgeIndex = edgeIndex;
//   Variable out = model.forward(in);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/nn/Activation.h"
#include "gnn/nn/conv/ConvRegistry.h"

namespace gnn {

class LayerList : public Module {
 public:
  /// spec: {"layers": [{"class", "args"}, ...], "act": PyG's activation name or null (default "relu"),
  /// "act_kwargs": {...}}; std::invalid_argument naming a bad entry.
  LayerList(const nlohmann::json& spec, Generator& gen, DType dtype = DType::F32);
  /// Whether a spec describes a layer list (has "layers").
  static bool isLayerList(const nlohmann::json& spec) { return spec.is_object() && spec.contains("layers"); }

  /// in.x the model's input (also x_0 of GCN2Conv and FAConv, unless in.x0 is given).
  Variable forward(const ConvInputs& in);
  std::unique_ptr<Module> clone() const override;
  size_t size() const { return layers_.size(); }
  const std::string& className(size_t i) const { return classes_[i]; }

 private:
  nlohmann::json spec_;
  DType dtype_;
  Activation act_;
  std::vector<std::string> classes_;
  std::vector<std::unique_ptr<Module>> layers_;
};

}  // namespace gnn
