#include "gnn/nn/models/LayerList.h"

namespace gnn {

LayerList::LayerList(const nlohmann::json& spec, Generator& gen, DType dtype) : spec_(spec), dtype_(dtype) {
  if (!isLayerList(spec) || !spec["layers"].is_array() || spec["layers"].empty())
    throw std::invalid_argument("a layer list needs \"layers\": [{\"class\": ..., \"args\": {...}}, ...]");
  for (const auto& [key, unused] : spec.items())
    if (key != "layers" && key != "act" && key != "act_kwargs")
      throw std::invalid_argument("layer list: unknown key '" + key + "' (layers, act, act_kwargs)");
  act_ = activationFromPyG(spec.value("act", nlohmann::json("relu")), spec.value("act_kwargs", nlohmann::json()));
  for (size_t i = 0; i < spec["layers"].size(); ++i) {
    const nlohmann::json& l = spec["layers"][i];
    if (!l.is_object() || !l.contains("class") || !l["class"].is_string())
      throw std::invalid_argument("layer " + std::to_string(i) + ": expected {\"class\": ..., \"args\": {...}}");
    try {
      classes_.push_back(l["class"].get<std::string>());
      layers_.push_back(convFromPyG(classes_.back(), l.value("args", nlohmann::json::object()), gen, dtype));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("layer " + std::to_string(i) + ": " + e.what());
    }
    registerModule("layers." + std::to_string(i), *layers_.back());
  }
}

std::unique_ptr<Module> LayerList::clone() const {
  Generator unused;  // the copy's values are overwritten
  return cloneInto(std::make_unique<LayerList>(spec_, unused, dtype_));
}

Variable LayerList::forward(const ConvInputs& in) {
  ConvInputs step = in;
  if (!step.x0.defined()) step.x0 = in.x;
  for (size_t i = 0; i < layers_.size(); ++i) {
    step.x = convForward(classes_[i], *layers_[i], step);
    if (i + 1 < layers_.size()) step.x = act_(step.x);
  }
  return step.x;
}

}  // namespace gnn
