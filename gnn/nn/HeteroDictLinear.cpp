#include "gnn/nn/HeteroDictLinear.h"

#include <set>

#include "gnn/nn/PyGArgs.h"

namespace gnn {

HeteroDictLinear::HeteroDictLinear(std::vector<std::pair<std::string, int64_t>> inChannels, int64_t outChannels,
                                   Generator& gen, bool bias, DType dtype)
    : in_(std::move(inChannels)), out_(outChannels), bias_(bias), dtype_(dtype) {
  GNN_CHECK_ARG(!in_.empty(), "HeteroDictLinear: no types");
  for (const auto& [type, width] : in_) {
    GNN_CHECK_ARG(width > 0 && out_ > 0, "HeteroDictLinear: type '", type, "': channel counts must be positive, got ",
                  width, " -> ", out_, " (lazy -1 is not offered)");
    GNN_CHECK_ARG(!lins_.count(type), "HeteroDictLinear: type '", type, "' given twice");
    auto lin = std::make_unique<Linear>(width, out_, gen, bias_, dtype_);
    registerModule("lins." + type, *lin);
    lins_.emplace(type, std::move(lin));
  }
}

std::unique_ptr<HeteroDictLinear> HeteroDictLinear::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "HeteroDictLinear",
                  {{"in_channels", nullptr}, {"out_channels", nullptr}, {"types", nullptr}, {"bias", true}});
  const nlohmann::json& in = a.at("in_channels");
  std::vector<std::pair<std::string, int64_t>> widths;
  if (in.is_object()) {
    std::set<std::string> keys;
    for (const auto& [type, width] : in.items()) {
      if (!width.is_number_integer()) throw a.invalidValue("in_channels", in, "a dict of ints");
      widths.emplace_back(type, width.get<int64_t>());
      keys.insert(type);
    }
    // PyG's check and wording (linear.py, HeteroDictLinear.__init__).
    if (a.has("types") && a.get<std::set<std::string>>("types") != keys)
      throw a.invalidValue("types", a.at("types"), "the provided 'types' do not match with the keys in the "
                                                   "'in_channels' dictionary");
  } else {
    if (!in.is_number_integer()) throw a.invalidValue("in_channels", in, "an int or a dict type -> int");
    if (!a.has("types"))
      throw a.invalidValue("types", nullptr, "please provide a list of 'types' if passing 'in_channels' as an integer");
    for (const std::string& type : a.get<std::vector<std::string>>("types"))
      widths.emplace_back(type, in.get<int64_t>());
  }
  return std::make_unique<HeteroDictLinear>(widths, a.get<int64_t>("out_channels"), gen, a.get<bool>("bias"), dtype);
}

std::unique_ptr<Module> HeteroDictLinear::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<HeteroDictLinear>(in_, out_, unused, bias_, dtype_));
}

std::map<std::string, Variable> HeteroDictLinear::forward(const std::map<std::string, Variable>& xDict) const {
  std::map<std::string, Variable> out;
  for (const auto& [type, x] : xDict) {
    auto it = lins_.find(type);
    GNN_CHECK_ARG(it != lins_.end(), "HeteroDictLinear: no Linear for type '", type, "'");
    out.emplace(type, it->second->forward(x));
  }
  return out;
}

}  // namespace gnn
