#include "gnn/nn/Activation.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "gnn/nn/PyGArgs.h"
#include "gnn/ops/Ops.h"

namespace gnn {

namespace {
// PyG's resolver compares names with case and underscores removed ("leaky_relu" == "LeakyReLU").
std::string normalized(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

const std::vector<std::string>& activationNames() {
  static const std::vector<std::string> names = {"relu", "elu", "leaky_relu", "gelu", "tanh", "sigmoid",
                                                 "softplus", "identity"};
  return names;
}

Activation activationFromPyG(const nlohmann::json& name, const nlohmann::json& kwargs) {
  if (name.is_null()) return [](const Variable& x) { return x; };
  if (!name.is_string()) throw std::invalid_argument("activation: expected a name, got " + name.dump());
  const std::string n = normalized(name.get<std::string>());
  if (n == "relu") {
    PyGArgs a(kwargs, "ReLU", {{"inplace", false}});
    return [](const Variable& x) { return relu(x); };
  }
  if (n == "elu") {
    PyGArgs a(kwargs, "ELU", {{"alpha", 1.0}, {"inplace", false}});
    const double alpha = a.get<double>("alpha");
    return [alpha](const Variable& x) { return elu(x, alpha); };
  }
  if (n == "leakyrelu") {
    PyGArgs a(kwargs, "LeakyReLU", {{"negative_slope", 0.01}, {"inplace", false}});
    const double slope = a.get<double>("negative_slope");
    return [slope](const Variable& x) { return leakyRelu(x, slope); };
  }
  if (n == "gelu") {
    PyGArgs a(kwargs, "GELU", {{"approximate", "none"}});
    if (a.get<std::string>("approximate") != "none") throw a.invalidValue("approximate", a.at("approximate"), "only 'none'");
    return [](const Variable& x) { return gelu(x); };
  }
  if (n == "tanh") {
    PyGArgs a(kwargs, "Tanh", nlohmann::json::object());
    return [](const Variable& x) { return tanh(x); };
  }
  if (n == "sigmoid") {
    PyGArgs a(kwargs, "Sigmoid", nlohmann::json::object());
    return [](const Variable& x) { return sigmoid(x); };
  }
  if (n == "softplus") {
    PyGArgs a(kwargs, "Softplus", {{"beta", 1.0}, {"threshold", 20.0}});
    const double beta = a.get<double>("beta"), threshold = a.get<double>("threshold");
    return [beta, threshold](const Variable& x) { return softplus(x, beta, threshold); };
  }
  if (n == "identity" || n == "none" || n == "linear") return [](const Variable& x) { return x; };
  std::string known;
  for (const auto& k : activationNames()) known += (known.empty() ? "" : ", ") + k;
  throw std::invalid_argument("activation '" + name.get<std::string>() + "' is not known (known: " + known + ")");
}

}  // namespace gnn
