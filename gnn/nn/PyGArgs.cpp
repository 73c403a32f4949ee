#include "gnn/nn/PyGArgs.h"

#include <stdexcept>

namespace gnn {

PyGArgs::PyGArgs(const nlohmann::json& args, std::string className, const nlohmann::json& defaults)
    : values_(defaults), class_(std::move(className)) {
  if (!args.is_null() && !args.is_object())
    throw std::invalid_argument(class_ + ": arguments must be a JSON object, got " + args.dump());
  if (args.is_null()) return;
  for (const auto& [k, v] : args.items()) {
    if (!defaults.contains(k)) {
      std::string known;
      for (const auto& [d, unused] : defaults.items()) known += (known.empty() ? "" : ", ") + d;
      throw std::invalid_argument(class_ + ": unknown argument '" + k + "' (known: " + known + ")");
    }
    values_[k] = v;
  }
}

const nlohmann::json& PyGArgs::at(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw std::logic_error(class_ + ": '" + key + "' is not among its declared arguments");
  return *it;
}

std::invalid_argument PyGArgs::invalidValue(const std::string& key, const nlohmann::json& value,
                                            const std::string& why) const {
  return std::invalid_argument(class_ + ": " + key + "=" + value.dump() + ": " + why);
}

}  // namespace gnn
